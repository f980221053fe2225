package graph_test

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/trace"
)

// The clock-condition tests write the logs of a run simulated on one true
// clock, so that every receive ends after its send started (by at least
// the message latency), every collective member after what it needs
// started, and then give some ranks wrong clock parameters in their
// headers, as a sync that failed would: the analyzer then sees receives
// end before their sends started, by up to the error. It must count them
// (PAG.ClockViolations), correct them without breaking any other
// dependency or any thread's order, and still find a critical path as long
// as the run.

const (
	skewRanks  = 4
	skewIters  = 30
	skewBase   = int64(1_000_000_000) // true time of every rank's MPI_Init
	skewMinGap = int64(1_000_000)     // computation before every call: 1-2 ms
)

// skewLatencies are the message latencies the simulation draws from (ns).
var skewLatencies = []int64{1_000, 2_000, 5_000, 10_000, 30_000, 80_000}

type simRank struct {
	recs []trace.Record
	t    int64 // true time: the end of the rank's last call
	req  uint32
}

type skewSim struct {
	rng   *rand.Rand
	ranks []*simRank
	seq   uint32 // collective sequence number on MPI_COMM_WORLD
}

// compute advances rank r by a stretch of computation and returns when
// its next call starts.
func (s *skewSim) compute(r int) int64 {
	s.ranks[r].t += skewMinGap + s.rng.Int63n(skewMinGap)
	return s.ranks[r].t
}

func (s *skewSim) latency() int64 { return skewLatencies[s.rng.Intn(len(skewLatencies))] }

func (s *skewSim) add(r int, rec trace.Record, start, end int64) {
	rec.Start, rec.End = start, end
	s.ranks[r].recs = append(s.ranks[r].recs, rec)
	s.ranks[r].t = end
}

// send: a blocking eager send from a to b; returns when it started.
func (s *skewSim) send(a, b int, tag int32) int64 {
	st := s.compute(a)
	s.add(a, trace.Record{Op: trace.OpSend, Comm: trace.CommWorld, Peer: int32(b), Tag: tag, Bytes: 8, Root: trace.PeerNone, CallSite: 0x100}, st, st+1_000)
	return st
}

// recv: the blocking receive on b of the message a sent at sent; it ends
// once the message has arrived.
func (s *skewSim) recv(b, a int, tag int32, sent int64) {
	st := s.compute(b)
	en := max(st, sent+s.latency()) + 500
	s.add(b, trace.Record{Op: trace.OpRecv, Comm: trace.CommWorld, Peer: int32(a), Tag: tag, Bytes: 8, Root: trace.PeerNone, CallSite: 0x200}, st, en)
}

// ring passes a token 0 → 1 → … → P-1 → 0 with Send and Recv.
func (s *skewSim) ring(tag int32) {
	P := len(s.ranks)
	sent := s.send(0, 1, tag)
	for k := 1; k < P; k++ {
		s.recv(k, k-1, tag, sent)
		sent = s.send(k, (k+1)%P, tag)
	}
	s.recv(0, P-1, tag, sent)
}

// halo: every rank posts Irecvs from both neighbours, Isends to both, and
// completes the four requests with one Waitall, which ends once both
// messages have arrived.
func (s *skewSim) halo(tag int32) {
	P := len(s.ranks)
	sent := map[[2]int]int64{} // (source, destination) → when the Isend started
	first := make([]uint32, P)
	for r := 0; r < P; r++ {
		left, right := (r+P-1)%P, (r+1)%P
		rk := s.ranks[r]
		first[r] = rk.req + 1
		for _, p := range []struct {
			op   trace.Op
			peer int
		}{{trace.OpIrecv, left}, {trace.OpIrecv, right}, {trace.OpIsend, right}, {trace.OpIsend, left}} {
			rk.req++
			st := s.compute(r)
			s.add(r, trace.Record{Op: p.op, Comm: trace.CommWorld, Peer: int32(p.peer), Tag: tag, Bytes: 8, Root: trace.PeerNone,
				Req: rk.req, Flags: trace.FlagNewReq, CallSite: 0x300 + uint64(p.op)}, st, st+300)
			if p.op == trace.OpIsend {
				sent[[2]int{r, p.peer}] = st
			}
		}
	}
	for r := 0; r < P; r++ {
		left, right := (r+P-1)%P, (r+1)%P
		st := s.compute(r)
		arrived := max(sent[[2]int{left, r}]+s.latency(), sent[[2]int{right, r}]+s.latency())
		s.add(r, trace.Record{Op: trace.OpWaitall, Comm: trace.CommNone, Peer: trace.PeerNone, Root: trace.PeerNone, Count: 4, CallSite: 0x400},
			st, max(st, arrived)+1_000)
		rk := s.ranks[r]
		for k, peer := range []int{left, right, right, left} {
			rk.recs = append(rk.recs, trace.Record{Op: trace.OpReqDone, Req: first[r] + uint32(k), Peer: int32(peer), Tag: tag,
				Bytes: 8 * uint64(1-k/2), Root: trace.PeerNone})
		}
	}
}

// coll: a collective on MPI_COMM_WORLD: everyone needs everyone
// (root < 0) or everyone needs the root (a broadcast).
func (s *skewSim) coll(op trace.Op, root int) {
	P := len(s.ranks)
	s.seq++
	st := make([]int64, P)
	last := int64(0)
	for r := range st {
		st[r] = s.compute(r)
		last = max(last, st[r])
	}
	for r := 0; r < P; r++ {
		en := last + 2_000 + int64(r)*100
		rt := trace.PeerNone
		if root >= 0 {
			rt = int32(root)
			en = max(st[r], st[root]+s.latency()) + 1_000
			if r == root {
				en = st[r] + 2_000
			}
		}
		s.add(r, trace.Record{Op: op, Comm: trace.CommWorld, Peer: trace.PeerNone, Root: rt, Seq: s.seq, Bytes: 8, CallSite: 0x500 + uint64(op)}, st[r], en)
	}
}

// simulate runs the program on the true clock: MPI_Init at the same time
// everywhere, a Barrier, then iterations of a token ring, a halo exchange,
// an Allreduce and now and then a Bcast, and MPI_Finalize.
func simulate(seed int64) [][]trace.Record {
	s := &skewSim{rng: rand.New(rand.NewSource(seed))}
	for r := 0; r < skewRanks; r++ {
		s.ranks = append(s.ranks, &simRank{})
		s.add(r, trace.Record{Op: trace.OpInit, Comm: trace.CommNone, Peer: trace.PeerNone, Root: trace.PeerNone}, skewBase, skewBase+100_000)
	}
	s.coll(trace.OpBarrier, -1)
	for i := 0; i < skewIters; i++ {
		s.ring(1)
		s.halo(2)
		s.coll(trace.OpAllreduce, -1)
		if i%3 == 0 {
			s.coll(trace.OpBcast, i%skewRanks)
		}
	}
	out := make([][]trace.Record, skewRanks)
	for r, rk := range s.ranks {
		st := s.compute(r)
		s.add(r, trace.Record{Op: trace.OpFinalize, Comm: trace.CommNone, Peer: trace.PeerNone, Root: trace.PeerNone}, st, st+10_000)
		out[r] = rk.recs
	}
	return out
}

// skewCase gives rank r's clock parameters: the offset the sync claims at
// MPI_Init and, for a drift, at MPI_Finalize. The records are on the true
// clock, so these offsets are the clock error the analyzer sees.
type skewCase struct {
	name  string
	init  func(r int) int64
	final func(r int) int64 // nil: no measurement at MPI_Finalize
	some  bool              // violations are designed to occur
}

func skewCases() []skewCase {
	off := func(d int64) func(int) int64 { return func(r int) int64 { return int64(r) * d } }
	return []skewCase{
		{name: "none", init: off(0)},
		// Below most latencies: only the fastest messages between distant
		// ranks are violated.
		{name: "small", init: off(-4_000), some: true},
		// Above every latency (80 µs) but below the computation between
		// calls (1 ms), so that no correction reaches the next call.
		{name: "large", init: off(-300_000), some: true},
		{name: "large ahead", init: off(300_000), some: true},
		{name: "drift", init: off(0), final: off(-300_000), some: true},
	}
}

// writeSkewed writes the simulated run's logs into dir with the case's
// clock parameters.
func writeSkewed(t *testing.T, dir string, recs [][]trace.Record, sc skewCase) {
	t.Helper()
	for r, rr := range recs {
		h := &trace.Header{RunID: "skew-" + sc.name, Rank: r, Size: len(recs), Host: "sim", PID: 100 + r,
			Exe: "/sim/skew", T0: skewBase, Logger: "graph skew_test",
			Clock: trace.Clock{Method: "pingpong", Init: trace.SyncPoint{LocalNs: skewBase, OffsetNs: sc.init(r)}}}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("rank-%06d.cplog", r)))
		if err != nil {
			t.Fatal(err)
		}
		w, err := trace.NewWriter(f, h)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRecords(rr); err != nil {
			t.Fatal(err)
		}
		if sc.final != nil {
			if err := w.WriteClockFinal(trace.SyncPoint{LocalNs: rr[len(rr)-1].End, OffsetNs: sc.final(r)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(trace.Trailer{Status: trace.EndFinalized}); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// skewCall is a call of a log as read back, with the requests it
// completed (its ReqDone sub-records), on the global timeline its rank's
// clock parameters give (globalOf: the documented mapping, computed here
// rather than with the analyzer's code).
type skewCall struct {
	rec        trace.Record
	start, end int64 // global, before any correction
	done       []uint32
}

func globalOf(c *trace.Clock, t int64) int64 {
	off := float64(c.Init.OffsetNs)
	if f := c.Final; f != nil && f.LocalNs != c.Init.LocalNs {
		off += float64(f.OffsetNs-c.Init.OffsetNs) * float64(t-c.Init.LocalNs) / float64(f.LocalNs-c.Init.LocalNs)
	}
	return t + int64(math.Round(off))
}

func readSkewed(t *testing.T, dir string, P int) ([][]skewCall, []trace.Clock) {
	t.Helper()
	out := make([][]skewCall, P)
	clocks := make([]trace.Clock, P)
	for r := 0; r < P; r++ {
		l, err := trace.ReadFile(filepath.Join(dir, fmt.Sprintf("rank-%06d.cplog", r)))
		if err != nil {
			t.Fatal(err)
		}
		c := &l.Header.Clock
		clocks[r] = *c
		for _, rec := range l.Records {
			if rec.Op.IsSub() {
				if rec.Op == trace.OpReqDone {
					n := len(out[r]) - 1
					out[r][n].done = append(out[r][n].done, rec.Req)
				}
				continue
			}
			out[r] = append(out[r], skewCall{rec: rec, start: globalOf(c, rec.Start), end: globalOf(c, rec.End)})
		}
	}
	return out, clocks
}

// skewDep is a dependency by (rank, call index): done cannot end before
// cause starts.
type skewDep struct {
	doneRank, done, causeRank, cause int
	msg                              bool // a message: the receive's completion needs the send
}

// skewDeps matches the messages (per source, destination and tag, in
// posting order; a request's completion is the call whose ReqDone names
// it) and the collective instances (by sequence number) of the logs, and
// lists what each completion needs.
func skewDeps(calls [][]skewCall) []skewDep {
	type key struct{ src, dst, tag int32 }
	type end struct{ rank, post, done int }
	sends, recvs := map[key][]end{}, map[key][]end{}
	var keys []key
	completion := func(r, i int) int {
		c := calls[r][i].rec
		if c.Flags&trace.FlagNewReq == 0 {
			return i
		}
		for j := i + 1; j < len(calls[r]); j++ {
			for _, q := range calls[r][j].done {
				if q == c.Req {
					return j
				}
			}
		}
		return -1
	}
	for r := range calls {
		for i, c := range calls[r] {
			switch c.rec.Op {
			case trace.OpSend, trace.OpIsend:
				k := key{int32(r), c.rec.Peer, c.rec.Tag}
				if sends[k] == nil {
					keys = append(keys, k)
				}
				sends[k] = append(sends[k], end{r, i, completion(r, i)})
			case trace.OpRecv, trace.OpIrecv:
				k := key{c.rec.Peer, int32(r), c.rec.Tag}
				recvs[k] = append(recvs[k], end{r, i, completion(r, i)})
			}
		}
	}
	var deps []skewDep
	for _, k := range keys {
		ss, rs := sends[k], recvs[k]
		for i := 0; i < min(len(ss), len(rs)); i++ {
			deps = append(deps, skewDep{rs[i].rank, rs[i].done, ss[i].rank, ss[i].post, true})
		}
	}
	type member struct{ rank, call int }
	inst := map[uint32][]member{}
	for r := range calls {
		for i, c := range calls[r] {
			if c.rec.Op.Class() == trace.ClassCollective {
				inst[c.rec.Seq] = append(inst[c.rec.Seq], member{r, i})
			}
		}
	}
	for _, ms := range inst {
		op, root := calls[ms[0].rank][ms[0].call].rec.Op, calls[ms[0].rank][ms[0].call].rec.Root
		for _, m := range ms {
			for _, c := range ms {
				if c == m || op == trace.OpBcast && c.rank != int(root) {
					continue
				}
				deps = append(deps, skewDep{m.rank, m.call, c.rank, c.call, false})
			}
		}
	}
	return deps
}

// TestSkewClockCondition: receives that, on the clocks the logs give,
// end before their sends start are counted and corrected; afterwards every
// dependency holds, every thread is in order, no edge goes back in time,
// and the critical path is as long as the run.
func TestSkewClockCondition(t *testing.T) {
	recs := simulate(11)
	for _, sc := range skewCases() {
		t.Run(sc.name, func(t *testing.T) { checkSkewed(t, recs, sc) })
	}
}

// checkSkewed writes the simulated run with the case's clock parameters,
// analyses it and checks the clock correction.
func checkSkewed(t *testing.T, recs [][]trace.Record, sc skewCase) {
	dir := t.TempDir()
	writeSkewed(t, dir, recs, sc)
	calls, clocks := readSkewed(t, dir, skewRanks)
	deps := skewDeps(calls)

	// What the logs say: the messages whose receive completion ends
	// before the send starts, on the logs' global clock, each counted
	// once whichever call completed it. The simulations keep the clock
	// error (at most 0.9 ms) below the computation (at least 1 ms) after
	// every receive completion, so that correcting one receive never
	// moves another message's receive or send: the count is the same
	// whatever order the corrections are made in.
	want, msgs := 0, 0
	perDone := map[[2]int]int{} // violated receives by the (rank, call) that completed them
	var maxErr int64            // the largest clock error between two ranks
	for r := 0; r < skewRanks; r++ {
		for q := 0; q < skewRanks; q++ {
			for _, at := range []int64{skewBase, calls[r][len(calls[r])-1].rec.End} {
				d := globalOf(&clocks[r], at) - globalOf(&clocks[q], at)
				maxErr = max(maxErr, d, -d)
			}
		}
	}
	for _, d := range deps {
		if !d.msg {
			continue
		}
		msgs++
		margin := calls[d.doneRank][d.done].end - calls[d.causeRank][d.cause].start
		if margin > -100 && margin < 100 {
			t.Fatalf("rank %d call %d ends %d ns after rank %d call %d starts: too close to call (the simulation must keep clear of it)",
				d.doneRank, d.done, margin, d.causeRank, d.cause)
		}
		if margin < 0 {
			want++
			perDone[[2]int{d.doneRank, d.done}]++
		}
	}
	several := 0
	for _, n := range perDone {
		if n > 1 {
			several++
		}
	}
	if sc.some != (want > 0) {
		t.Fatalf("the case is designed to have violations: %v, but the logs have %d of %d messages violated", sc.some, want, msgs)
	}
	if sc.name == "small" && want == msgs {
		t.Fatalf("small clock error: every message (%d) is violated, want only some", msgs)
	}

	run, err := graph.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Build(&mpix.Single{}, run)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d messages, %d collective instances; clock error up to %d ns between ranks; %d receives end before their send starts, completed by %d calls (%d of which complete several); PAG.ClockViolations %d, Inconsistent %d; notes %q",
		g.Messages, len(g.Colls), maxErr, want, len(perDone), several, g.ClockViolations, g.Inconsistent, g.Notes)
	if g.Messages != msgs {
		t.Fatalf("PAG.Messages = %d, the logs have %d", g.Messages, msgs)
	}
	if g.ClockViolations != want {
		t.Errorf("PAG.ClockViolations = %d, but %d receives end before their send starts, completed by %d calls, %d of which complete several of them",
			g.ClockViolations, want, len(perDone), several)
	}
	if g.Inconsistent != 0 {
		t.Errorf("PAG.Inconsistent = %d: a clock error alone must be correctable", g.Inconsistent)
	}

	id := func(r, i int) int32 { return g.RankStart[r] + int32(i) }
	for r := 0; r < skewRanks; r++ {
		if n := int(g.RankStart[r+1] - g.RankStart[r]); n != len(calls[r]) {
			t.Fatalf("rank %d: %d calls in the PAG, %d in the log", r, n, len(calls[r]))
		}
	}

	// Corrections move events forward only, by no more than the
	// clock error; each rank's first event stays.
	for r := 0; r < skewRanks; r++ {
		for i, c := range calls[r] {
			v := id(r, i)
			if g.Op[v] != c.rec.Op {
				t.Fatalf("call %d: %v, the log has %v", v, g.Op[v], c.rec.Op)
			}
			ds, de := g.Start[v]-c.start, g.End[v]-c.end
			if ds < 0 || de < 0 || ds > maxErr || de > maxErr {
				t.Errorf("rank %d call %d (%v): [%d, %d] corrected to [%d, %d]: moved by %d, %d ns, want 0..%d (forward, at most the clock error)",
					r, i, c.rec.Op, c.start, c.end, g.Start[v], g.End[v], ds, de, maxErr)
			}
			if i == 0 && ds != 0 {
				t.Errorf("rank %d: the first event moved from %d to %d", r, c.start, g.Start[v])
			}
		}
	}

	// Every dependency holds: a completion ends no earlier than
	// its cause starts.
	bad := 0
	for _, d := range deps {
		done, cause := id(d.doneRank, d.done), id(d.causeRank, d.cause)
		if g.End[done] < g.Start[cause] {
			if bad++; bad <= 5 {
				t.Errorf("after correction, rank %d's %v ends at %d, before rank %d's %v starts at %d",
					d.doneRank, g.Op[done], g.End[done], d.causeRank, g.Op[cause], g.Start[cause])
			}
		}
	}

	// Program order on every thread (one per rank): each call
	// ends no earlier than it starts, and starts no earlier than
	// the one before it ended.
	for r := 0; r < skewRanks; r++ {
		for v := g.RankStart[r]; v < g.RankStart[r+1]; v++ {
			if g.End[v] < g.Start[v] {
				t.Errorf("rank %d: call %d (%v) ends at %d before it starts at %d", r, v, g.Op[v], g.End[v], g.Start[v])
			}
			if v > g.RankStart[r] && g.Start[v] < g.End[v-1] {
				t.Errorf("rank %d: call %d (%v) starts at %d before the previous call ends at %d", r, v, g.Op[v], g.Start[v], g.End[v-1])
			}
		}
	}

	// No edge goes back in time, and every vertex has an edge that
	// carries the time since its cause: the graph's times are
	// consistent (checkEdges), so the longest distance to every vertex
	// is its time since the run's start.
	checkEdges(t, g)
	for _, w := range g.Waits {
		if w.Ns < 0 {
			t.Errorf("call %d waits %d ns (%v)", w.Call, w.Ns, w.Kind)
		}
	}

	// The critical path runs from the run's start to its last event and
	// is as long as the run: the launch edges account for the ranks'
	// start skew, so only clock error could make a difference, and the
	// correction has removed it from the graph.
	p := mustPath(t, g)
	var initLo int64 = math.MaxInt64
	for r := 0; r < skewRanks; r++ {
		initLo = min(initLo, g.Start[g.RankStart[r]])
	}
	if src, last := p.Vertices[0], p.Vertices[len(p.Vertices)-1]; src != g.StartVertex || last != g.Target || g.Time(last) != g.T1 {
		t.Errorf("the critical path runs from %d to %d (time %d), want the start %d to the target %d at T1 = %d",
			src, last, g.Time(last), g.StartVertex, g.Target, g.T1)
	}
	if g.T0 != initLo {
		t.Errorf("T0 = %d, the earliest MPI_Init starts at %d", g.T0, initLo)
	}
	if p.Length != g.T1-g.T0 {
		t.Errorf("critical path length %d, run T1-T0 = %d", p.Length, g.T1-g.T0)
	}
	checkLastArriving(t, g, p)
	t.Logf("critical path %d ns, T1-T0 %d ns, %d vertices", p.Length, g.T1-g.T0, len(p.Vertices))
}

// fanIn: right after a collective (the ranks leave it nearly together),
// every other rank sends one message to rank to, after lead[r] ns, and rank
// to receives them all with Irecvs and one Waitall, which ends just after
// the last one arrived. Several receives thus end within a few µs of their
// sends' starts, all completed by the same call.
func (s *skewSim) fanIn(to int, tag int32, lead []int64) {
	P := len(s.ranks)
	sent := map[int]int64{}
	for r := 0; r < P; r++ {
		if r == to {
			continue
		}
		rk := s.ranks[r]
		rk.req++
		st := rk.t + lead[r]
		s.add(r, trace.Record{Op: trace.OpIsend, Comm: trace.CommWorld, Peer: int32(to), Tag: tag, Bytes: 8, Root: trace.PeerNone,
			Req: rk.req, Flags: trace.FlagNewReq, CallSite: 0x600}, st, st+300)
		sent[r] = st
		w := s.compute(r)
		s.add(r, trace.Record{Op: trace.OpWait, Comm: trace.CommNone, Peer: trace.PeerNone, Root: trace.PeerNone, Count: 1, CallSite: 0x610}, w, w+500)
		rk.recs = append(rk.recs, trace.Record{Op: trace.OpReqDone, Req: rk.req, Peer: int32(to), Tag: tag, Root: trace.PeerNone})
	}
	rk := s.ranks[to]
	first := rk.req + 1
	arrived := int64(0)
	for r := 0; r < P; r++ {
		if r == to {
			continue
		}
		rk.req++
		st := rk.t + 1_000
		s.add(to, trace.Record{Op: trace.OpIrecv, Comm: trace.CommWorld, Peer: int32(r), Tag: tag, Bytes: 8, Root: trace.PeerNone,
			Req: rk.req, Flags: trace.FlagNewReq, CallSite: 0x620}, st, st+300)
		arrived = max(arrived, sent[r]+2_000)
	}
	st := rk.t + 1_000
	s.add(to, trace.Record{Op: trace.OpWaitall, Comm: trace.CommNone, Peer: trace.PeerNone, Root: trace.PeerNone, Count: uint32(P - 1), CallSite: 0x630},
		st, max(st, arrived)+1_000)
	for r := 0; r < P; r++ {
		if r != to {
			rk.recs = append(rk.recs, trace.Record{Op: trace.OpReqDone, Req: first, Peer: int32(r), Tag: tag, Bytes: 8, Root: trace.PeerNone})
			first++
		}
	}
}

// simulateFanIn: MPI_Init, then rounds of an Allreduce and a fan-in to
// the last rank, and of an Allreduce and a fan-in to rank 0, then
// MPI_Finalize. The senders start later the lower their rank (by 40 µs a
// rank), so that on clocks that put the receiver early (the last rank,
// rank r behind by r·D) or the senders late (rank 0, rank r ahead by r·D),
// the receiver's Waitall seems to end before every one of its messages
// was sent, and the message from the lowest rank seems sent last.
func simulateFanIn() [][]trace.Record {
	s := &skewSim{rng: rand.New(rand.NewSource(5))}
	for r := 0; r < skewRanks; r++ {
		s.ranks = append(s.ranks, &simRank{})
		s.add(r, trace.Record{Op: trace.OpInit, Comm: trace.CommNone, Peer: trace.PeerNone, Root: trace.PeerNone}, skewBase, skewBase+100_000)
	}
	lead := make([]int64, skewRanks)
	for r := range lead {
		lead[r] = 10_000 + int64(skewRanks-r)*40_000
	}
	for i := 0; i < 3; i++ {
		s.coll(trace.OpAllreduce, -1)
		s.fanIn(skewRanks-1, 5, lead)
		s.coll(trace.OpAllreduce, -1)
		s.fanIn(0, 6, lead)
	}
	out := make([][]trace.Record, skewRanks)
	for r, rk := range s.ranks {
		st := s.compute(r)
		s.add(r, trace.Record{Op: trace.OpFinalize, Comm: trace.CommNone, Peer: trace.PeerNone, Root: trace.PeerNone}, st, st+10_000)
		out[r] = rk.recs
	}
	return out
}

// TestSkewClockConditionFanIn: a call that completes several receives
// that all seem to end before their sends started counts each of them.
func TestSkewClockConditionFanIn(t *testing.T) {
	recs := simulateFanIn()
	for _, sc := range skewCases() {
		t.Run(sc.name, func(t *testing.T) { checkSkewed(t, recs, sc) })
	}
}
