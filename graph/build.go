package graph

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

func sizeOf[T any]() int {
	var z T
	return int(unsafe.Sizeof(z))
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
