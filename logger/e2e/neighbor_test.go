//go:build mpi

package e2e

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

const pn = trace.PeerProcNull

// neighborTopo is one of neighbor.c's topology communicators: its spec
// and, by world rank, the rank's in- and out-neighbours (nil: not a
// member).
type neighborTopo struct {
	spec           commSpec
	sources, dests func(r int32) []int32
}

func same(f func(r int32) []int32) (func(r int32) []int32, func(r int32) []int32) { return f, f }

// neighborTopos lists neighbor.c's communicators in creation order.
func neighborTopos() []neighborTopo {
	all := []int32{0, 1, 2, 3}
	ring := func(r int32) []int32 { return []int32{(r + 3) % 4, (r + 1) % 4} }
	// 2x2 grid, coordinates (r/2, r%2): dimension 0 then 1, each -1 then +1.
	grid := func(r int32) []int32 {
		n := []int32{pn, pn, pn, pn}
		if r/2 == 1 {
			n[0] = r - 2
		} else {
			n[1] = r + 2
		}
		if r%2 == 1 {
			n[2] = r - 1
		} else {
			n[3] = r + 1
		}
		return n
	}
	row := func(r int32) []int32 {
		if r%2 == 0 {
			return []int32{pn, r + 1}
		}
		return []int32{r - 1, pn}
	}
	star := func(r int32) []int32 {
		if r == 0 {
			return []int32{1, 2, 3}
		}
		return []int32{0}
	}
	prev := func(r int32) []int32 { return []int32{(r + 3) % 4} }
	next := func(r int32) []int32 { return []int32{(r + 1) % 4} }
	t := []neighborTopo{
		{spec: commSpec{'K', all, nil}},
		{spec: commSpec{'K', all, nil}},
		{spec: commSpec{'k', []int32{0, 1}, nil}},
		{spec: commSpec{'k', []int32{2, 3}, nil}},
		{spec: commSpec{'R', all, nil}},
		{spec: commSpec{'a', all, nil}, sources: prev, dests: next},
		{spec: commSpec{'r', all, nil}, sources: prev, dests: next},
		{spec: commSpec{'D', all, nil}},
	}
	t[0].sources, t[0].dests = same(ring)
	t[1].sources, t[1].dests = same(grid)
	t[2].sources, t[2].dests = same(row)
	t[3].sources, t[3].dests = same(row)
	t[4].sources, t[4].dests = same(star)
	t[7].sources, t[7].dests = same(ring)
	return t
}

// TestNeighbor runs neighbor.c: every topology constructor records the
// rank's neighbours as world ranks in MPI's order (MPI_PROC_NULL slots
// kept), and every neighbourhood collective, blocking and not, is a
// collective on its communicator with the bytes the rank sends to its
// real out-neighbours.
func TestNeighbor(t *testing.T) {
	m := mpitest.OpenMPI
	testNeighbor(t, m, m.CC(t), "neighbor.c")
}

// testNeighbor runs src (neighbor.c, or its Fortran twin fneighbor.f90)
// compiled with compiler under m and checks it.
func testNeighbor(t *testing.T, m *mpitest.Impl, compiler, src string, flags ...string) {
	const np = 4
	exe := mpitest.Compile(t, t.TempDir(), compiler, src, flags...)
	logs, _ := runLoggedWith(t, m, np, exe)
	checkCallSites(t, logs)
	r := check(t, logs, np, filepath.Base(exe))

	topos := neighborTopos()
	var specs []commSpec
	for _, tp := range topos {
		specs = append(specs, tp.spec)
	}
	names := expectNames(specs)
	r.checkCommTable(t, names)
	// Ring and grid are world rank 0's 1st and 2nd, the row halves its
	// 3rd and rank 2's 1st, and so on (expectNames counts them alike).
	nameOf := []string{"K0.1", "K0.2", "k0.3", "k2.1", "R0.4", "a0.5", "r0.6", "D0.7"}
	for i, n := range nameOf {
		if s, ok := names[n]; !ok || !slices.Equal(s.Members, topos[i].spec.Members) {
			t.Fatalf("expectNames does not name topology %d %s: %v", i, n, names)
		}
	}

	// Each rank's table holds its own neighbour lists.
	for rank, l := range logs {
		w := int32(rank)
		for i, tp := range topos {
			if !slices.Contains(tp.spec.Members, w) {
				continue
			}
			var c *trace.Comm
			for k := range l.Comms {
				if l.Comms[k].Name == nameOf[i] {
					c = &l.Comms[k]
				}
			}
			if c == nil {
				t.Errorf("rank %d: no communicator %s", rank, nameOf[i])
				continue
			}
			if !slices.Equal(c.Sources, tp.sources(w)) || !slices.Equal(c.Dests, tp.dests(w)) {
				t.Errorf("rank %d: %s (%v): sources %v dests %v, want %v and %v", rank, nameOf[i], c.Op,
					c.Sources, c.Dests, tp.sources(w), tp.dests(w))
			}
		}
		// World and self have no topology.
		for k := 0; k <= int(trace.CommSelf); k++ {
			if c := l.Comms[k]; c.Sources != nil || c.Dests != nil {
				t.Errorf("rank %d: %s has neighbours %v %v", rank, c.Name, c.Sources, c.Dests)
			}
		}
	}

	b := func(n uint64) func(int) uint64 { return func(int) uint64 { return n } }
	// Sums over the rank's real (not MPI_PROC_NULL) destinations of
	// counts[slot] ints.
	realSlots := func(dests func(int32) []int32, counts []uint64) func(int) uint64 {
		return func(rank int) uint64 {
			var n uint64
			for i, d := range dests(int32(rank)) {
				if d != pn {
					n += 4 * counts[i]
				}
			}
			return n
		}
	}
	free := collSpec{trace.OpCommFree, none, nil}
	want := map[string][]collSpec{
		"W0.0": {
			{trace.OpCartCreate, none, nil}, {trace.OpCartCreate, none, nil}, {trace.OpGraphCreate, none, nil},
			{trace.OpDistGraphCreateAdjacent, none, nil}, {trace.OpDistGraphCreate, none, nil},
		},
		nameOf[0]: {
			{trace.OpCommDup, none, nil}, {trace.OpNeighborAllgather, none, b(24)}, {trace.OpNeighborAllgatherv, none, b(16)},
			{trace.OpNeighborAlltoall, none, b(8)}, {trace.OpNeighborAlltoallv, none, b(12)},
			{trace.OpNeighborAlltoallw, none, b(12)}, free,
		},
		nameOf[1]: {
			{trace.OpCartSub, none, nil}, {trace.OpNeighborAlltoall, none, b(8)},
			{trace.OpNeighborAlltoallv, none, realSlots(topos[1].dests, []uint64{1, 2, 3, 4})}, free,
		},
		nameOf[2]: {{trace.OpIneighborAlltoallv, none, realSlots(topos[2].dests, []uint64{3, 7})}, free},
		nameOf[3]: {{trace.OpIneighborAlltoallv, none, realSlots(topos[3].dests, []uint64{3, 7})}, free},
		nameOf[4]: {{trace.OpIneighborAllgather, none, func(rank int) uint64 { return 8 * uint64(len(topos[4].dests(int32(rank)))) }}, free},
		nameOf[5]: {{trace.OpIneighborAllgatherv, none, b(20)}, free},
		nameOf[6]: {{trace.OpIneighborAlltoall, none, b(8)}, free},
		nameOf[7]: {{trace.OpIneighborAlltoallw, none, b(12)}, free},
	}
	r.checkColls(t, want)
	r.checkCounts(t, func(rank int) map[trace.Op]int {
		m := map[trace.Op]int{trace.OpInit: 1, trace.OpFinalize: 1, trace.OpWaitall: 1}
		for name, specs := range want {
			if c, ok := r.comms[name]; ok && slices.Contains(c.Members, int32(rank)) {
				for _, s := range specs {
					m[s.Op]++
				}
			}
		}
		return m
	})
	// The five I-forms create requests that the Waitall completes.
	r.checkSubs(t, func(rank int) map[trace.Op]int { return map[trace.Op]int{trace.OpWaitall: 5} })
	for rank := 0; rank < np; rank++ {
		for _, c := range r.find(rank, func(c *call) bool { return c.Op.IsNeighbor() }) {
			nb := c.Op.Class() == trace.ClassIcollective
			if nb != (c.Flags&trace.FlagNewReq != 0) || c.Peer != none || c.Root != none {
				t.Errorf("rank %d: %v: want a new request %v, no peer, no root", rank, c, nb)
			}
		}
	}
	if len(r.sends)+len(r.recvs) != 0 {
		t.Errorf("neighbor.c sends no point-to-point messages; logs show %d sends, %d receives", len(r.sends), len(r.recvs))
	}
}
