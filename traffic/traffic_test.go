package traffic

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
	"github.com/cpath/cpath/trace"
)

// TestHistogram: each size falls in the bucket [2^(k-1), 2^k - 1] (0 in
// its own), and Buckets lists the range from the first non-empty bucket
// to the last, the empty ones between included.
func TestHistogram(t *testing.T) {
	for _, tc := range []struct {
		sizes []uint64
		want  []Bucket
	}{
		{nil, []Bucket{}},
		{[]uint64{0}, []Bucket{{0, 0, 1}}},
		{[]uint64{1, 1}, []Bucket{{1, 1, 2}}},
		{[]uint64{2, 3}, []Bucket{{2, 3, 2}}},
		{[]uint64{4, 7, 8}, []Bucket{{4, 7, 2}, {8, 15, 1}}},
		{[]uint64{0, 5}, []Bucket{{0, 0, 1}, {1, 1, 0}, {2, 3, 0}, {4, 7, 1}}},
		{[]uint64{1023, 1024, 1025, 2047, 2048}, []Bucket{{512, 1023, 1}, {1024, 2047, 3}, {2048, 4095, 1}}},
		{[]uint64{1<<63 - 1, 1 << 63, 1<<64 - 1}, []Bucket{{1 << 62, 1<<63 - 1, 1}, {1 << 63, 1<<64 - 1, 2}}},
	} {
		var h Histogram
		for _, s := range tc.sizes {
			h.Add(s)
		}
		if got := h.Buckets(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: %v, want %v", tc.sizes, got, tc.want)
		}
	}
}

// cell is one expected pair of a matrix.
type cell struct {
	src, dst     int32
	count, bytes int64
}

func cells(m *Pairs) []cell {
	out := []cell{}
	for i := range m.Src {
		out = append(out, cell{m.Src[i], m.Dst[i], m.Count[i], m.Bytes[i]})
	}
	return out
}

// inst is a collective instance for the synthetic PAG: its operation, its
// communicator, its root (world rank, -1 for none) and its members' world
// ranks and logged bytes.
type inst struct {
	op    trace.Op
	comm  int32
	root  int32
	ranks []int
	bytes []uint64
}

// collPAG is a PAG of ranks ranks, one call per member of each instance
// (rank by rank, the call numbering Build uses), with the communicators
// comms and the instances as its coordinated collectives.
func collPAG(ranks int, comms []graph.CommInfo, insts []inst) *graph.PAG {
	perRank := make([][]int, ranks) // by rank: the instances it takes part in
	for k, in := range insts {
		for _, r := range in.ranks {
			perRank[r] = append(perRank[r], k)
		}
	}
	p := &graph.PAG{Ranks: ranks, RankStart: make([]int32, ranks+1), Comms: comms}
	call := map[[2]int]int32{} // (instance, rank) → call
	for r := 0; r < ranks; r++ {
		p.RankStart[r+1] = p.RankStart[r] + int32(len(perRank[r]))
		for i, k := range perRank[r] {
			call[[2]int{k, r}] = p.RankStart[r] + int32(i)
		}
	}
	for k, in := range insts {
		c := graph.Collective{Op: in.op, Comm: in.comm, Seq: uint32(k), Root: in.root, First: int32(len(p.CollPost)), N: int32(len(in.ranks))}
		for i, r := range in.ranks { // in call order: world rank order
			p.CollPost = append(p.CollPost, call[[2]int{k, r}])
			p.PostBytes = append(p.PostBytes, in.bytes[i])
		}
		p.Colls = append(p.Colls, c)
	}
	return p
}

// TestCollectivePairs: each kind of collective is attributed to the pairs
// its data flows between, with the bytes of the package comment.
func TestCollectivePairs(t *testing.T) {
	world := graph.CommInfo{Name: "W0.0", Members: []int32{0, 1, 2, 3}}
	// A split of ranks 1 and 3 whose rank order is 3, 1.
	odd := graph.CommInfo{Name: "S3.1", Members: []int32{3, 1}}
	inter := graph.CommInfo{Name: "I0.1", Members: []int32{0, 1}, Inter: true}
	spawned := graph.CommInfo{Name: "P0.2", Members: []int32{0}, Inter: true}
	// A non-periodic line 0-1-2-3 (a 1-D cart): MPI_PROC_NULL at the ends.
	pn := trace.PeerProcNull
	line := graph.CommInfo{Name: "K0.1", Members: []int32{0, 1, 2, 3},
		Sources: [][]int32{{pn, 1}, {0, 2}, {1, 3}, {2, pn}}, Dests: [][]int32{{pn, 1}, {0, 2}, {1, 3}, {2, pn}}}
	comms := []graph.CommInfo{world, odd, inter, spawned, line}
	all := []int{0, 1, 2, 3}
	for _, tc := range []struct {
		name  string
		insts []inst
		want  []cell
		sizes []Bucket
	}{
		{"bcast from 2", []inst{{trace.OpBcast, 0, 2, all, []uint64{8, 8, 8, 8}}},
			[]cell{{2, 0, 1, 8}, {2, 1, 1, 8}, {2, 3, 1, 8}}, []Bucket{{8, 15, 4}}},
		{"scatterv from 0: what each received", []inst{{trace.OpScatterv, 0, 0, all, []uint64{4, 1, 2, 3}}},
			[]cell{{0, 1, 1, 1}, {0, 2, 1, 2}, {0, 3, 1, 3}}, []Bucket{{1, 1, 1}, {2, 3, 2}, {4, 7, 1}}},
		{"gather to 1: what each contributed", []inst{{trace.OpGather, 0, 1, all, []uint64{16, 16, 32, 16}}},
			[]cell{{0, 1, 1, 16}, {2, 1, 1, 32}, {3, 1, 1, 16}}, []Bucket{{16, 31, 3}, {32, 63, 1}}},
		{"ireduce to 3", []inst{{trace.OpIreduce, 0, 3, all, []uint64{8, 8, 8, 8}}},
			[]cell{{0, 3, 1, 8}, {1, 3, 1, 8}, {2, 3, 1, 8}}, []Bucket{{8, 15, 4}}},
		{"allreduce twice: every ordered pair, once per instance", []inst{
			{trace.OpAllreduce, 0, -1, all, []uint64{8, 8, 8, 8}},
			{trace.OpAllreduce, 0, -1, all, []uint64{8, 8, 8, 8}}},
			[]cell{{0, 1, 2, 16}, {0, 2, 2, 16}, {0, 3, 2, 16}, {1, 0, 2, 16}, {1, 2, 2, 16}, {1, 3, 2, 16},
				{2, 0, 2, 16}, {2, 1, 2, 16}, {2, 3, 2, 16}, {3, 0, 2, 16}, {3, 1, 2, 16}, {3, 2, 2, 16}},
			[]Bucket{{8, 15, 8}}},
		{"allgatherv: each member's own contribution", []inst{{trace.OpAllgatherv, 1, -1, []int{1, 3}, []uint64{10, 20}}},
			[]cell{{1, 3, 1, 10}, {3, 1, 1, 20}}, []Bucket{{8, 15, 1}, {16, 31, 1}}},
		{"alltoall: the total spread over the members", []inst{{trace.OpAlltoall, 0, -1, all, []uint64{400, 400, 400, 800}}},
			[]cell{{0, 1, 1, 100}, {0, 2, 1, 100}, {0, 3, 1, 100}, {1, 0, 1, 100}, {1, 2, 1, 100}, {1, 3, 1, 100},
				{2, 0, 1, 100}, {2, 1, 1, 100}, {2, 3, 1, 100}, {3, 0, 1, 200}, {3, 1, 1, 200}, {3, 2, 1, 200}},
			[]Bucket{{256, 511, 3}, {512, 1023, 1}}},
		{"scan on a communicator ordered 3, 1: 3 before 1", []inst{{trace.OpScan, 1, -1, []int{1, 3}, []uint64{8, 8}}},
			[]cell{{3, 1, 1, 8}}, []Bucket{{8, 15, 2}}},
		{"exscan on world", []inst{{trace.OpExscan, 0, -1, []int{0, 1, 2}, []uint64{8, 8, 8}}},
			// A partial instance (rank 3 missing): its members only.
			[]cell{{0, 1, 1, 8}, {0, 2, 1, 8}, {1, 2, 1, 8}}, []Bucket{{8, 15, 3}}},
		{"neighbor alltoall on a line: to the real out-neighbours", []inst{
			{trace.OpNeighborAlltoall, 4, -1, all, []uint64{4, 8, 8, 4}},
			{trace.OpIneighborAllgather, 4, -1, all, []uint64{2, 4, 4, 2}}},
			[]cell{{0, 1, 2, 6}, {1, 0, 2, 6}, {1, 2, 2, 6}, {2, 1, 2, 6}, {2, 3, 2, 6}, {3, 2, 2, 6}},
			[]Bucket{{2, 3, 2}, {4, 7, 4}, {8, 15, 2}}},
		{"barrier: no data", []inst{{trace.OpBarrier, 0, -1, all, []uint64{0, 0, 0, 0}}}, []cell{}, []Bucket{}},
		{"intercommunicator: sizes only", []inst{{trace.OpAllreduce, 2, -1, []int{0, 1, 2}, []uint64{8, 8, 8}}},
			[]cell{}, []Bucket{{8, 15, 3}}},
		{"spawned intercommunicator: sizes only", []inst{{trace.OpBcast, 3, 0, []int{0, 3}, []uint64{8, 8}}},
			[]cell{}, []Bucket{{8, 15, 2}}},
		{"rooted without a root: sizes only", []inst{{trace.OpBcast, 0, -1, all, []uint64{2, 2, 2, 2}}},
			[]cell{}, []Bucket{{2, 3, 4}}},
		{"instances on two communicators add up", []inst{
			{trace.OpAllreduce, 0, -1, all, []uint64{1, 1, 1, 1}},
			{trace.OpAllreduce, 1, -1, []int{1, 3}, []uint64{2, 2}},
			{trace.OpBcast, 0, 1, all, []uint64{4, 4, 4, 4}}},
			[]cell{{0, 1, 1, 1}, {0, 2, 1, 1}, {0, 3, 1, 1}, {1, 0, 2, 5}, {1, 2, 2, 5}, {1, 3, 3, 7},
				{2, 0, 1, 1}, {2, 1, 1, 1}, {2, 3, 1, 1}, {3, 0, 1, 1}, {3, 1, 2, 3}, {3, 2, 1, 1}},
			[]Bucket{{1, 1, 4}, {2, 3, 2}, {4, 7, 4}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := collPAG(4, comms, tc.insts)
			res := Analyze(p)
			if got := cells(&res.Coll); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("pairs %v, want %v", got, tc.want)
			}
			if got := res.CollSizes.Buckets(); !reflect.DeepEqual(got, tc.sizes) {
				t.Errorf("sizes %v, want %v", got, tc.sizes)
			}
			if res.P2P.Len() != 0 {
				t.Errorf("point-to-point pairs from collectives: %v", cells(&res.P2P))
			}
			// Coordinated by two analyzer ranks instead: the same sums.
			if len(tc.insts) > 1 {
				a := collPAG(4, comms, tc.insts[:1])
				b := collPAG(4, comms, tc.insts[1:])
				m := Merge([]*Result{Analyze(a), Analyze(b)})
				if got := cells(&m.Coll); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("merged from two shares: %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestP2PPairs: every message counts once for its (sender, receiver),
// with its bytes; the communicator table sums calls and time by
// communicator, leaving out completions and MPI_Init/MPI_Finalize.
func TestP2PPairs(t *testing.T) {
	// Ranks 0..2 with 3, 2, 2 calls, then MPI_Finalize on rank 2.
	p := &graph.PAG{Ranks: 3, RankStart: []int32{0, 3, 5, 8}, Comms: []graph.CommInfo{{Name: "W0.0"}, {Name: "D0.1"}}}
	p.Op = []trace.Op{trace.OpSend, trace.OpIsend, trace.OpIsend, trace.OpRecv, trace.OpWait, trace.OpSendrecv, trace.OpRecv, trace.OpFinalize}
	p.Comm = []int32{0, 0, 1, 0, -1, 1, 0, 0}
	p.Start = []int64{0, 10, 20, 30, 40, 50, 60, 70}
	p.End = []int64{5, 12, 29, 31, 45, 58, 61, 1000}
	// Messages: 0→1 twice (calls 0, 1 → 3, 4), 2→1 (5 → 3), 1→2 (3 → 6), 0→2 zero bytes.
	p.MsgSend = []int32{0, 1, 5, 3, 2}
	p.MsgRecv = []int32{3, 4, 3, 6, 6}
	p.MsgBytes = []uint64{100, 28, 1 << 20, 7, 0}
	res := Analyze(p)
	want := []cell{{0, 1, 2, 128}, {0, 2, 1, 0}, {1, 2, 1, 7}, {2, 1, 1, 1 << 20}}
	if got := cells(&res.P2P); !reflect.DeepEqual(got, want) {
		t.Errorf("pairs %v, want %v", got, want)
	}
	wantSizes := []Bucket{{0, 0, 1}, {1, 1, 0}, {2, 3, 0}, {4, 7, 1}, {8, 15, 0}, {16, 31, 1}, {32, 63, 0}, {64, 127, 1}}
	for k := 8; k <= 20; k++ {
		lo, hi := BucketRange(k)
		wantSizes = append(wantSizes, Bucket{lo, hi, 0})
	}
	wantSizes = append(wantSizes, Bucket{1 << 20, 1<<21 - 1, 1})
	if got := res.P2PSizes.Buckets(); !reflect.DeepEqual(got, wantSizes) {
		t.Errorf("sizes %v, want %v", got, wantSizes)
	}
	if want := []Comm{{Calls: 4, TimeNs: 5 + 2 + 1 + 1}, {Calls: 2, TimeNs: 9 + 8}}; !reflect.DeepEqual(res.Comms, want) {
		t.Errorf("communicators %v, want %v", res.Comms, want)
	}
}

// TestPairTableGrows: many pairs, added out of order and repeatedly, sum
// up in (source, destination) order.
func TestPairTableGrows(t *testing.T) {
	tb := newPairTable(1)
	const n = 300
	for rep := 0; rep < 3; rep++ {
		for i := n - 1; i >= 0; i-- {
			tb.add(int32(i%17), int32(i), 1, int64(i))
		}
	}
	m := tb.pairs()
	if m.Len() != n {
		t.Fatalf("%d pairs, want %d", m.Len(), n)
	}
	for i := 1; i < n; i++ {
		if pairKey(m.Src[i-1], m.Dst[i-1]) >= pairKey(m.Src[i], m.Dst[i]) {
			t.Fatalf("pairs out of order at %d", i)
		}
	}
	for i := range m.Src {
		if m.Src[i] != m.Dst[i]%17 || m.Count[i] != 3 || m.Bytes[i] != 3*int64(m.Dst[i]) {
			t.Fatalf("pair %d: %d→%d ×%d %d bytes", i, m.Src[i], m.Dst[i], m.Count[i], m.Bytes[i])
		}
	}
}

// TestSameAtAnyP: on generated runs, the traffic is the same whether one
// analyzer rank or two build and analyse the graph, and the matrix counts
// every matched message once.
func TestSameAtAnyP(t *testing.T) {
	for _, pat := range []gen.Pattern{gen.Halo, gen.Collectives, gen.RandomP2P} {
		t.Run(fmt.Sprint(pat), func(t *testing.T) {
			dir := t.TempDir()
			if err := gen.Write(gen.Spec{Dir: dir, Ranks: 5, CallsPerRank: 600, Pattern: pat, Seed: 7}); err != nil {
				t.Fatal(err)
			}
			var results [2]*Result
			var messages int
			for i, P := range []int{1, 2} {
				errs := make([]error, P)
				shares := make([]*Result, P)
				mpixtest.Run(P, func(c mpix.Comm) {
					run, err := graph.Load(dir)
					if err = mpix.Agree(c, err); err != nil {
						errs[c.Rank()] = err
						return
					}
					p, err := graph.Build(c, run)
					if err != nil {
						errs[c.Rank()] = err
						return
					}
					shares[c.Rank()] = Analyze(p)
					messages = p.Messages
				})
				for _, err := range errs {
					if err != nil {
						t.Fatal(err)
					}
				}
				results[i] = Merge(shares)
			}
			if !reflect.DeepEqual(results[0], results[1]) {
				t.Fatalf("P=1 and P=2 differ:\n%+v\n%+v", results[0], results[1])
			}
			n := int64(0)
			for _, c := range results[0].P2P.Count {
				n += c
			}
			var sized int64
			for _, c := range results[0].P2PSizes {
				sized += c
			}
			if n != int64(messages) || sized != n {
				t.Fatalf("the matrix counts %d messages, the histogram %d, the graph matched %d", n, sized, messages)
			}
			t.Logf("%d messages, %d p2p pairs, %d collective pairs", messages, results[0].P2P.Len(), results[0].Coll.Len())
		})
	}
}

// BenchmarkAnalyze measures Analyze and Merge on a generated halo run
// (16 ranks × 50000 calls), against the graph's build time (reported as
// build-ns/op): the matrix must stay a small share of the analysis.
func BenchmarkAnalyze(b *testing.B) {
	dir := b.TempDir()
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: 16, CallsPerRank: 50000, Pattern: gen.Halo, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	run, err := graph.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	p, err := graph.Build(&mpix.Single{}, run)
	if err != nil {
		b.Fatal(err)
	}
	build := time.Since(t0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Merge([]*Result{Analyze(p)})
	}
	b.ReportMetric(float64(build.Nanoseconds()), "build-ns")
}
