package graph

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"time"
	"unsafe"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/par"
	"github.com/cpath/cpath/trace"
)

// assignRanks splits the logged ranks into size contiguous blocks of
// about equal log bytes (the work of reading and building grows with
// them), every block but possibly trailing ones non-empty.
func assignRanks(files []string, size int) []int {
	sizes := make([]int64, len(files))
	total := int64(0)
	for r, f := range files {
		if st, err := os.Stat(f); err == nil {
			sizes[r] = st.Size()
		}
		sizes[r]++ // no rank weighs nothing
		total += sizes[r]
	}
	b := make([]int, size+1)
	acc, p := int64(0), 1
	for r := range files {
		// Rank r goes to the block its middle byte falls in.
		mid := acc + sizes[r]/2
		for p < size && mid >= total*int64(p)/int64(size) {
			b[p] = r
			p++
		}
		acc += sizes[r]
	}
	for ; p <= size; p++ {
		b[p] = len(files)
	}
	// Keep blocks non-empty while ranks remain, so that P up to the number
	// of logged ranks uses every analyzer rank.
	for p := 1; p < size; p++ {
		if b[p] <= b[p-1] && b[p-1] < len(files) {
			b[p] = b[p-1] + 1
		}
	}
	for p := size - 1; p >= 1; p-- {
		if b[p] > b[p+1] {
			b[p] = b[p+1]
		}
	}
	return b
}

// rankSummary is what every analyzer rank learns of each logged rank from
// its owner after reading it.
type rankSummary struct {
	Comms   []trace.Comm
	Note    string
	Modules []trace.Module // all its log lists: the header's and its module chunks'
	// Unwrapped are its log's counts of calls not recorded.
	Unwrapped []trace.UnwrappedCall
	// NotMapped is what its trace held that the model has no place for
	// (a trace in another format: trace.Header.NotMapped).
	NotMapped []trace.NotMapped
}

// Build builds this analyzer rank's part of the run's PAG, together with
// the other ranks of c (one process: mpix.Single): each reads only the logs
// of its logged ranks (blocks of about equal log bytes), and what matching,
// the clock correction and the edges need of other ranks' calls is
// exchanged with MPI. A log damaged past its header is an error naming the
// file; a rank that died between frames is analysed up to its last record,
// with a note. Any rank's error ends every rank's Build with the same
// message.
func Build(c mpix.Comm, run *Run) (*PAG, error) {
	b, err := readCalls(c, run)
	if err != nil {
		return nil, err
	}
	p, me := b.p, c.Rank()
	steps := []struct {
		name string
		run  func() error
	}{{"match", b.match}, {"pscw", b.pscwDeps}, {"collectives", b.collectives}, {"clocks", b.correctClocks},
		{"waits", b.waits}, {"late-complete", b.lateComplete}, {"final-times", b.finalTimes}, {"layout", b.layout},
		{"edges", b.edges}, {"sync-points", b.syncPoints}}
	for _, step := range steps {
		if err := step.run(); err != nil {
			return nil, err
		}
		stageTimes.Mark(me, step.name)
	}
	return p, nil
}

// ReadCalls reads this analyzer rank's part of the run's calls, as Build
// does, and builds no graph: no messages matched, no clock correction (the
// times are the logs' synchronised clocks), no edges, waits or
// collectives. It is what the topological heuristics need (the calls'
// times and their threads' order, ThreadPrev), at a fraction of Build's
// time and memory. A log cut short is read up to its cut, with a note
// (Run.callsOnly): with nothing to match, the calls missing after it leave
// no message unmatched, and the other ranks' calls are analysed whole.
func ReadCalls(c mpix.Comm, run *Run) (*PAG, error) {
	run.callsOnly = true
	b, err := readCalls(c, run)
	if err != nil {
		return nil, err
	}
	p, lg := b.p, b.lg
	p.CallsOnly = true
	// The run's span, and each logged rank's last end and whether its log
	// was cut, in one reduction: t[0] the earliest start, negated so that
	// all reduce by Max; then by rank its last end, then 1 for a cut log.
	R := p.Ranks
	t := make([]int64, 1+2*R)
	t[0] = -1 << 62
	for r := 1; r <= R; r++ {
		t[r] = -1 << 62
	}
	for i, d := range b.rankLogs {
		r := p.RankLo + i
		for k := lg.rankStart[i]; k < lg.rankStart[i+1]; k++ {
			t[0], t[1+r] = max(t[0], -lg.Start[k]), max(t[1+r], lg.End[k])
		}
		if d.cut != nil {
			t[1+R+r] = 1
		}
	}
	if err := c.Allreduce(t, mpix.Max); err != nil {
		return nil, err
	}
	p.T0, p.T1 = -t[0], slices.Max(t[1:1+R])
	for r := range R {
		if t[1+R+r] == 1 && t[1+r] > -1<<62 {
			p.Notes = append(p.Notes, fmt.Sprintf("rank %d's calls end %.6f s into the run, %.6f s before its end: the path after that runs on the other ranks, "+
				"and its last calls, which the cut took, may have bounded the run", r, float64(t[1+r]-p.T0)/1e9, float64(p.T1-t[1+r])/1e9))
		}
	}
	w := lg.walk()
	p.prev = make([]int32, len(lg.Start))
	for k := range p.prev {
		if p.prev[k] = w.prev(int32(k)); p.prev[k] >= 0 {
			p.prev[k] += p.CallLo
		}
	}
	return p, nil
}

// readCalls reads the owned logs into their calls and what the run's
// ranks learn of each other (summaries, communicators, call sites): the
// part of Build that needs no matching.
func readCalls(c mpix.Comm, run *Run) (*builder, error) {
	R := len(run.Files)
	if R == 0 {
		return nil, fmt.Errorf("%s: no logs", run.Dir)
	}
	size, me := c.Size(), c.Rank()
	p := &PAG{Ranks: R, RunID: run.Headers[0].RunID, PartRanks: assignRanks(run.Files, size), Part: me,
		Exe: make([]string, R), LoadAddress: make([]uint64, R), Notes: append([]string(nil), run.Notes...)}
	p.RankLo, p.RankHi = p.PartRanks[me], p.PartRanks[me+1]
	for r := range run.Headers {
		p.Exe[r], p.LoadAddress[r] = run.Headers[r].Exe, run.Headers[r].LoadAddress
	}
	own := p.RankHi - p.RankLo

	// How many calls each rank made, so that every analyzer rank numbers
	// them alike before reading them: from the trailers (Load read them
	// all, so every rank knows the same), else by reading the log through
	// once (a rank that died, or ended by a signal mid-call).
	stageTimes.Mark(me, "")
	counts := make([]int64, R)
	fromTrailer := make([]bool, R)
	for r := range counts {
		counts[r] = run.calls(r)
		fromTrailer[r] = counts[r] >= 0
	}
	var lg *rankCalls
	var rankLogs []*rankData
	for {
		var err error
		if lg, rankLogs, err = p.readOwned(c, run, counts); err != nil {
			return nil, err
		}
		// A count a trailer got wrong (a logger's error: the log itself
		// reads whole) is replaced by the calls read, and the logs are
		// placed and read again; a log counted by reading that then
		// holds other calls changed meanwhile.
		wrong := make([]int64, R)
		for r := range wrong {
			wrong[r] = -1
		}
		errs := make([]error, own)
		for i, d := range rankLogs {
			r := p.RankLo + i
			switch {
			case int64(d.n) == counts[r]:
			case fromTrailer[r]:
				wrong[r] = int64(d.n)
			default:
				errs[i] = fmt.Errorf("%s: changed while being read (%d calls, then %d)", run.Files[r], counts[r], d.n)
			}
		}
		if err := mpix.Agree(c, firstErr(errs)); err != nil {
			return nil, err
		}
		if err := c.Allreduce(wrong, mpix.Max); err != nil { // the others' are -1
			return nil, err
		}
		again := false
		for r, n := range wrong {
			if n >= 0 {
				p.Notes = append(p.Notes, fmt.Sprintf("%s: its trailer counts %d calls, but the log holds %d; read again with that count",
					filepath.Base(run.Files[r]), counts[r], n))
				counts[r], fromTrailer[r], again = n, false, true
			}
		}
		if !again {
			break
		}
	}

	// What every analyzer rank learns of each logged rank from its owner.
	sums, err := p.shareSummaries(c, run, rankLogs)
	if err != nil {
		return nil, err
	}
	p.Modules = make([][]trace.Module, R)
	uw := make([][]trace.UnwrappedCall, R)
	for r := range sums {
		p.Modules[r], uw[r] = sums[r].Modules, sums[r].Unwrapped
		if sums[r].Note != "" {
			p.Notes = append(p.Notes, sums[r].Note)
		}
	}
	p.Unwrapped = MergeUnwrapped(uw)
	if n := UnwrappedNote(p.Unwrapped); n != "" {
		p.Notes = append(p.Notes, n)
	}
	nm := make([][]trace.NotMapped, R)
	for r := range sums {
		nm[r] = sums[r].NotMapped
	}
	if n := NotMappedNote(MergeNotMapped(nm)); n != "" {
		p.Notes = append(p.Notes, n)
	}

	// The communicator table, built by every rank from all ranks' tables
	// in rank order, so that the indices agree; then the calls in the
	// run's terms.
	all := make([]*rankData, R)
	for r := range all {
		all[r] = &rankData{comms: sums[r].Comms}
	}
	var gidsAll [][]int32
	p.Comms, gidsAll = globalComms(all)
	par.Do(own, func(i int) { rankLogs[i].place(lg, i, gidsAll[p.RankLo+i]) })
	stageTimes.Mark(me, "place")
	joinSites(lg, rankLogs)
	p.Calls, p.fileDone, p.waitUnknown = lg.Calls, lg.fileDone, lg.waitUnknown

	b := &builder{p: p, c: c, lg: lg, rankLogs: rankLogs, gids: gidsAll[p.RankLo:p.RankHi], threads: make([]bool, R)}
	for r := range b.threads {
		b.threads[r] = run.Headers[r].Threads
	}
	open := 0
	for i, d := range rankLogs {
		lg.multi[i], lg.ordered[i] = d.firsts > 1, d.ordered
		open += d.open
	}
	opens := []int64{int64(open)}
	if err := c.Allreduce(opens, mpix.Sum); err != nil {
		return nil, err
	}
	if opens[0] > 0 && !run.callsOnly {
		p.Notes = append(p.Notes, fmt.Sprintf("%d receive or collective requests were freed or left pending, never completed in the logs; they are not matched", opens[0]))
	}
	return b, nil
}

// readOwned places every rank's calls in one table by counts and reads
// the owned logs into their places. A count of -1 (a log its trailer did
// not count) is filled in: counted by its owner, by reading the log.
// Every rank of c takes part, with the same counts.
func (p *PAG) readOwned(c mpix.Comm, run *Run, counts []int64) (*rankCalls, []*rankData, error) {
	own := p.RankHi - p.RankLo
	unknown := slices.Contains(counts, -1) // the same on every rank: each read every trailer
	errs := make([]error, own)
	if unknown {
		par.Do(own, func(i int) {
			if r := p.RankLo + i; counts[r] < 0 {
				counts[r], errs[i] = countCalls(run, r)
			}
		})
		if err := mpix.Agree(c, firstErr(errs)); err != nil {
			return nil, nil, err
		}
		if err := c.Allreduce(counts, mpix.Max); err != nil { // the others' are -1
			return nil, nil, err
		}
	}
	stageTimes.Mark(p.Part, "count")
	R := len(counts)
	p.RankStart = make([]int32, R+1)
	for r, n := range counts {
		if int64(p.RankStart[r])+n > 1<<30 {
			return nil, nil, fmt.Errorf("%s: more than 2^30 calls in the run: too large for the analyzer", run.Dir)
		}
		p.RankStart[r+1] = p.RankStart[r] + int32(n)
	}
	if p.RankStart[R] == 0 {
		return nil, nil, fmt.Errorf("%s: the logs hold no MPI calls", run.Dir)
	}
	p.CallLo, p.CallHi = p.RankStart[p.RankLo], p.RankStart[p.RankHi]

	// The owned calls, numbered from 0 (the numbers the extractor and
	// the clock shifter work with).
	lg := &rankCalls{ranks: own, rankStart: make([]int32, own+1), Calls: makeCalls(int(p.CallHi - p.CallLo)),
		multi: make([]bool, own), ordered: make([]bool, own), unproductive: newBitset(int(p.CallHi - p.CallLo)),
		fileDone: newBitset(int(p.CallHi - p.CallLo)), waitUnknown: newBitset(int(p.CallHi - p.CallLo))}
	for i := 0; i <= own; i++ {
		lg.rankStart[i] = p.RankStart[p.RankLo+i] - p.CallLo
	}
	rankLogs := make([]*rankData, own)
	par.Do(own, func(i int) { rankLogs[i], errs[i] = readRank(run, p.RankLo+i, i, lg) })
	stageTimes.Mark(p.Part, "read")
	if err := mpix.Agree(c, firstErr(errs)); err != nil {
		return nil, nil, err
	}
	return lg, rankLogs, nil
}

func firstErr(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// builder holds what BuildPart needs between its steps.
type builder struct {
	p        *PAG
	c        mpix.Comm
	lg       *rankCalls // the owned calls with local numbers
	rankLogs []*rankData
	gids     [][]int32 // by owned rank: local communicator index → global
	// threads is, by logged rank, whether its threads called MPI at once
	// (trace.Header.Threads): its calls' order in the log is then not the
	// order it posted messages in (postOrder).
	threads []bool
	// detaches are the owned MPI_Buffer_detach calls (detachAfter), nil
	// until asked for.
	detaches []int32

	msgs []partMsg // the messages into the owned ranks, by key then order
	deps []dep     // the dependencies of the owned calls
	// For the clock correction: the remote causes this rank reads, by
	// owner (asked[q] the calls asked of q, slot[q] where their starts
	// go in cache), and what the others asked of this rank.
	cache  []int64
	wanted [][]int32 // by asking rank: local call ids whose starts it wants

	// The collective memberships this rank sent out, by coordinator, to
	// send their final times in the same order.
	sentColls [][]int32 // (post, done) pairs, local ids
	collIdx   [][]int32 // by sending rank: member index in p.CollPost of each received membership
	syncCand  []int32   // the instances in p.Colls that may be global synchronisation points
	t         *shifter  // the clock correction's, once it has moved a call

	// doneStart is, by member of a coordinated instance, when its
	// completing call began to wait (waitFrom): its start, or that of the
	// unproductive polls that led to it. A hub's edge to the completion
	// weighs what follows the later of that and the hub: from the
	// completing MPI_Test's own start, a last member arriving during the
	// polls (waiting, so weightless) lost the polls after it from every
	// path, and the path fell short of the run (MPI_Ibarrier polled with
	// MPI_Test: 13-96 µs).
	doneStart []int64
	lastCall  int32           // the call whose end is the run's last event
	collHub   []int32         // by coordinated instance: its first hub, -1 for none
	hubTime   map[int32]int64 // by hub of a coordinated instance: when its last member started
	hubbed    bitset          // by owned call: its call edge is replaced by a hub's edge
	runStart  map[int32]int64 // by owned call completing after unproductive polls: the polls' start
	runOf     map[int32]int32 // by owned unproductive poll: the call its run led to
	lateOps   []lateOp        // by owned MPI_Win_wait/test: the origins' last transfers to its rank (graph/pscw.go)
	// eagerLimit is the largest eager limit any rank's log records
	// (runEagerLimit): a send above it was a rendezvous.
	eagerLimit uint64
}

// defaultEagerLimit is the eager limit of a run whose logs record none
// (a foreign trace, an MPI without them): Open MPI's TCP limit, MPICH's
// is about twice it.
const defaultEagerLimit = 64 << 10

// runEagerLimit sets b.eagerLimit, the same on every rank: the largest
// of the logs' eager limits, since a send below it may have gone eagerly
// on some transport, or defaultEagerLimit.
func (b *builder) runEagerLimit() error {
	x := int64(-1)
	for _, d := range b.rankLogs {
		for _, v := range d.hdr.EagerLimits {
			x = max(x, v.Value)
		}
	}
	x, err := mpix.AllreduceOne(b.c, x, mpix.Max)
	if err != nil {
		return err
	}
	if x < 0 {
		x = defaultEagerLimit
	}
	b.eagerLimit = uint64(x)
	return nil
}

// partMsg is a matched message into an owned rank (40 bytes: 8 M of them
// on the 16 M-call halo log).
type partMsg struct {
	sendPost, sendDone, recvPost, recvDone int32
	comm                                   int32
	slot                                   int32 // sendPost's start: index in cache if another rank owns it, else -1
	// heldBy is the receiver's call the send was held until, by the
	// progress rule (heldBy), -1 for none.
	heldBy int32
	sync   bool // a synchronous send: it waited for the receive's post
	// partitioned: a partitioned transfer (MPI_Psend_init/MPI_Precv_init),
	// matched by order of initialisation; its partitions' dependencies
	// follow the messages' in deps (partitionDeps).
	partitioned bool
	// rendezvous: a standard send (not partitioned) above the run's
	// eager limit whose receive was posted after it started, and which
	// completed after that post: it waited for the post, as a synchronous
	// send does (a Late Receiver by RuleSynchronous, which the POP ideal
	// run keeps).
	rendezvous bool
	// drained: a buffered (or ready) send above the eager limit whose
	// receive was posted after it started: the rank's next
	// MPI_Buffer_detach, which returns once the buffered messages are
	// delivered, waited for that post (a Late Receiver by
	// RuleSynchronous).
	drained bool
	bytes   uint64 // what the send logged
}

// waitsForPost says whether the send waited for its receive's post: a
// Late Receiver dependency on it.
func (m *partMsg) waitsForPost() bool { return m.sync || m.rendezvous }

// heldApart says whether the send was held until a receiver's call other
// than the one a synchronous send waits for anyway (match clears heldBy
// then): a Late Receiver dependency of its own.
func (m *partMsg) heldApart() bool { return m.heldBy >= 0 }

// dep is a dependency of an owned call (done, local id) on a call of any
// rank (cause, global id): done cannot complete before cause started.
//
// It is 24 bytes: a 16 M-call log has 12 M of them.
type dep struct {
	done  int32 // local
	cause int32 // global
	slot  int32 // cache index of cause's start if another rank owns it, else -1
	comm  int32
	// part marks partitioned transfers: -1 a transfer as a whole (its Late
	// Sender on the send's start, its Late Receiver), j+1 receive
	// partition j's completion on one MPI_Pready* it needed; 0 others.
	part    int32
	kind    WaitKind
	rule    WaitRule // of a Late Receiver: why the send waited for its receiver
	dropped bool     // still violated after the correction: a contradiction, left out
	dup     bool     // the same cause and completion as an earlier partition's: no edge of its own
}

// wireEnd is a send shipped to its receiver's owner for matching.
type wireEnd struct {
	Comm, Src, Dst, Tag int32
	Post, Done          int32
	Mode                int32  // the send's mode bits (sendMode)
	Init                int32  // partitioned: msgKey.init, 0 for others
	Start               int64  // when the post call started
	DoneEnd             int64  // when the completing call ended
	Bytes               uint64 // a send's bytes
}

func (b *builder) local(c int32) bool { return c >= b.p.CallLo && c < b.p.CallHi }

// sendOrder orders two sends of one rank by when they were posted: as
// postOrder does, by their starts where the rank's threads called MPI at
// once.
func (b *builder) sendOrder(s, t *wireEnd) int {
	if b.threads[s.Src] {
		if c := cmp.Compare(s.Start, t.Start); c != 0 {
			return c
		}
	}
	return cmp.Compare(s.Post, t.Post)
}

// addCause gives a cause another rank owns a slot in the cache of cause
// starts (an owned cause's start is read from the calls: -1).
func (b *builder) addCause(cause int32, start int64) int32 {
	if b.local(cause) {
		return -1
	}
	b.cache = append(b.cache, start)
	return int32(len(b.cache) - 1)
}

// match pairs the sends into the owned ranks (shipped here by their
// owners) with the owned receives, as Build's match does.
func (b *builder) match() error {
	p, c := b.p, b.c
	if err := b.runEagerLimit(); err != nil {
		return err
	}
	p.RMATraffic = nil
	for i, d := range b.rankLogs {
		for target, t := range d.rmaTo {
			t.Origin, t.Target = int32(p.RankLo+i), target
			p.RMATraffic = append(p.RMATraffic, t)
		}
	}
	slices.SortFunc(p.RMATraffic, func(a, b RMAPair) int {
		return cmp.Or(cmp.Compare(a.Origin, b.Origin), cmp.Compare(a.Target, b.Target))
	})
	// Sized first: these arrays hold every message end of the owned
	// ranks, each owned rank's at places of its own, so that the ranks'
	// ends are gathered in parallel: its receives (recvAt) and, for
	// each analyzer rank q, its sends to q's ranks (sendAt), after the
	// owned ranks' before it.
	P, own := c.Size(), len(b.rankLogs)
	nsend := make([]int, P)
	recvAt := make([]int, own+1)
	sendAt := make([][]int, own)
	for i, d := range b.rankLogs {
		sendAt[i] = make([]int, P)
		recvAt[i+1] = recvAt[i]
		for k := range d.keys {
			l := &d.keys[k]
			if gid(b.gids[i], l.comm) < 0 {
				continue // unmatched
			}
			if l.recv {
				recvAt[i+1] += int(l.n)
			} else if l.peer >= 0 && int(l.peer) < p.Ranks {
				sendAt[i][p.ownerOfRank(int(l.peer))] += int(l.n)
			}
		}
	}
	from := make([]int, P+1) // where each analyzer rank's sends start in out
	for q := 0; q < P; q++ {
		for i := range sendAt {
			nsend[q] += sendAt[i][q]
		}
		from[q+1] = from[q] + nsend[q]
	}
	for q := 0; q < P; q++ { // counts to places
		at := from[q]
		for i := range sendAt {
			at, sendAt[i][q] = at+sendAt[i][q], at
		}
	}
	out := make([]wireEnd, from[P])
	// The owned receives stay here, as runs of one key each (a key's ends
	// are one rank's list, in posting order).
	recvs := make([]recvEnd, recvAt[own])
	runsOf := make([][]endRun, own)
	unmatchedOf := make([]int, own)
	miscount := make([]bool, own)
	par.Do(own, func(i int) {
		d := b.rankLogs[i]
		r := p.RankLo + i
		base := p.RankStart[r]
		at, rat := slices.Clone(sendAt[i]), recvAt[i]
		limit := func(q int) int { // where the next owned rank's sends to q start
			if i+1 < own {
				return sendAt[i+1][q]
			}
			return from[q+1]
		}
		var ends []msgEnd
		for k := range d.keys {
			l := &d.keys[k]
			comm := gid(b.gids[i], l.comm)
			if comm < 0 {
				unmatchedOf[i] += int(l.n)
				continue
			}
			// A key's ends in posting order: its list as it is, or, when
			// the ends were not added in that order, sorted in a copy
			// (copying every key's cost 0.4 GB of allocation on the
			// 16 M-call halo log).
			each := func(f func(x *msgEnd)) {
				for e := l.head; e >= 0; {
					x := d.ends.at(e)
					e = x.next
					f(x)
				}
			}
			if l.unsorted {
				ends = ends[:0]
				each(func(x *msgEnd) { ends = append(ends, *x) })
				st := p.Start[base-p.CallLo:]
				slices.SortStableFunc(ends, func(a, b msgEnd) int { return postOrder(d.hdr.Threads, st, a.post, b.post) })
				each = func(f func(x *msgEnd)) {
					for k := range ends {
						f(&ends[k])
					}
				}
			}
			if l.recv {
				if rat+int(l.n) > recvAt[i+1] {
					miscount[i] = true
					continue
				}
				run := endRun{comm: comm, src: l.peer, dst: int32(r), tag: l.tag, init: l.init, lo: int32(rat)}
				each(func(x *msgEnd) {
					if rat < recvAt[i+1] { // a list longer than its count is reported below
						recvs[rat] = recvEnd{post: x.post + base, done: x.done&^modeMask + base}
					}
					rat++
				})
				run.hi = int32(rat)
				runsOf[i] = append(runsOf[i], run)
				continue
			}
			if l.peer < 0 || int(l.peer) >= p.Ranks {
				unmatchedOf[i] += int(l.n)
				continue
			}
			q := p.ownerOfRank(int(l.peer))
			if at[q]+int(l.n) > limit(q) {
				miscount[i] = true
				continue
			}
			each(func(x *msgEnd) {
				w := wireEnd{Comm: comm, Src: int32(r), Dst: l.peer, Tag: l.tag, Init: l.init, Post: x.post + base,
					Done: x.done&^modeMask + base, Mode: x.done & modeMask, Bytes: x.bytes}
				w.Start, w.DoneEnd = p.Start[w.Post-p.CallLo], p.End[w.Done-p.CallLo]
				if at[q] < limit(q) { // as the receives'
					out[at[q]] = w
				}
				at[q]++
			})
		}
		miscount[i] = miscount[i] || rat != recvAt[i+1]
		for q := range at {
			miscount[i] = miscount[i] || at[q] != limit(q)
		}
		d.keys, d.ends = nil, endStore{}
	})
	unmatched := 0
	var recvRuns []endRun
	var bad error
	for i := range b.rankLogs {
		unmatched += unmatchedOf[i]
		recvRuns = append(recvRuns, runsOf[i]...)
		if miscount[i] && bad == nil { // the keys' counts and lists disagree: a bug, not a bad log
			bad = fmt.Errorf("graph: the message ends of rank %d do not add up to their keys' counts", p.RankLo+i)
		}
	}
	if err := mpix.Agree(c, bad); err != nil {
		return err
	}
	sends, _, err := mpix.ShipFlat(c, out, nsend)
	if err != nil {
		return err
	}
	out = nil
	// The shipped sends come as runs of one key too (each owner appended
	// a key's ends together, in posting order).
	var sendRuns []endRun
	for i := 0; i < len(sends); {
		j := i + 1
		for j < len(sends) && sameKeyEnds(&sends[j-1], &sends[j]) && b.sendOrder(&sends[j-1], &sends[j]) < 0 {
			j++
		}
		s := &sends[i]
		sendRuns = append(sendRuns, endRun{comm: s.Comm, src: s.Src, dst: s.Dst, tag: s.Tag, init: s.Init, lo: int32(i), hi: int32(j)})
		i = j
	}
	// Pair the keys' runs in key order (the order of the messages in the
	// PAG), and within a key the sends and receives in posting order:
	// sorting the few runs, not the many ends.
	sendOrder := func(x, y int32) int { return b.sendOrder(&sends[x], &sends[y]) }
	recvOrder := func(x, y int32) int { // one rank's receives
		r := rankOf(p.RankStart, p.Ranks, recvs[x].post)
		return postOrder(b.threads[r], p.Start, recvs[x].post-p.CallLo, recvs[y].post-p.CallLo)
	}
	sortEndRuns(sendRuns, sendOrder)
	sortEndRuns(recvRuns, recvOrder)
	// The keys' pairs first (a walk of the few runs), each with its place
	// in msgs; then the messages themselves, in parallel: the pairing of
	// 8 M messages took a third of a second in one loop.
	type pairTask struct {
		sends, recvs []int32 // a key's ends in posting order; nil: one run's, from lo on
		slo, rlo     int32
		m0, m1       int // the key's pairs [m0, m1) go to msgs[at:]
		at           int
		remote       bool // the sender's rank is another analyzer rank's: its starts go to cache
	}
	const pairChunk = 1 << 16
	var tasks []pairTask
	i, j, nmsg, nremote := 0, 0, 0, 0
	for i < len(sendRuns) || j < len(recvRuns) {
		var k int
		switch {
		case i >= len(sendRuns):
			k = 1
		case j >= len(recvRuns):
			k = -1
		default:
			k = sendRuns[i].cmpKey(&recvRuns[j])
		}
		i2, j2 := i, j
		var ns, nr int
		if k <= 0 {
			ns, i2 = keyRuns(sendRuns, i)
		}
		if k >= 0 {
			nr, j2 = keyRuns(recvRuns, j)
		}
		if k != 0 { // sends without receives, or receives without sends
			unmatched += ns + nr
			i, j = i2, j2
			continue
		}
		n := min(ns, nr)
		unmatched += ns + nr - 2*n
		t := pairTask{slo: sendRuns[i].lo, rlo: recvRuns[j].lo, remote: !b.local(sends[sendRuns[i].lo].Post)}
		if i2 > i+1 { // a key in several runs: its ends merged
			t.sends = keyEnds(sendRuns[i:i2], sendOrder)
		}
		if j2 > j+1 {
			t.recvs = keyEnds(recvRuns[j:j2], recvOrder)
		}
		recvStart := func(e int32) int64 { return p.Start[recvs[e].post-p.CallLo] }
		// The sends' order from the receives' only where those are in
		// MPI's order: posted by one thread.
		if b.threads[sendRuns[i].src] && allSync(sends, endSeq(t.sends, t.slo, ns)) &&
			oneThread(p, recvs, endSeq(t.recvs, t.rlo, nr)) {
			t.sends = byMatch(endSeq(t.recvs, t.rlo, nr), endSeq(t.sends, t.slo, ns), recvStart,
				func(e int32) int64 { return sends[e].Start }, func(e int32) int64 { return sends[e].DoneEnd })
		}
		if b.threads[recvRuns[j].dst] {
			t.recvs = byMatch(endSeq(t.sends, t.slo, ns), endSeq(t.recvs, t.rlo, nr),
				func(e int32) int64 { return sends[e].Start }, recvStart,
				func(e int32) int64 { return p.End[recvs[e].done-p.CallLo] })
		}
		for m := 0; m < n; m += pairChunk { // long keys in chunks, for the workers
			t.m0, t.m1, t.at = m, min(n, m+pairChunk), nmsg+m
			tasks = append(tasks, t)
		}
		if t.remote {
			nremote += n
		}
		nmsg += n
		i, j = i2, j2
	}
	b.msgs = make([]partMsg, nmsg)
	b.cache = make([]int64, nremote, nremote+nremote/4+64) // room for the remote causes of other dependencies
	p.MsgSend, p.MsgRecv, p.MsgBytes = make([]int32, nmsg), make([]int32, nmsg), make([]uint64, nmsg)
	violationsOf := make([]int, len(tasks))
	lrOf := make([]int, len(tasks)*P) // the Late Receiver dependencies of each task's messages, by their owner
	slot := 0
	slotOf := make([]int, len(tasks)) // a remote task's first pair's cache slot
	for k := range tasks {
		if tasks[k].remote {
			slotOf[k] = slot
			slot += tasks[k].m1 - tasks[k].m0
		}
	}
	par.Do(len(tasks), func(k int) {
		t := &tasks[k]
		violations := 0
		lrs := make([]int, P) // this worker's own: the tasks' counts share cache lines
		for m := t.m0; m < t.m1; m++ {
			se, re := t.slo+int32(m), t.rlo+int32(m)
			if t.sends != nil {
				se = t.sends[m]
			}
			if t.recvs != nil {
				re = t.recvs[m]
			}
			s, rv := &sends[se], recvs[re]
			r := wireEnd{Post: rv.post, Done: rv.done}
			pm := partMsg{sendPost: s.Post, sendDone: s.Done, recvPost: r.Post, recvDone: r.Done,
				comm: s.Comm, sync: s.Mode&syncBit != 0, slot: -1, heldBy: -1, bytes: s.Bytes,
				partitioned: s.Init > 0}
			if t.remote {
				pm.slot = int32(slotOf[k] + m - t.m0)
				b.cache[pm.slot] = s.Start
			}
			if s.Mode&mayHold != 0 {
				pm.heldBy = b.heldBy(s, &r)
				post := p.Start[r.Post-p.CallLo]
				pm.rendezvous = !pm.sync && !pm.partitioned && s.Bytes > b.eagerLimit && post > s.Start && s.DoneEnd > post
				if pm.waitsForPost() && pm.heldBy == b.lateReceiverCause(pm.recvPost) {
					pm.heldBy = -1
				}
			} else if s.Mode == 0 && !pm.partitioned && s.Bytes > b.eagerLimit {
				pm.drained = p.Start[r.Post-p.CallLo] > s.Start
			}
			if p.End[r.Done-p.CallLo] < s.Start {
				violations++
			}
			if pm.waitsForPost() || pm.heldApart() || pm.drained {
				q := p.Owner(pm.sendDone)
				for _, dep := range [...]bool{pm.waitsForPost(), pm.heldApart(), pm.drained} {
					if dep {
						lrs[q]++
					}
				}
			}
			x := t.at + m - t.m0
			b.msgs[x] = pm
			p.MsgSend[x], p.MsgRecv[x], p.MsgBytes[x] = pm.sendPost, pm.recvDone, pm.bytes
		}
		violationsOf[k] = violations
		copy(lrOf[k*P:], lrs)
	})
	violations := 0
	for _, v := range violationsOf {
		violations += v
	}
	sends, recvs = nil, nil
	// The Late Sender dependencies are this rank's; the Late Receiver ones
	// (synchronous sends, and sends held until the receiver entered MPI)
	// go to the sender's owner.
	lr := make([][]wireDep, P)
	{
		nlr := make([]int, P) // counts to places: each task's in each owner's array
		for k := range tasks {
			for q := 0; q < P; q++ {
				nlr[q], lrOf[k*P+q] = nlr[q]+lrOf[k*P+q], nlr[q]
			}
		}
		for q := range lr {
			lr[q] = make([]wireDep, nlr[q])
		}
	}
	par.Do(len(tasks), func(k int) {
		t := &tasks[k]
		at := slices.Clone(lrOf[k*P : (k+1)*P])
		for x := t.at; x < t.at+t.m1-t.m0; x++ {
			m := &b.msgs[x]
			if !m.waitsForPost() && !m.heldApart() && !m.drained {
				continue
			}
			kind := wireKind(LateReceiver, RuleSynchronous)
			if m.partitioned {
				kind |= wirePartitioned
			}
			q := p.Owner(m.sendDone)
			if m.waitsForPost() {
				cause := b.lateReceiverCause(m.recvPost)
				lr[q][at[q]] = wireDep{Done: m.sendDone, Cause: cause, Kind: kind, Comm: m.comm,
					Start: p.Start[cause-p.CallLo]}
				at[q]++
			}
			if m.heldApart() {
				lr[q][at[q]] = wireDep{Done: m.sendDone, Cause: m.heldBy, Kind: wireKind(LateReceiver, RuleProgress), Comm: m.comm,
					Start: p.Start[m.heldBy-p.CallLo]}
				at[q]++
			}
			if m.drained { // its Done the send's post: the owner finds the detach after it
				cause := b.lateReceiverCause(m.recvPost)
				lr[q][at[q]] = wireDep{Done: m.sendPost, Cause: cause, Kind: kind | wireDrained, Comm: m.comm,
					Start: p.Start[cause-p.CallLo]}
				at[q]++
			}
		}
	})
	gotLR, err := mpix.Ship(c, lr)
	if err != nil {
		return err
	}
	lr = nil
	// The dependencies are allocated once, at their final size but for
	// the few of partitioned and PSCW transfers: the messages' (made in
	// parallel), the Late Receivers shipped here, and at most one per
	// owned collective call (collectives).
	ncoll := 0
	for _, d := range b.rankLogs {
		ncoll += len(d.colls)
	}
	n := len(b.msgs) + wireCount[wireDep](gotLR) + ncoll
	b.deps = make([]dep, len(b.msgs), n+n/64+64)
	par.Do(len(tasks), func(k int) {
		t := &tasks[k]
		for x := t.at; x < t.at+t.m1-t.m0; x++ {
			m := &b.msgs[x]
			d := dep{done: m.recvDone - p.CallLo, cause: m.sendPost, slot: m.slot, kind: LateSender, comm: m.comm}
			if m.partitioned {
				d.part = -1
			}
			b.deps[x] = d
		}
	})
	if err := b.partitionDeps(); err != nil {
		return err
	}
	if err := b.addDeps(gotLR); err != nil {
		return err
	}
	var polls int64
	for _, d := range b.rankLogs {
		polls += d.polls
	}
	counts := []int64{int64(len(b.msgs)), int64(unmatched), int64(violations), polls}
	if err := c.Allreduce(counts, mpix.Sum); err != nil {
		return err
	}
	p.Messages, p.Unmatched, p.ClockViolations, p.CoalescedPolls = int(counts[0]), int(counts[1]), int(counts[2]), counts[3]
	if p.Unmatched > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d sends or receives have no partner in the logs", p.Unmatched))
	}
	return nil
}

// recvEnd is an owned receive: the call that posted it and the one that
// completed it (global ids).
type recvEnd struct{ post, done int32 }

// endRun is a run of message ends with one key, ends [lo, hi) of one
// side's array, in posting order.
type endRun struct {
	comm, src, dst, tag, init int32
	lo, hi                    int32
}

// cmpKey orders runs by key: communicator, source, destination, tag,
// partitioned initialisation.
func (a *endRun) cmpKey(b *endRun) int {
	return cmp.Or(cmp.Compare(a.comm, b.comm), cmp.Compare(a.src, b.src), cmp.Compare(a.dst, b.dst),
		cmp.Compare(a.tag, b.tag), cmp.Compare(a.init, b.init))
}

// sortEndRuns orders runs by key, and runs of one key (not what the
// extractor makes, but handled) by their first ends' posting order
// (order compares two ends).
func sortEndRuns(runs []endRun, order func(a, b int32) int) {
	slices.SortFunc(runs, func(a, b endRun) int {
		return cmp.Or(a.cmpKey(&b), order(a.lo, b.lo))
	})
}

// keyEnds returns the ends of one key's runs (sorted by sortEndRuns), in
// posting order: the runs merged, ties kept in run order.
func keyEnds(runs []endRun, order func(a, b int32) int) []int32 {
	var seq []int32
	for _, r := range runs {
		for e := r.lo; e < r.hi; e++ {
			seq = append(seq, e)
		}
	}
	slices.SortStableFunc(seq, order)
	return seq
}

// endSeq is a key's ends in posting order: seq, or when it is nil (the
// key is one run) the n ends from lo on.
func endSeq(seq []int32, lo int32, n int) []int32 {
	if seq != nil {
		return seq
	}
	seq = make([]int32, n)
	for k := range seq {
		seq[k] = lo + int32(k)
	}
	return seq
}

// allSync says whether the sends seq of sends are all synchronous: their
// completions say when they were matched (byMatch).
func allSync(sends []wireEnd, seq []int32) bool {
	for _, e := range seq {
		if sends[e].Mode&syncBit == 0 {
			return false
		}
	}
	return true
}

// oneThread says whether the receives seq of recvs were all posted by
// one thread of their rank.
func oneThread(p *PAG, recvs []recvEnd, seq []int32) bool {
	for _, e := range seq {
		if p.Thread[recvs[e].post-p.CallLo] != p.Thread[recvs[seq[0]].post-p.CallLo] {
			return false
		}
	}
	return true
}

// keyRuns returns the number of ends of the key of runs[i] and the index
// of the next key's first run.
func keyRuns(runs []endRun, i int) (n, next int) {
	j := i
	for ; j < len(runs) && runs[j].cmpKey(&runs[i]) == 0; j++ {
		n += int(runs[j].hi - runs[j].lo)
	}
	return n, j
}

func sameKeyEnds(a, b *wireEnd) bool {
	return a.Comm == b.Comm && a.Src == b.Src && a.Dst == b.Dst && a.Tag == b.Tag && a.Init == b.Init
}

// wireDep is a dependency shipped to the owner of its done call.
type wireDep struct {
	Done, Cause int32
	Kind, Comm  int32 // Kind: wireKind
	Start       int64 // when the cause started
}

// wireKind packs a dependency's wait kind and rule into wireDep.Kind.
func wireKind(k WaitKind, r WaitRule) int32 { return int32(k) | int32(r)<<8 }

// wirePartitioned in wireDep.Kind marks a partitioned transfer's (dep.part -1).
const wirePartitioned = 1 << 16

// wireDrained in wireDep.Kind marks a buffered send's Late Receiver
// (partMsg.drained): its Done is the send's post, and the dependency is
// the next MPI_Buffer_detach's of the send's rank (none: dropped).
const wireDrained = 1 << 17

// shipDeps sends dependencies to the owners of their done calls, which
// add them (and those sent to themselves) to their own.
func (b *builder) shipDeps(out [][]wireDep) error {
	got, err := mpix.Ship(b.c, out)
	if err != nil {
		return err
	}
	return b.addDeps(got)
}

// wireCount is the number of T in shipped buffers.
func wireCount[T any](got [][]byte) int {
	n := 0
	for _, bs := range got {
		n += len(bs) / sizeOf[T]()
	}
	return n
}

// addDeps adds shipped dependencies to the owned ones.
func (b *builder) addDeps(got [][]byte) error {
	// Grown at most once (match sizes them): appending dependency by
	// dependency to arrays of millions copied them over and over, a fifth
	// of the build's time on a 16 M-call log.
	n := wireCount[wireDep](got)
	b.deps = slices.Grow(b.deps, n)
	for _, bs := range got {
		ws, err := mpix.FromBytes[wireDep](bs)
		if err != nil {
			return err
		}
		for _, w := range ws {
			if w.Kind&wireDrained != 0 {
				if w.Done = b.detachAfter(w.Done); w.Done < 0 {
					continue
				}
			}
			d := dep{done: w.Done - b.p.CallLo, cause: w.Cause, slot: b.addCause(w.Cause, w.Start),
				kind: WaitKind(w.Kind & 0xff), rule: WaitRule(w.Kind >> 8 & 0xff), comm: w.Comm}
			if w.Kind&wirePartitioned != 0 {
				d.part = -1
			}
			b.deps = append(b.deps, d)
		}
	}
	return nil
}

// detachAfter is the first MPI_Buffer_detach of owned call c's rank after
// c, -1 if none.
func (b *builder) detachAfter(c int32) int32 {
	p := b.p
	if b.detaches == nil {
		b.detaches = []int32{}
		for k, op := range p.Op {
			if op == trace.OpBufferDetach {
				b.detaches = append(b.detaches, p.CallLo+int32(k))
			}
		}
	}
	i, _ := slices.BinarySearch(b.detaches, c+1)
	if i == len(b.detaches) || b.detaches[i] >= p.RankStart[p.Rank(c)+1] {
		return -1
	}
	return b.detaches[i]
}

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
// which groups the members as Build does, finds the dependencies (sent to
// the owners of the completing calls) and keeps the instance for the
// imbalance analysis.
func (b *builder) collectives() error {
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
	got, err := mpix.Ship(c, out)
	if err != nil {
		return err
	}
	type member struct {
		wireColl
		from, idx int32 // sending rank and position in its list
	}
	n := wireCount[wireColl](got)
	ms := make([]member, 0, n)
	p.CollPost, p.CollDone = slices.Grow(p.CollPost, n), slices.Grow(p.CollDone, n)
	p.PostStart, p.DoneEnd = slices.Grow(p.PostStart, n), slices.Grow(p.DoneEnd, n)
	p.PostBytes, b.doneStart = slices.Grow(p.PostBytes, n), slices.Grow(b.doneStart, n)
	for q, bs := range got {
		ws, err := mpix.FromBytes[wireColl](bs)
		if err != nil {
			return err
		}
		for k, w := range ws {
			ms = append(ms, member{w, int32(q), int32(k)})
		}
	}
	b.collIdx = make([][]int32, c.Size())
	for q, bs := range got {
		b.collIdx[q] = make([]int32, len(bs)/sizeOf[wireColl]())
		for k := range b.collIdx[q] {
			b.collIdx[q][k] = -1 // a member of an instance left out
		}
	}
	slices.SortFunc(ms, func(a, b member) int {
		switch {
		case a.Comm != b.Comm:
			return cmp.Compare(a.Comm, b.Comm)
		case a.Seq != b.Seq:
			return cmp.Compare(a.Seq, b.Seq)
		}
		return cmp.Compare(a.Post, b.Post)
	})
	deps := make([][]wireDep, c.Size())
	cd := collDepper{ranks: p.Ranks, comms: p.Comms, rank: p.Rank}
	partial, mixed, noData, repeated := 0, 0, 0, 0
	var post, done []int32 // the instance's members, reused from one to the next
	var start []int64
	var bytes []uint64
	for i := 0; i < len(ms); {
		j := i
		for j < len(ms) && ms[j].Comm == ms[i].Comm && ms[j].Seq == ms[i].Seq {
			j++
		}
		grp := ms[i:j]
		i = j
		ok := true
		for _, m := range grp {
			// MPI_Init on some ranks and MPI_Init_thread on others is one
			// start-up.
			ok = ok && (m.Op == grp[0].Op || m.Op.IsWorldBarrier() && grp[0].Op.IsWorldBarrier())
		}
		if !ok {
			mixed++
			continue
		}
		// A rank's calls are numbered together, so a rank twice in an
		// instance (one sequence number on two of its calls) is two
		// neighbours in grp's order.
		twice := false
		for k := 1; k < len(grp); k++ {
			twice = twice || p.Rank(grp[k].Post) == p.Rank(grp[k-1].Post)
		}
		if twice {
			repeated++
			continue
		}
		inter := p.Comms[grp[0].Comm].Inter
		if want := len(p.Comms[grp[0].Comm].Members); len(grp) != want && !inter {
			partial++
			if len(grp) < 2 {
				continue
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
			noData++
		}
		post, done, start, bytes = post[:0], done[:0], start[:0], bytes[:0]
		for _, m := range grp {
			post, done, start, bytes = append(post, m.Post), append(done, m.Done), append(start, m.Start), append(bytes, m.Bytes)
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
			continue
		}
		rule := RuleNone
		if observedOnly(col.Op) {
			rule = RuleObserved
		}
		for _, d := range cd.deps(&col, post, start, bytes) {
			q := p.Owner(done[d.member])
			deps[q] = append(deps[q], wireDep{Done: done[d.member], Cause: post[d.cause], Kind: wireKind(d.kind, rule), Comm: col.Comm,
				Start: start[d.cause]})
		}
		// A candidate global synchronisation point (paper §4.4): every
		// rank, a blocking collective that synchronises (everyone needs
		// everyone), no request pending on any member; the clock condition
		// on its edges is checked once the times are final (syncPoints).
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
	if err := b.shipDeps(deps); err != nil {
		return err
	}
	counts := []int64{int64(partial), int64(mixed), int64(noData), int64(repeated)}
	if err := c.Allreduce(counts, mpix.Sum); err != nil {
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

func sizeOf[T any]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// startOf is when dependency d's cause starts now.
func (b *builder) causeStart(d *dep) int64 {
	if b.local(d.cause) {
		lc := d.cause - b.p.CallLo
		if b.t != nil {
			return b.t.start(lc)
		}
		return b.lg.Start[lc]
	}
	return b.cache[d.slot]
}

func (b *builder) endOf(lc int32) int64 {
	if b.t != nil {
		return b.t.end(lc)
	}
	return b.lg.End[lc]
}

// correctClocks enforces the clock condition as Build does (see
// builder.correctClocks), in rounds: each rank corrects its own calls
// against the causes' starts it knows until nothing moves, then the ranks
// that moved calls send the new starts to the ranks whose dependencies
// name them, until no rank moves any. Every correction only moves times
// forward, by the least that satisfies a dependency, so the order does not
// change the result: the least times that satisfy them all.
func (b *builder) correctClocks() error {
	p, c := b.p, b.c
	size := c.Size()
	// Ask the owners of remote causes for their starts, once; each round
	// they send them in the same order.
	asked := make([][]int32, size) // by owner: the dependencies waiting for its answers
	req := make([][]int32, size)
	for i := range b.deps {
		d := &b.deps[i]
		if !b.local(d.cause) {
			q := p.Owner(d.cause)
			asked[q] = append(asked[q], int32(i))
			req[q] = append(req[q], d.cause)
		}
	}
	send := make([][]byte, size)
	for q := range req {
		send[q] = mpix.Bytes(req[q])
	}
	got, err := c.Alltoallv(send)
	if err != nil {
		return err
	}
	b.wanted = make([][]int32, size)
	for q, bs := range got {
		ids, err := mpix.FromBytes[int32](bs)
		if err != nil {
			return err
		}
		for k := range ids {
			ids[k] -= p.CallLo
		}
		b.wanted[q] = ids
	}
	refresh := func() error {
		out := make([][]byte, size)
		for q, ids := range b.wanted {
			ts := make([]int64, len(ids))
			for k, lc := range ids {
				if b.t != nil {
					ts[k] = b.t.start(lc)
				} else {
					ts[k] = b.lg.Start[lc]
				}
			}
			out[q] = mpix.Bytes(ts)
		}
		got, err := c.Alltoallv(out)
		if err != nil {
			return err
		}
		starts, err := mpix.Answers[int64](got, func(q int) int { return len(asked[q]) }, "clock exchange")
		if err != nil {
			return err
		}
		for q, ts := range starts {
			for k, i := range asked[q] {
				b.cache[b.deps[i].slot] = ts[k]
			}
		}
		return nil
	}
	const maxRounds = 50
	// Times only grow, so a dependency met stays met until its cause
	// starts later: after a round's first pass, a pass checks only those
	// whose cause is owned and was moved in the pass before (the shifter
	// lists the blocks of calls it moves at each pass's tick), found
	// through byBlock, made at the first such pass: scanning every
	// dependency in each pass took 0.8 s of the 16 M-call halo log's
	// analysis. A round's first pass checks every dependency, or, when
	// the round before settled, only those on other ranks' causes, whose
	// starts the refresh brought. The order in which the passes meet the
	// dependencies does not change the result: times only grow, each
	// raise to the least that meets its dependency, so the passes end in
	// the least times that meet them all.
	tick := int64(0)
	var byBlock *depIndex
	backwards, err := b.countBackwards()
	if err != nil {
		return err
	}
	check := func(i int32) bool {
		d := &b.deps[i]
		need := b.causeStart(d)
		if b.endOf(d.done) >= need {
			return false
		}
		if b.t == nil {
			b.t = newShifter(b.lg)
		}
		b.t.raise(d.done, need, tick)
		return true
	}
	settled := false // the last round's passes ended with one that moved nothing
	for round := 0; round < maxRounds; round++ {
		changed := false
		full := !settled // a pass over every dependency first
		settled = false
		for pass := 0; pass < maxRounds; pass++ {
			moved := false
			tick++
			switch {
			case pass == 0 && round == 0:
				// Only a dependency that runs backwards can move a call,
				// and one that does not stays so until its cause moves,
				// which the passes after this one follow: checking the
				// ones countBackwards found, not all, is the same pass,
				// and on logs whose clocks agree an empty one.
				for _, i := range backwards {
					if check(i) {
						moved = true
					}
				}
			case pass == 0 && full:
				for i := range b.deps {
					// A hold is read from the times, not imposed on them.
					if b.deps[i].rule.imposed() && check(int32(i)) {
						moved = true
					}
				}
			case pass == 0:
				// The round before settled every dependency on an owned
				// cause; the refresh may have moved the others' causes.
				for _, ids := range asked {
					for _, i := range ids {
						if b.deps[i].rule.imposed() && check(i) {
							moved = true
						}
					}
				}
			default:
				if byBlock == nil {
					byBlock = b.depsByCauseBlock()
				}
				// The blocks the last pass moved; this pass's own moves
				// are the next pass's.
				blocks := slices.Clone(b.t.touchedAt(tick - 1))
				for _, blk := range blocks {
					for _, i := range byBlock.at(blk) {
						if check(i) {
							moved = true
						}
					}
				}
			}
			if !moved {
				settled = true
				break
			}
			changed = true
		}
		anyMoved, err := mpix.Any(c, changed)
		if err != nil {
			return err
		}
		if !anyMoved {
			break
		}
		// Every round that moved a call ends with a refresh, so the cache
		// is current whichever way the loop ends.
		if err := refresh(); err != nil {
			return err
		}
	}
	if b.t != nil {
		b.t.flush()
		b.t = nil
	}
	parts := par.Bounds(len(b.deps), 4*runtime.GOMAXPROCS(0))
	bad := make([]int64, len(parts)-1)
	par.Do(len(bad), func(k int) {
		for i := parts[k]; i < parts[k+1]; i++ {
			d := &b.deps[i]
			switch d.rule {
			case RuleProgress:
				// A hold whose evidence the corrected times no longer show
				// (strictly: the receiver's call began before the send
				// ended, which also keeps it from closing a cycle) is not
				// one.
				d.dropped = b.lg.End[d.done] <= b.causeStart(d)
				continue
			case RuleObserved:
				d.dropped = b.lg.End[d.done] < b.causeStart(d)
				continue
			}
			if b.lg.End[d.done] < b.causeStart(d) {
				d.dropped = true
				bad[k]++
			}
		}
	})
	total := int64(0)
	for _, k := range bad {
		total += k
	}
	n, err := mpix.AllreduceOne(c, total, mpix.Sum)
	if err != nil {
		return err
	}
	if p.ClockCorrections > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("clock error: on the synchronised clocks, %d dependencies ran backwards (a call ended before something it needed started), by at most %v; those calls were moved later, with what followed them",
			p.ClockCorrections, time.Duration(p.ClockShiftMax)))
	}
	if n > 0 {
		p.Inconsistent = int(n)
		p.Notes = append(p.Notes, fmt.Sprintf("%d dependencies contradict the logs' order (inconsistent matching); left out of the graph", n))
	}
	if p.ClockViolations > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d receives ended before their send started (clock error above the message latency); corrected", p.ClockViolations))
	}
	return nil
}

// countBackwards counts, before the clock correction, the dependencies
// it imposes (all but the holds) whose completion ends before the cause
// starts on the synchronised clocks, and the largest such gap: what the
// logs' times say, the same whatever order the correction then takes and
// at any number of analyzer ranks (the causes' starts in the cache are
// still the logs'). It returns this rank's, in order: the ones the
// correction starts from.
func (b *builder) countBackwards() ([]int32, error) {
	parts := par.Bounds(len(b.deps), 4*runtime.GOMAXPROCS(0))
	found, gap := make([][]int32, len(parts)-1), make([]int64, len(parts)-1)
	par.Do(len(found), func(k int) {
		for i := parts[k]; i < parts[k+1]; i++ {
			d := &b.deps[i]
			if g := b.causeStart(d) - b.lg.End[d.done]; d.rule.imposed() && g > 0 {
				found[k] = append(found[k], int32(i))
				gap[k] = max(gap[k], g)
			}
		}
	})
	backwards := slices.Concat(found...)
	x := []int64{int64(len(backwards)), -slices.Max(append(gap, 0))}
	if err := b.c.Allreduce(x[:1], mpix.Sum); err != nil {
		return nil, err
	}
	if err := b.c.Allreduce(x[1:], mpix.Min); err != nil {
		return nil, err
	}
	b.p.ClockCorrections, b.p.ClockShiftMax = x[0], -x[1]
	return backwards, nil
}

// depIndex lists dependencies by block of calls: at(blk) are their
// indices in builder.deps.
type depIndex struct {
	start []int32 // by block, into deps; one more for the end
	deps  []int32
}

func (x *depIndex) at(blk int32) []int32 { return x.deps[x.start[blk]:x.start[blk+1]] }

// depsByCauseBlock indexes the dependencies the clock correction imposes
// (all but the holds) whose cause is owned, by the cause's block of
// calls (shifter's blocks), each block's in dependency order.
func (b *builder) depsByCauseBlock() *depIndex {
	nb := len(b.lg.Op)>>shiftBits + 1
	x := &depIndex{start: make([]int32, nb+1)}
	for i := range b.deps {
		if d := &b.deps[i]; d.rule.imposed() && b.local(d.cause) {
			x.start[(d.cause-b.p.CallLo)>>shiftBits+1]++
		}
	}
	for k := 0; k < nb; k++ {
		x.start[k+1] += x.start[k]
	}
	x.deps = make([]int32, x.start[nb])
	fill := slices.Clone(x.start[:nb])
	for i := range b.deps {
		if d := &b.deps[i]; d.rule.imposed() && b.local(d.cause) {
			blk := (d.cause - b.p.CallLo) >> shiftBits
			x.deps[fill[blk]] = int32(i)
			fill[blk]++
		}
	}
	return x
}

// wrongOrder marks the messages (by index in b.msgs) whose receiver got
// them after a message sent to it strictly earlier was received, as
// Build's wrongOrder does; nil if none.
func (b *builder) wrongOrder() bitset {
	type sent struct {
		t, recvEnd int64
		m          int32
	}
	// The messages come by key, each key's in posting order: runs of one
	// destination whose sends start in order. Runs are merged per
	// destination instead of sorting all messages.
	type run struct{ dst, lo, hi int32 }
	items := make([]sent, len(b.msgs))
	var runs []run
	for k := range b.msgs {
		m := &b.msgs[k]
		items[k] = sent{b.causeStart(&b.deps[k]), b.lg.End[m.recvDone-b.p.CallLo], int32(k)}
		dst := int32(b.lg.rank(m.recvDone - b.p.CallLo))
		if n := len(runs); n > 0 && runs[n-1].dst == dst && items[k-1].t <= items[k].t {
			runs[n-1].hi++
		} else {
			runs = append(runs, run{dst, int32(k), int32(k) + 1})
		}
	}
	slices.SortStableFunc(runs, func(x, y run) int { return cmp.Compare(x.dst, y.dst) })
	var wrong bitset
	var order []sent
	var heads []run
	for i := 0; i < len(runs); {
		j := i
		for j < len(runs) && runs[j].dst == runs[i].dst {
			j++
		}
		// This destination's messages in send start order.
		order, heads = order[:0], append(heads[:0], runs[i:j]...)
		if len(heads) > 16 {
			for _, r := range heads {
				order = append(order, items[r.lo:r.hi]...)
			}
			slices.SortFunc(order, func(x, y sent) int { return cmp.Compare(x.t, y.t) })
		} else {
			for len(heads) > 0 {
				k := 0
				for h := 1; h < len(heads); h++ {
					if items[heads[h].lo].t < items[heads[k].lo].t {
						k = h
					}
				}
				order = append(order, items[heads[k].lo])
				if heads[k].lo++; heads[k].lo == heads[k].hi {
					heads[k] = heads[len(heads)-1]
					heads = heads[:len(heads)-1]
				}
			}
		}
		i = j
		// Messages whose sends started at the same time were not sent one
		// before the other: each is compared with those sent strictly
		// earlier.
		latest := int64(-1 << 62)
		for k := 0; k < len(order); {
			t0 := order[k].t
			l := k
			groupLatest := latest
			for ; l < len(order) && order[l].t == t0; l++ {
				if latest > order[l].recvEnd {
					if wrong == nil {
						wrong = newBitset(len(b.msgs))
					}
					wrong.set(int(order[l].m))
				}
				groupLatest = max(groupLatest, order[l].recvEnd)
			}
			latest = groupLatest
			k = l
		}
	}
	return wrong
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

// progressSlack is how much later than its receiver's entry into MPI,
// beyond the message's transfer, a send may complete and still count as
// held until that entry: the acknowledgement's latency and clock error, or
// a tenth of how long it was held (a sender that was descheduled when the
// receiver let it go still was held; a send that just happened to complete
// then would have to do so within a tenth of its wait, by chance).
const (
	progressSlack = 50_000 // ns
	progressShare = 10
)

// heldBy applies the progress rule to a send s matched with a receive r of
// an owned rank. MPI moves a message only inside MPI calls of both ranks,
// so a standard send (any size: eager limits and buffer space decide, not a
// size the analyzer could know) can be held until its receiver enters MPI.
// The evidence is the timing: the receiver's last MPI call that started
// before the send completed (strictly) started after both the send and
// the receive were posted, and the send completed within the message's
// transfer (as the receiver saw it) of that call's start. The call need not still run
// when the send completes: a sender descheduled when the receiver let it
// go sees its completion late. It returns the hold's cause, that call or
// the first of the polls that led to it (lateReceiverCause), or -1 when the
// send completed before the receive was posted or the timing shows no
// hold.
func (b *builder) heldBy(s, r *wireEnd) int32 {
	p, lg := b.p, b.lg
	post := r.Post - p.CallLo
	sendEnd := s.DoneEnd
	if sendEnd <= p.Start[post] {
		return -1
	}
	// The receiver's last call on the receive's thread, from the post on,
	// that started before the send completed: strictly, as the hold's
	// evidence is kept (clock correction), so that a call beginning as
	// the send ended, to the ns, is not taken for what let it go and the
	// hold then dropped (heldsend.c: its MPI_Barrier after the MPI_Wait).
	i := p.Rank(r.Post) - p.RankLo
	hi := lg.rankStart[i+1]
	x := int32(-1)
	if lg.ordered[i] && !lg.multi[i] {
		k := sort.Search(int(hi-post), func(j int) bool { return p.Start[post+int32(j)] >= sendEnd })
		x = post + int32(k) - 1
	} else {
		th := p.Thread[post]
		for c := post; c < hi; c++ {
			if p.Thread[c] != th {
				continue
			}
			if p.Start[c] >= sendEnd {
				break
			}
			x = c
		}
	}
	if x < post {
		return -1
	}
	sx := p.Start[x]
	if sx < s.Start {
		// The receiver did not enter MPI after the send was posted: it was
		// in MPI all along, or computing when the send completed.
		return -1
	}
	done := r.Done - p.CallLo
	transfer := max(0, p.End[done]-max(s.Start, p.Start[done]))
	held := sx - max(s.Start, p.Start[post])
	if sendEnd-sx > transfer+max(progressSlack, held/progressShare) {
		return -1
	}
	return b.lateReceiverCause(x + p.CallLo)
}

// lateReceiverCause is the call that a Late Receiver dependency on
// receiver call x (global, an owned rank's) names as its cause: x, or,
// when x ends or lies in a run of unproductive polls on its thread, the
// first of them. The receiver entered MPI there and was in it again and
// again until x; a later call may lie inside a stretch in which its rank
// itself waits (the polls' time is waiting: edges.go), and a cause there
// would lose that stretch from every path through it, so that the
// critical path fell short of the run (HPCC: RandomAccess polls for the
// other ranks' updates while it sends its own; HPL probes before it
// receives). A receiver polling already when the send was posted so
// causes no wait: the cause started before the sender began to wait.
func (b *builder) lateReceiverCause(x int32) int32 {
	p, lg := b.p, b.lg
	first := lg.rankStart[p.Rank(x)-p.RankLo]
	c := x - p.CallLo
	th := lg.Thread[c]
	for k := c - 1; k >= first; k-- {
		if lg.Thread[k] != th {
			continue
		}
		if !lg.unproductive.has(int(k)) {
			break
		}
		c = k
	}
	return c + p.CallLo
}

// joinSites makes one table of call sites, with their call paths, for the
// owned ranks: each rank's after the ones before it.
func joinSites(lg *rankCalls, rankLogs []*rankData) {
	lg.RankSites = make([]uint32, len(rankLogs)+1)
	lg.FrameStart = []uint32{0}
	for i, d := range rankLogs {
		off := uint32(len(lg.Sites))
		lg.RankSites[i] = off
		if off > 0 {
			for c := lg.rankStart[i]; c < lg.rankStart[i+1]; c++ {
				lg.Site[c] += off
			}
		}
		lg.Sites = append(lg.Sites, d.sites...)
		for k := range d.sites {
			if k < len(d.sitePath) && int(d.sitePath[k]) < len(d.paths) {
				lg.Frames = append(lg.Frames, d.paths[d.sitePath[k]]...)
			}
			lg.FrameStart = append(lg.FrameStart, uint32(len(lg.Frames)))
		}
		d.sites, d.sitePath, d.paths = nil, nil, nil
	}
	lg.RankSites[len(rankLogs)] = uint32(len(lg.Sites))
}
