//go:build mpi

package e2e

import (
	"slices"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

const none = trace.PeerNone

// bytesAll is a byte count every rank logs; bytesPer one that depends on the
// rank.
func bytesAll(n uint64) func(int) uint64 { return func(int) uint64 { return n } }
func bytesPer(f func(r uint64) uint64) func(int) uint64 {
	return func(r int) uint64 { return f(uint64(r)) }
}

// expectCollComms is coll.c's communicators in creation order.
var expectCollComms = []commSpec{
	{'S', []int32{0, 2}, nil}, {'S', []int32{1, 3}, nil}, // Comm_split(world, rank%2, rank)
	{'D', []int32{0, 1, 2, 3}, nil},                      // Comm_dup(world)
	{'K', []int32{0, 1, 2, 3}, nil},                      // Cart_create 2x2
	{'k', []int32{0, 1}, nil}, {'k', []int32{2, 3}, nil}, // Cart_sub rows
	{'C', []int32{3, 1, 2}, nil}, // Comm_create({3,1,2}), NULL on rank 0
}

// expectColl is coll.c's collectives per communicator name, in Seq order,
// with world-rank roots and the bytes each rank logs: count × type size of
// what the rank contributes (the send side; summed over the counts arrays
// for Alltoallv/w, times the group size for Alltoall and
// Reduce_scatter_block, the whole input vector for Reduce_scatter), and
// for Scatter(v) the rank's share (recvcount × recvtype).
func expectColl() map[string][]collSpec {
	rp1x4 := bytesPer(func(r uint64) uint64 { return 4 * (r + 1) })   // rank+1 ints
	rp1x16 := bytesPer(func(r uint64) uint64 { return 16 * (r + 1) }) // 4 blocks of rank+1 ints
	blocking := []collSpec{
		{trace.OpBarrier, none, bytesAll(0)},
		{trace.OpBcast, 1, bytesAll(20)},
		{trace.OpReduce, 2, bytesAll(24)},
		{trace.OpAllreduce, none, bytesAll(24)},
		{trace.OpGather, 0, bytesAll(8)},
		{trace.OpGatherv, 3, rp1x4},
		{trace.OpScatter, 1, bytesAll(16)},
		{trace.OpScatterv, 2, rp1x4},
		{trace.OpAllgather, none, bytesAll(8)},
		{trace.OpAllgatherv, none, rp1x4},
		{trace.OpAlltoall, none, bytesAll(48)},
		{trace.OpAlltoallv, none, rp1x16},
		{trace.OpAlltoallw, none, rp1x16},
		{trace.OpReduceScatter, none, bytesAll(40)},
		{trace.OpReduceScatterBlock, none, bytesAll(64)},
		{trace.OpScan, none, bytesAll(16)},
		{trace.OpExscan, none, bytesAll(24)},
	}
	iform := map[trace.Op]trace.Op{
		trace.OpBarrier: trace.OpIbarrier, trace.OpBcast: trace.OpIbcast, trace.OpReduce: trace.OpIreduce,
		trace.OpAllreduce: trace.OpIallreduce, trace.OpGather: trace.OpIgather, trace.OpGatherv: trace.OpIgatherv,
		trace.OpScatter: trace.OpIscatter, trace.OpScatterv: trace.OpIscatterv,
		trace.OpAllgather: trace.OpIallgather, trace.OpAllgatherv: trace.OpIallgatherv,
		trace.OpAlltoall: trace.OpIalltoall, trace.OpAlltoallv: trace.OpIalltoallv,
		trace.OpAlltoallw: trace.OpIalltoallw, trace.OpReduceScatter: trace.OpIreduceScatter,
		trace.OpReduceScatterBlock: trace.OpIreduceScatterBlock, trace.OpScan: trace.OpIscan,
		trace.OpExscan: trace.OpIexscan,
	}
	world := append([]collSpec(nil), blocking...)
	for _, c := range blocking {
		c.Op = iform[c.Op]
		world = append(world, c)
	}
	world = append(world, unrooted(trace.OpCommSplit, trace.OpCommDup, trace.OpCartCreate,
		trace.OpCommCreate, trace.OpBarrier)...)
	split := func(lead, second int32) []collSpec {
		return []collSpec{
			{trace.OpAllreduce, none, bytesAll(8)},
			{trace.OpBcast, second, bytesAll(32)},
			{trace.OpReduce, lead, bytesAll(12)},
			{trace.OpBarrier, none, bytesAll(0)},
			{trace.OpIbcast, second, bytesAll(28)},
			{trace.OpCommFree, none, nil},
		}
	}
	row := func(second int32) []collSpec {
		return []collSpec{
			{trace.OpAllreduce, none, bytesAll(16)},
			{trace.OpScan, none, bytesAll(4)},
			{trace.OpBcast, second, bytesAll(12)},
			{trace.OpCommFree, none, nil},
		}
	}
	return map[string][]collSpec{
		"W0.0": world,
		"S0.1": split(0, 2),
		"S1.1": split(1, 3),
		"D0.2": {
			{trace.OpAllreduce, none, bytesAll(4)}, // MPI_IN_PLACE
			{trace.OpGather, 3, bytesAll(24)},
			{trace.OpIallreduce, none, bytesAll(4)},
			{trace.OpAllgatherv, none, rp1x4},  // MPI_IN_PLACE: the rank's own recvcounts entry
			{trace.OpIallgatherv, none, rp1x4}, // likewise
			{trace.OpCommFree, none, nil},
		},
		"K0.3": {
			{trace.OpBarrier, none, bytesAll(0)},
			{trace.OpAllgather, none, bytesAll(4)},
			{trace.OpCartSub, none, nil},
			{trace.OpCommFree, none, nil},
		},
		"k0.4": row(1),
		"k2.1": row(3),
		"C3.1": {
			{trace.OpBcast, 2, bytesAll(8)},
			{trace.OpAllreduce, none, bytesAll(20)},
			{trace.OpCommFree, none, nil},
		},
	}
}

// expectCollCounts is the number of calls coll.c makes per rank.
func expectCollCounts(rank int) map[trace.Op]int {
	m := map[trace.Op]int{trace.OpInit: 1, trace.OpFinalize: 1, trace.OpWait: 8, trace.OpWaitall: 3}
	// Count from the per-communicator table: each member calls each entry.
	names := expectNames(expectCollComms)
	names["W0.0"] = commSpec{'W', []int32{0, 1, 2, 3}, nil}
	for name, specs := range expectColl() {
		member := false
		for _, w := range names[name].Members {
			member = member || int(w) == rank
		}
		if !member {
			continue
		}
		for _, s := range specs {
			m[s.Op]++
		}
	}
	return m
}

func TestCollectives(t *testing.T) { testCollectives(t, mpitest.OpenMPI) }

// testCollectives runs coll.c under m and checks it.
func testCollectives(t *testing.T, m *mpitest.Impl) {
	const np = 4
	exe := mpitest.Compile(t, t.TempDir(), m.CC(t), "coll.c")
	logs, _ := runLoggedWith(t, m, np, exe)
	checkCallSites(t, logs)
	r := check(t, logs, np, "coll")

	r.checkCounts(t, expectCollCounts)
	r.checkSubs(t, func(rank int) map[trace.Op]int {
		m := map[trace.Op]int{
			trace.OpWait: 8, trace.OpWaitall: 12,
			trace.OpCommSplit: 2, trace.OpCommDup: 4, trace.OpCartCreate: 4, trace.OpCartSub: 2,
			trace.OpCommCreate: 3,
		}
		if rank == 0 {
			m[trace.OpCommCreate] = 0 // MPI_COMM_NULL: no members
		}
		return m
	})
	r.checkCommTable(t, expectNames(expectCollComms))
	r.checkColls(t, expectColl())
	if len(r.sends)+len(r.recvs) != 0 {
		t.Errorf("coll.c sends no point-to-point messages; logs show %d sends, %d receives", len(r.sends), len(r.recvs))
	}

	for rank := 0; rank < np; rank++ {
		// MPI_IN_PLACE is flagged, and only there.
		inplace := r.find(rank, func(c *call) bool { return c.Flags&trace.FlagInPlace != 0 })
		var ops []trace.Op
		for _, c := range inplace {
			if c.CommName == "D0.2" {
				ops = append(ops, c.Op)
			}
		}
		if want := []trace.Op{trace.OpAllreduce, trace.OpAllgatherv, trace.OpIallgatherv}; !slices.Equal(ops, want) || len(inplace) != len(want) {
			t.Errorf("rank %d: FlagInPlace on %v, want only the Allreduce, Allgatherv and Iallgatherv on D0.2", rank, inplace)
		}
		// Comm_create returns MPI_COMM_NULL on rank 0 only.
		cc := r.find(rank, func(c *call) bool { return c.Op == trace.OpCommCreate })
		if len(cc) == 1 && (cc[0].Req == 0) != (rank == 0) {
			t.Errorf("rank %d: Comm_create logged new communicator %d (0: MPI_COMM_NULL)", rank, cc[0].Req)
		}
		// Non-blocking collectives create requests (their completion is
		// checked with all requests in check).
		for _, c := range r.find(rank, func(c *call) bool { return c.Op.Class() == trace.ClassIcollective }) {
			if c.Flags&trace.FlagNewReq == 0 || c.Req == 0 {
				t.Errorf("rank %d: %v creates no request", rank, c)
			}
		}
	}
}
