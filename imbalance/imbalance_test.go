package imbalance

import (
	"math"
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// instanceCase is one collective instance: its members by world rank,
// when each started and ended, and the figures worked out by hand.
type instanceCase struct {
	name    string
	op      trace.Op
	root    int32   // world rank, -1 for none
	members []int32 // comm-local order: Comms[0].Members
	ranks   []int   // by member, in call order
	start   []int64
	end     []int64

	wantWB, wantWA, wantExec int64
	wantImbalance            float64 // the paper's
	wantSync                 bool
	wantWaiting, wantExecing int64
	wantBounded              float64
	wantProc                 map[int][2]int64 // rank: bounded wait, bounded exec
	sources                  [][]int32        // neighbourhood collectives: in-neighbours by local rank
}

var instanceCases = []instanceCase{
	{
		// startMax 30, endMin 40: execution 10; waits before 30+20+10+0,
		// after 0+0+0+5; bounded 65 / (65 + 4·10).
		name: "barrier", op: trace.OpBarrier, root: -1, members: []int32{0, 1, 2, 3}, ranks: []int{0, 1, 2, 3},
		start: []int64{0, 10, 20, 30}, end: []int64{40, 40, 40, 45},
		wantWB: 60, wantWA: 5, wantExec: 10, wantImbalance: 6.5, wantSync: true,
		wantWaiting: 65, wantExecing: 40, wantBounded: 65.0 / 105,
		wantProc: map[int][2]int64{0: {30, 10}, 3: {5, 10}},
	},
	{
		// No member overlapped the other (rank 0 left before rank 1
		// came): no execution, so the paper's imbalance is 0, but the
		// members only waited: the bounded share is 1.
		name: "allreduce without overlap", op: trace.OpAllreduce, root: -1, members: []int32{0, 1}, ranks: []int{0, 1},
		start: []int64{0, 10}, end: []int64{5, 15},
		wantWB: 10, wantWA: 10, wantExec: 0, wantImbalance: 0, wantSync: true,
		wantWaiting: 20, wantExecing: 0, wantBounded: 1,
		wantProc: map[int][2]int64{0: {10, 0}, 1: {10, 0}},
	},
	{
		// Reduce to root 0: only the root waits, for the last member
		// (started at 30): 30 of its 35. The members' 2 and 2 are
		// execution. The barrier formulas would see no overlap
		// (endMin 12 < startMax 30) and waits of 50 + 43.
		name: "reduce", op: trace.OpReduce, root: 0, members: []int32{0, 1, 2}, ranks: []int{0, 1, 2},
		start: []int64{0, 10, 30}, end: []int64{35, 12, 32},
		wantWB: 50, wantWA: 43, wantExec: 0, wantImbalance: 0, wantSync: false,
		wantWaiting: 30, wantExecing: 9, wantBounded: 30.0 / 39,
		wantProc: map[int][2]int64{0: {30, 5}, 1: {0, 2}, 2: {0, 2}},
	},
	{
		// Bcast from root 2, which comes last (at 20): rank 0 waits 20
		// of its 25, rank 1 15 of its 21, the root none of its 1.
		name: "bcast", op: trace.OpBcast, root: 2, members: []int32{0, 1, 2}, ranks: []int{0, 1, 2},
		start: []int64{0, 5, 20}, end: []int64{25, 26, 21},
		wantWB: 35, wantWA: 4 + 5, wantExec: 1, wantImbalance: 44, wantSync: false,
		wantWaiting: 35, wantExecing: 12, wantBounded: 35.0 / 47,
		wantProc: map[int][2]int64{0: {20, 5}, 1: {15, 6}, 2: {0, 1}},
	},
	{
		// Exscan on a communicator that orders the ranks 2, 1, 0: rank
		// 2 needs nobody, rank 1 needs rank 2 (started before it), rank 0
		// needs ranks 2 and 1 and waits for rank 1 (10) of its 12.
		name: "exscan in communicator order", op: trace.OpExscan, root: -1, members: []int32{2, 1, 0}, ranks: []int{0, 1, 2},
		start: []int64{0, 10, 4}, end: []int64{12, 13, 14},
		wantWB: 10 + 0 + 6, wantWA: 0 + 1 + 2, wantExec: 2, wantImbalance: 9.5, wantSync: false,
		wantWaiting: 10, wantExecing: 15, wantBounded: 10.0 / 25,
		wantProc: map[int][2]int64{0: {10, 2}, 1: {0, 3}, 2: {0, 10}},
	},
	{
		// Neighbor_allgather on a ring 0-1-2-3-0, rank 0 late (at 30):
		// its neighbours 1 and 3 wait for it (30 of 33, 20 of 24), rank 2
		// for rank 3 (5 of 7), rank 0 for nobody. The barrier formulas
		// see no overlap (endMin 12 < startMax 30).
		name: "neighbor ring", op: trace.OpNeighborAllgather, root: -1, members: []int32{0, 1, 2, 3}, ranks: []int{0, 1, 2, 3},
		start: []int64{30, 0, 5, 10}, end: []int64{32, 33, 12, 34},
		wantWB: 0 + 30 + 25 + 20, wantWA: 20 + 21 + 0 + 22, wantExec: 0, wantImbalance: 0, wantSync: false,
		wantWaiting: 55, wantExecing: 11, wantBounded: 55.0 / 66,
		wantProc: map[int][2]int64{0: {0, 2}, 1: {30, 3}, 2: {5, 2}, 3: {20, 4}},
		sources:  [][]int32{{3, 1}, {0, 2}, {1, 3}, {2, 0}},
	},
}

// pagOf is a PAG part that owns no calls and coordinated one instance of
// the case: each rank makes 10 calls, member i's is its rank's first.
func pagOf(tc *instanceCase) *graph.PAG {
	const ranks = 4
	p := &graph.PAG{Ranks: ranks, RankStart: make([]int32, ranks+1)}
	for r := range p.RankStart {
		p.RankStart[r] = int32(10 * r)
	}
	p.Comms = []graph.CommInfo{{Name: "C", Members: tc.members, Sources: tc.sources}}
	p.Colls = []graph.Collective{{Op: tc.op, Comm: 0, Root: tc.root, First: 0, N: int32(len(tc.ranks))}}
	for i, r := range tc.ranks {
		p.CollPost = append(p.CollPost, p.RankStart[r])
		p.CollDone = append(p.CollDone, p.RankStart[r])
		p.PostStart = append(p.PostStart, tc.start[i])
		p.DoneEnd = append(p.DoneEnd, tc.end[i])
	}
	return p
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestInstances(t *testing.T) {
	for _, tc := range instanceCases {
		t.Run(tc.name, func(t *testing.T) {
			res := Merge([]*Result{Analyze(pagOf(&tc))}, []int32{0})
			if len(res.Instances) != 1 {
				t.Fatalf("%d instances, want 1", len(res.Instances))
			}
			in := res.Instances[0]
			if in.WaitBefore != tc.wantWB || in.WaitAfter != tc.wantWA || in.Execution != tc.wantExec || !near(in.Imbalance, tc.wantImbalance) {
				t.Errorf("paper's figures: wait before %d, after %d, execution %d, imbalance %g; want %d, %d, %d, %g",
					in.WaitBefore, in.WaitAfter, in.Execution, in.Imbalance, tc.wantWB, tc.wantWA, tc.wantExec, tc.wantImbalance)
			}
			if in.Synchronising != tc.wantSync {
				t.Errorf("synchronising = %v, want %v", in.Synchronising, tc.wantSync)
			}
			if in.Waiting != tc.wantWaiting || in.Executing != tc.wantExecing || !near(in.Bounded, tc.wantBounded) {
				t.Errorf("bounded: waiting %d, executing %d, share %g; want %d, %d, %g",
					in.Waiting, in.Executing, in.Bounded, tc.wantWaiting, tc.wantExecing, tc.wantBounded)
			}
			if in.Bounded < 0 || in.Bounded > 1 {
				t.Errorf("bounded share %g outside [0, 1]", in.Bounded)
			}
			for r, want := range tc.wantProc {
				p := res.Processes[r]
				if p.BoundedWaitNs != want[0] || p.BoundedExecNs != want[1] {
					t.Errorf("rank %d: bounded wait %d, exec %d; want %d, %d", r, p.BoundedWaitNs, p.BoundedExecNs, want[0], want[1])
				}
				if w := Bounded(want[0], want[1]); !near(p.Bounded, w) {
					t.Errorf("rank %d: bounded share %g, want %g", r, p.Bounded, w)
				}
			}
		})
	}
}

// TestPaperTable holds the per-process formulas to the paper's own table
// (§5.3, the synthetic benchmark: four ranks, a barrier-type collective):
// its total wait and execution times give its imbalance column, and the
// bounded shares worked out by hand (bc, scale 12) from the same figures.
func TestPaperTable(t *testing.T) {
	const exec = 935452868 // total_execution_time of every rank, ns
	rows := []struct {
		wait      int64
		imbalance float64 // the paper's column
		bounded   float64 // wait / (wait + exec), by hand
	}{
		{18105627, 0.019354932, 0.018987431914},
		{1344099347, 1.436843472, 0.589633059578},
		{1335822343, 1.427995347, 0.588137596241},
		{1332357843, 1.424291793, 0.587508400298},
	}
	res := newResult(len(rows))
	for r, row := range rows {
		p := &res.Processes[r]
		p.WaitNs, p.BoundedWaitNs = row.wait, row.wait
		p.ComputeNs = exec // the table gives only execution + computation
	}
	res.finish()
	for r, row := range rows {
		p := res.Processes[r]
		if math.Abs(p.Imbalance-row.imbalance) > 1e-9 {
			t.Errorf("rank %d: imbalance %.9f, the paper's %.9f", r, p.Imbalance, row.imbalance)
		}
		if math.Abs(p.Bounded-row.bounded) > 1e-11 {
			t.Errorf("rank %d: bounded share %.12f, by hand %.12f", r, p.Bounded, row.bounded)
		}
	}
	// Total statistics: total_wait_time=4.030385160, total_execution_time=3.741811472, imbalance=1.077121386.
	tot := res.Program
	if tot.WaitNs != 4030385160 || tot.ComputeNs+tot.ExecNs != 3741811472 {
		t.Errorf("totals: wait %d, execution %d; the paper's 4030385160, 3741811472", tot.WaitNs, tot.ComputeNs+tot.ExecNs)
	}
	if math.Abs(tot.Imbalance-1.077121386) > 1e-9 {
		t.Errorf("program imbalance %.9f, the paper's 1.077121386", tot.Imbalance)
	}
	if math.Abs(tot.Bounded-0.518564487085) > 1e-11 {
		t.Errorf("program bounded share %.12f, by hand 0.518564487085", tot.Bounded)
	}
}

func TestBounded(t *testing.T) {
	for _, tc := range []struct {
		w, x int64
		want float64
	}{{0, 0, 0}, {0, 10, 0}, {10, 0, 1}, {5, 15, 0.25}, {7, -3, 1}} {
		if got := Bounded(tc.w, tc.x); !near(got, tc.want) {
			t.Errorf("Bounded(%d, %d) = %g, want %g", tc.w, tc.x, got, tc.want)
		}
	}
}
