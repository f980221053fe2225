package graph

// Collectives: each instance's members gathered at its coordinator, the
// dependencies among them, and the members' times after the clock
// correction.

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/trace"
)

// wireColl is a collective membership shipped to the instance's
// coordinator.
type wireColl struct {
	Comm       int32
	Seq        uint32
	Op         trace.Op
	Clean      bool
	InPlace    bool // MPI_IN_PLACE was passed: Bytes may not say what it moved
	_          [1]byte
	Root       int32
	Post, Done int32
	Start, End int64
	Bytes      uint64 // what the post call says the member sends or receives
}

// coordinator is the analyzer rank that decides collective instance
// (comm, seq): spread by a hash so that no rank coordinates them all.
func coordinator(comm int32, seq uint32, size int) int {
	h := uint32(comm)*0x9E3779B1 ^ seq*0x85EBCA77
	h ^= h >> 15
	return int(h % uint32(size))
}

// collectives sends every membership to its instance's coordinator,
// which groups the members into instances, finds the dependencies (sent
// to the owners of the completing calls) and keeps the instance for the
// imbalance analysis.
func (b *builder) collectives() error {
	got, err := b.shipMembers()
	if err != nil {
		return err
	}
	ms, err := b.coordinated(got)
	if err != nil {
		return err
	}
	ci := collInstances{b: b, deps: make([][]wireDep, b.c.Size()),
		cd: collDepper{ranks: b.p.Ranks, comms: b.p.Comms, rank: b.p.Rank}}
	for i := 0; i < len(ms); {
		j := i
		for j < len(ms) && ms[j].Comm == ms[i].Comm && ms[j].Seq == ms[i].Seq {
			j++
		}
		ci.add(ms[i:j])
		i = j
	}
	if err := b.shipDeps(ci.deps); err != nil {
		return err
	}
	return b.collectiveNotes(ci.partial, ci.mixed, ci.noData, ci.repeated)
}

// shipMembers sends the owned ranks' collective calls to their instances'
// coordinators, keeping in b.sentColls what went where (finalTimes).
func (b *builder) shipMembers() ([][]byte, error) {
	p, c := b.p, b.c
	out := make([][]wireColl, c.Size())
	b.sentColls = make([][]int32, c.Size())
	for i, d := range b.rankLogs {
		base := p.RankStart[p.RankLo+i]
		for _, m := range d.colls {
			comm := gid(b.gids[i], uint32(m.comm))
			if comm < 0 {
				continue
			}
			q := coordinator(comm, m.seq, c.Size())
			out[q] = append(out[q], wireColl{Comm: comm, Seq: m.seq, Op: m.op, Clean: m.clean, InPlace: m.inPlace, Root: m.root,
				Post: m.post + base, Done: m.done + base, Start: b.lg.Start[m.post+base-p.CallLo], End: b.lg.End[m.done+base-p.CallLo],
				Bytes: m.bytes})
			b.sentColls[q] = append(b.sentColls[q], m.post+base, m.done+base)
		}
		d.colls = nil
	}
	return mpix.Ship(c, out)
}

// collMember is a membership at its instance's coordinator.
type collMember struct {
	wireColl
	from, idx int32 // sending rank and position in its list
}

// coordinated returns the memberships shipped here, sorted by instance
// and, within one, by the members' posting calls; it sizes the PAG's
// member arrays for them and b.collIdx, where finalTimes finds them.
func (b *builder) coordinated(got [][]byte) ([]collMember, error) {
	p := b.p
	n := wireCount[wireColl](got)
	ms := make([]collMember, 0, n)
	p.CollPost, p.CollDone = slices.Grow(p.CollPost, n), slices.Grow(p.CollDone, n)
	p.PostStart, p.DoneEnd = slices.Grow(p.PostStart, n), slices.Grow(p.DoneEnd, n)
	p.PostBytes, b.doneStart = slices.Grow(p.PostBytes, n), slices.Grow(b.doneStart, n)
	b.collIdx = make([][]int32, len(got))
	for q, bs := range got {
		ws, err := mpix.FromBytes[wireColl](bs)
		if err != nil {
			return nil, err
		}
		b.collIdx[q] = make([]int32, len(ws))
		for k, w := range ws {
			ms = append(ms, collMember{w, int32(q), int32(k)})
			b.collIdx[q][k] = -1 // a member of an instance left out
		}
	}
	slices.SortFunc(ms, func(a, b collMember) int {
		return cmp.Or(cmp.Compare(a.Comm, b.Comm), cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Post, b.Post))
	})
	return ms, nil
}

// collInstances is a coordinator's pass over its instances.
type collInstances struct {
	b    *builder
	cd   collDepper
	deps [][]wireDep // by the owner of the completing call
	// the instances skipped or noted
	partial, mixed, noData, repeated int
	// the instance's members, reused from one to the next
	post, done []int32
	start      []int64
	bytes      []uint64
}

// skip says whether instance grp is left out, counting why: its members
// disagree on the operation, or a rank takes part twice.
func (ci *collInstances) skip(grp []collMember) bool {
	p := ci.b.p
	for _, m := range grp {
		// MPI_Init on some ranks and MPI_Init_thread on others is one
		// start-up.
		if !(m.Op == grp[0].Op || m.Op.IsWorldBarrier() && grp[0].Op.IsWorldBarrier()) {
			ci.mixed++
			return true
		}
	}
	// A rank's calls are numbered together, so a rank twice in an
	// instance (one sequence number on two of its calls) is two neighbours
	// in grp's order.
	for k := 1; k < len(grp); k++ {
		if p.Rank(grp[k].Post) == p.Rank(grp[k-1].Post) {
			ci.repeated++
			return true
		}
	}
	return false
}

// add keeps instance grp (the members of one communicator and sequence
// number) in the PAG, with its dependencies, and notes it as a candidate
// synchronisation point.
func (ci *collInstances) add(grp []collMember) {
	b, p := ci.b, ci.b.p
	if ci.skip(grp) {
		return
	}
	inter := p.Comms[grp[0].Comm].Inter
	if want := len(p.Comms[grp[0].Comm].Members); len(grp) != want && !inter {
		ci.partial++
		if len(grp) < 2 {
			return
		}
	}
	root := int32(-1)
	for _, m := range grp {
		if m.Root >= 0 {
			root = m.Root
		}
	}
	col := Collective{Op: grp[0].Op, Comm: grp[0].Comm, Seq: grp[0].Seq, Root: root,
		First: int32(len(p.CollPost)), N: int32(len(grp)), NoData: grp[0].Op.Flow().MovesData()}
	for _, m := range grp {
		col.NoData = col.NoData && m.Bytes == 0 && !(m.InPlace && m.Op.InPlaceLogsNoBytes())
	}
	if col.NoData {
		ci.noData++
	}
	ci.post, ci.done, ci.start, ci.bytes = ci.post[:0], ci.done[:0], ci.start[:0], ci.bytes[:0]
	for _, m := range grp {
		ci.post, ci.done, ci.start, ci.bytes = append(ci.post, m.Post), append(ci.done, m.Done), append(ci.start, m.Start), append(ci.bytes, m.Bytes)
		b.collIdx[m.from][m.idx] = int32(len(p.CollPost))
		p.CollPost = append(p.CollPost, m.Post)
		p.CollDone = append(p.CollDone, m.Done)
		p.PostStart = append(p.PostStart, m.Start)
		p.DoneEnd = append(p.DoneEnd, m.End)
		p.PostBytes = append(p.PostBytes, m.Bytes)
		b.doneStart = append(b.doneStart, 0) // known once the times are final
	}
	p.Colls = append(p.Colls, col)
	if col.NoData {
		return
	}
	rule := RuleNone
	if observedOnly(col.Op) {
		rule = RuleObserved
	}
	for _, d := range ci.cd.deps(&col, ci.post, ci.start, ci.bytes) {
		q := p.Owner(ci.done[d.member])
		ci.deps[q] = append(ci.deps[q], wireDep{Done: ci.done[d.member], Cause: ci.post[d.cause], Kind: wireKind(d.kind, rule), Comm: col.Comm,
			Start: ci.start[d.cause]})
	}
	// A candidate global synchronisation point (paper §4.4): every rank, a
	// blocking collective that synchronises (everyone needs everyone), no
	// request pending on any member; the clock condition on its edges is
	// checked once the times are final (syncPoints).
	if col.Op.Flow().Synchronising() && len(grp) == p.Ranks && !inter {
		clean := true
		for _, m := range grp {
			clean = clean && m.Clean && m.Post == m.Done
		}
		if clean {
			b.syncCand = append(b.syncCand, int32(len(p.Colls)-1))
		}
	}
}

// collectiveNotes sums the instances skipped or noted over the
// coordinators and notes them.
func (b *builder) collectiveNotes(partial, mixed, noData, repeated int) error {
	p := b.p
	counts := []int64{int64(partial), int64(mixed), int64(noData), int64(repeated)}
	if err := b.c.Allreduce(counts, mpix.Sum); err != nil {
		return err
	}
	if counts[2] > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d collective instances moved no data (every member passed 0 bytes): they order nothing between the ranks (MPIs return from them at once), so they have no waits and are not in calls[]", counts[2]))
	}
	if counts[0] > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d collective instances lack members in the logs (a rank ended early); analysed with the members present", counts[0]))
	}
	if counts[1] > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d collective instances disagree on the operation across ranks; skipped", counts[1]))
	}
	if counts[3] > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d collective instances have a rank take part twice (two of its calls with one communicator and sequence number: collectives on one communicator from several threads at once, which MPI forbids, or a damaged log); skipped", counts[3]))
	}
	return nil
}

// observedOnly reports whether the dependencies among the members of a
// collective of op are read from the times (RuleObserved), not imposed:
// where the log cannot say which members a member needed, or in which of
// its calls it synchronised. Counts per pair (MPI_Alltoallv…): the log
// keeps their sum. Collective file operations: the MPI-IO layer decides
// whether and where they synchronise (Open MPI's ompio may write each
// process's part on its own, and does the I/O of MPI_File_iwrite_all or
// MPI_File_write_all_begin in the posting call): in the test programs
// members ended up to 0.6 ms before a later member began, and had been
// moved that much.
func observedOnly(op trace.Op) bool {
	return op.PairCounts() || op.IsIO()
}

// finalTimes sends the coordinators their members' times after the clock
// correction, for the imbalance analysis and the synchronisation points.
func (b *builder) finalTimes() error {
	p, c := b.p, b.c
	out := make([][]byte, c.Size())
	for q, ids := range b.sentColls {
		ts := make([]int64, 0, len(ids))
		for k := 0; k < len(ids); k += 2 {
			ts = append(ts, p.Start[ids[k]-p.CallLo], b.waitFrom(ids[k+1]-p.CallLo), p.End[ids[k+1]-p.CallLo])
		}
		out[q] = mpix.Bytes(ts)
	}
	got, err := c.Alltoallv(out)
	if err != nil {
		return err
	}
	times, err := mpix.Answers[int64](got, func(q int) int { return 3 * len(b.collIdx[q]) }, "collective exchange")
	if err != nil {
		return err
	}
	for q, ts := range times {
		for k, m := range b.collIdx[q] {
			if m >= 0 {
				p.PostStart[m], b.doneStart[m], p.DoneEnd[m] = ts[3*k], ts[3*k+1], ts[3*k+2]
			}
		}
	}
	b.sentColls, b.collIdx = nil, nil
	return nil
}
