package graph

import (
	"cmp"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/cpath/cpath/trace"
)

// Build reads the run's logs and builds its PAG. Each rank's log is
// streamed chunk by chunk (ranks in parallel up to GOMAXPROCS), twice: a
// skim (decompression, little decoding) for the number of calls, the
// communicators and the clock, then a full reading straight into the PAG's
// arrays, so that memory holds the calls and what matching needs, never
// the records, and nothing is copied as it grows. A log damaged past its
// header (a corrupt or cut frame) is an error naming the file; a rank that
// died between frames (no trailer, a signal's) is analysed up to its last
// record, with a note.
func Build(run *Run) (*PAG, error) {
	P := len(run.Files)
	if P == 0 {
		return nil, fmt.Errorf("%s: no logs", run.Dir)
	}
	// First skim every log for its calls, communicators and clock, so that
	// the second reading can put each call where it belongs in the PAG's
	// arrays, times on the global clock, communicators in the run's table.
	rds := make([]*rankData, P)
	errs := make([]error, P)
	parallel(P, func(r int) { rds[r], errs[r] = skimRank(run.Files[r], r) })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	g := &PAG{Ranks: P, RunID: rds[0].hdr.RunID, RankStart: make([]int32, P+1),
		Exe: make([]string, P), LoadAddress: make([]uint64, P), Notes: append([]string(nil), run.Notes...)}
	for r, d := range rds {
		if d.trailer.Status != trace.EndFinalized {
			g.Notes = append(g.Notes, fmt.Sprintf("%s: rank %d ended by %v; analysed up to its last record",
				filepath.Base(run.Files[r]), d.hdr.Rank, d.trailer.Status))
		}
	}
	for r, d := range rds {
		if int64(g.RankStart[r])+int64(d.n) > 1<<30 {
			return nil, fmt.Errorf("%s: more than 2^30 calls in the run: too large for one analyzer process", run.Dir)
		}
		g.RankStart[r+1] = g.RankStart[r] + d.n
		g.Exe[r], g.LoadAddress[r] = d.hdr.Exe, d.hdr.LoadAddress
	}
	N := int(g.RankStart[P])
	if N == 0 {
		return nil, fmt.Errorf("%s: the logs hold no MPI calls", run.Dir)
	}
	gids := g.globalComms(rds)
	g.Op = make([]trace.Op, N)
	g.Thread = make([]uint16, N)
	g.Start = make([]int64, N)
	g.End = make([]int64, N)
	g.CallSite = make([]uint64, N)
	g.Comm = make([]int32, N)
	g.Bytes = make([]uint64, N)
	parallel(P, func(r int) { errs[r] = readRank(run.Files[r], r, g, rds[r], gids[r]) })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	firsts := 0
	multi, ordered := make([]bool, P), make([]bool, P)
	for r, d := range rds {
		firsts += int(d.firsts)
		multi[r], ordered[r] = d.firsts > 1, d.ordered
	}

	open := 0
	for _, d := range rds {
		open += d.open
	}
	if open > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("%d requests were never completed in the logs; their messages are not matched", open))
	}
	b := &builder{g: g, multi: multi, ordered: ordered}
	b.match(rds, gids)
	b.collectives(rds, gids)
	rds = nil
	b.dependencies()
	b.correctClocks()
	b.waitsAndEdges(N + (N - firsts))
	// Let what follows (the critical path) reuse the messages' memory.
	b = nil
	runtime.GC()
	return g, nil
}

// globalComms builds the run's communicator table from the ranks' tables,
// by name, and returns each rank's local-index → global-index map.
func (g *PAG) globalComms(rds []*rankData) [][]int32 {
	byName := map[string]int32{}
	gids := make([][]int32, len(rds))
	for r, d := range rds {
		gids[r] = make([]int32, len(d.comms))
		for i, c := range d.comms {
			if c.Name == "" {
				gids[r][i] = -1 // made by a call the logger does not wrap
				continue
			}
			id, ok := byName[c.Name]
			if !ok {
				id = int32(len(g.Comms))
				byName[c.Name] = id
				g.Comms = append(g.Comms, CommInfo{Name: c.Name, Members: c.Members})
			}
			gids[r][i] = id
		}
		d.comms = nil
	}
	return gids
}

func gid(gids []int32, local uint32) int32 {
	if int(local) < len(gids) {
		return gids[local]
	}
	return -1
}

// builder holds what Build needs between its steps.
type builder struct {
	g       *PAG
	multi   []bool // by rank: more than one thread
	ordered []bool // by rank: its calls are in time order, none overlapping (as read, before any correction)

	msgs []msgPair // matched messages, by key (communicator, source, destination, tag), then in order
	runs []msgRun  // the messages of each key

	coll    []dep   // collective dependencies, after the messages' in order
	dropped bitset  // dependencies left out as contradictions (bit set), nil if none
	best    []int32 // per call: the dependency it waited for, -1 for none
}

// threadWalk gives the calls' previous calls on their threads (-1 for
// the first), for calls taken in increasing order.
type threadWalk struct {
	g     *PAG
	multi []bool
	rank  int
	last  []int32 // by thread, on a rank with more than one
	used  []uint16
}

func (b *builder) walk() *threadWalk { return &threadWalk{g: b.g, multi: b.multi} }

func (w *threadWalk) prev(c int32) int32 {
	rs := w.g.RankStart
	if c >= rs[w.rank+1] {
		for c >= rs[w.rank+1] {
			w.rank++
		}
		for _, t := range w.used {
			w.last[t] = -1
		}
		w.used = w.used[:0]
	}
	if !w.multi[w.rank] {
		if c == rs[w.rank] {
			return -1
		}
		return c - 1
	}
	t := w.g.Thread[c]
	for int(t) >= len(w.last) {
		w.last = append(w.last, -1)
	}
	p := w.last[t]
	if p < 0 {
		w.used = append(w.used, t)
	}
	w.last[t] = c
	return p
}

// msgPair is a matched message: the calls that posted and completed the
// send and the receive.
type msgPair struct {
	sendPost, sendDone, recvPost, recvDone int32
	sync                                   bool // a synchronous send, or a rendezvous-sized one
}

// msgRun is the messages of one key: msgs[lo:hi], from rank src to rank
// dst; sync if any of the sends waits for its receive.
type msgRun struct {
	src, dst int32
	lo, hi   int32
	sync     bool
}

// keyRef is one rank's list of message ends with one key, in the run's
// terms.
type keyRef struct {
	comm, src, dst, tag int32
	recv                bool
	rank, key           int32
}

// endRef is a message end in global call numbers.
type endRef struct {
	post, done int32
	sync       bool
}

// match pairs sends and receives as MPI does: per communicator, source,
// destination and tag, in the order they were posted (the k-th send with the
// k-th receive); wildcard receives were resolved from their status.
func (b *builder) match(rds []*rankData, gids [][]int32) {
	g := b.g
	var refs []keyRef
	sends, recvs := 0, 0
	for r, d := range rds {
		for k := range d.keys {
			l := &d.keys[k]
			ref := keyRef{comm: gid(gids[r], l.comm), src: int32(r), dst: l.peer, tag: l.tag, recv: l.recv, rank: int32(r), key: int32(k)}
			if l.recv {
				ref.src, ref.dst = l.peer, int32(r)
				recvs += int(l.n)
			} else {
				sends += int(l.n)
			}
			if ref.comm < 0 {
				g.Unmatched += int(l.n)
				continue
			}
			refs = append(refs, ref)
		}
	}
	slices.SortFunc(refs, func(a, b keyRef) int {
		switch {
		case a.comm != b.comm:
			return cmp.Compare(a.comm, b.comm)
		case a.src != b.src:
			return cmp.Compare(a.src, b.src)
		case a.dst != b.dst:
			return cmp.Compare(a.dst, b.dst)
		case a.tag != b.tag:
			return cmp.Compare(a.tag, b.tag)
		case a.recv != b.recv:
			if !a.recv {
				return -1
			}
			return 1
		case a.rank != b.rank:
			return cmp.Compare(a.rank, b.rank)
		}
		return cmp.Compare(a.key, b.key)
	})
	b.msgs = make([]msgPair, 0, min(sends, recvs))
	var ss, rs []endRef
	for i := 0; i < len(refs); {
		j := i
		for j < len(refs) && refs[j].comm == refs[i].comm && refs[j].src == refs[i].src &&
			refs[j].dst == refs[i].dst && refs[j].tag == refs[i].tag {
			j++
		}
		ss, rs = ss[:0], rs[:0]
		k := i
		for ; k < j && !refs[k].recv; k++ {
		}
		ss = gatherEnds(ss, rds, g.RankStart, refs[i:k])
		rs = gatherEnds(rs, rds, g.RankStart, refs[k:j])
		i = j
		n := min(len(ss), len(rs))
		g.Unmatched += len(ss) + len(rs) - 2*n
		if n == 0 {
			continue
		}
		run := msgRun{src: refs[k].src, dst: refs[k].dst, lo: int32(len(b.msgs))}
		for m := 0; m < n; m++ {
			b.msgs = append(b.msgs, msgPair{ss[m].post, ss[m].done, rs[m].post, rs[m].done, ss[m].sync})
			run.sync = run.sync || ss[m].sync
		}
		run.hi = int32(len(b.msgs))
		b.runs = append(b.runs, run)
	}
	for _, d := range rds {
		d.keys, d.ends = nil, endStore{}
	}
	g.Messages = len(b.msgs)
	if g.Unmatched > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("%d sends or receives have no partner in the logs", g.Unmatched))
	}
}

// gatherEnds appends the ends of the lists refs (one key, one side) to
// dst in the order they were posted.
func gatherEnds(dst []endRef, rds []*rankData, rankStart []int32, refs []keyRef) []endRef {
	sorted := len(refs) <= 1
	for _, ref := range refs {
		d := rds[ref.rank]
		base := rankStart[ref.rank]
		l := &d.keys[ref.key]
		sorted = sorted && !l.unsorted
		for e := l.head; e >= 0; {
			x := d.ends.at(e)
			e = x.next
			dst = append(dst, endRef{x.post + base, x.done&^syncBit + base, x.done < 0})
		}
	}
	if !sorted {
		slices.SortStableFunc(dst, func(a, b endRef) int { return cmp.Compare(a.post, b.post) })
	}
	return dst
}

// collectives groups the members of each collective instance by
// communicator and sequence number, members in call order.
func (b *builder) collectives(rds []*rankData, gids [][]int32) {
	g := b.g
	total := 0
	for r, d := range rds {
		total += len(d.colls)
		for i := range d.colls {
			c := &d.colls[i]
			c.comm = gid(gids[r], uint32(c.comm))
			c.post += g.RankStart[r]
			c.done += g.RankStart[r]
		}
	}
	all := sortColls(rds, total, len(g.Comms))
	for _, d := range rds {
		d.colls = nil
	}
	partial, mixed := 0, 0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].comm == all[i].comm && all[j].seq == all[i].seq {
			j++
		}
		grp := all[i:j]
		i = j
		if grp[0].comm < 0 {
			continue
		}
		ok := true
		for _, m := range grp {
			if m.op != grp[0].op {
				ok = false
			}
		}
		if !ok {
			mixed++
			continue
		}
		if want := len(g.Comms[grp[0].comm].Members); len(grp) != want && !isIntercomm(g, grp[0].comm) {
			partial++
			if len(grp) < 2 {
				continue
			}
		}
		root := int32(-1)
		for _, m := range grp {
			if m.root >= 0 {
				root = m.root
			}
		}
		g.Colls = append(g.Colls, Collective{Op: grp[0].op, Comm: grp[0].comm, Seq: grp[0].seq, Root: root,
			First: int32(len(g.CollPost)), N: int32(len(grp))})
		for _, m := range grp {
			g.CollPost = append(g.CollPost, m.post)
			g.CollDone = append(g.CollDone, m.done)
		}
	}
	if partial > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("%d collective instances lack members in the logs (a rank ended early); analysed with the members present", partial))
	}
	if mixed > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("%d collective instances disagree on the operation across ranks; skipped", mixed))
	}
}

// sortColls returns the ranks' collective memberships sorted by
// communicator, sequence number and post: a counting sort by instance
// (sequence numbers run densely on each communicator), members of one
// instance by call.
func sortColls(rds []*rankData, total, ncomms int) []collEnd {
	cmpColl := func(a, b collEnd) int {
		if a.comm != b.comm {
			return cmp.Compare(a.comm, b.comm)
		}
		if a.seq != b.seq {
			return cmp.Compare(a.seq, b.seq)
		}
		return cmp.Compare(a.post, b.post)
	}
	// Sequence range per communicator (slot 0: none known, -1).
	lo := make([]uint32, ncomms+1)
	hi := make([]uint32, ncomms+1)
	seen := make([]bool, ncomms+1)
	for _, d := range rds {
		for _, c := range d.colls {
			k := c.comm + 1
			if !seen[k] {
				seen[k], lo[k], hi[k] = true, c.seq, c.seq
			}
			lo[k], hi[k] = min(lo[k], c.seq), max(hi[k], c.seq)
		}
	}
	base := make([]int, ncomms+2)
	for k := range lo {
		n := 0
		if seen[k] {
			n = int(hi[k]-lo[k]) + 1
		}
		base[k+1] = base[k] + n
	}
	all := make([]collEnd, total)
	if buckets := base[ncomms+1]; buckets > 4*total+1024 {
		i := 0
		for _, d := range rds {
			i += copy(all[i:], d.colls)
		}
		slices.SortFunc(all, cmpColl)
		return all
	}
	start := make([]int32, base[ncomms+1]+1)
	for _, d := range rds {
		for _, c := range d.colls {
			start[base[c.comm+1]+int(c.seq-lo[c.comm+1])+1]++
		}
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	for _, d := range rds {
		for _, c := range d.colls {
			k := base[c.comm+1] + int(c.seq-lo[c.comm+1])
			all[start[k]] = c
			start[k]++
		}
	}
	// Members of one instance came rank by rank; within a rank, in the
	// order they completed: put them in call order.
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].comm == all[i].comm && all[j].seq == all[i].seq {
			j++
		}
		if !slices.IsSortedFunc(all[i:j], cmpColl) {
			slices.SortStableFunc(all[i:j], cmpColl)
		}
		i = j
	}
	return all
}

func isIntercomm(g *PAG, comm int32) bool {
	n := g.Comms[comm].Name
	return len(n) > 0 && n[0] == 'I'
}
