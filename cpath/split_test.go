package cpath

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/cpath/cpath/cpath/internal/cpathtest"
	"github.com/cpath/cpath/internal/mpix"
)

// splitGraph is a generated split-structured graph.
type splitGraph struct {
	g      *Graph
	edges  int
	split  []int32
	exit   []int32
	target int32
}

func genSplit(rng *rand.Rand, n, k int, wide bool) splitGraph {
	es, split, exit, target := cpathtest.SplitDAG(rng, n, k, wide)
	g := &Graph{N: len(split)}
	g.InStart, g.InSrc, g.InWeight = cpathtest.CSR(len(split), es)
	return splitGraph{g, len(es), split, exit, target}
}

// splitAlgos are Split in every mode and DistDAG, on the whole split input.
func splitAlgos(sg splitGraph) []distAlgo {
	var out []distAlgo
	for _, m := range SplitModes {
		out = append(out, distAlgo{"split/" + string(m), func(c mpix.Comm, g *DistGraph) (*DistResult, error) {
			in := &SplitInput{Split: sg.split[g.Lo:g.Hi], Exit: slices.Clone(sg.exit)}
			return Split(c, g, in, m)
		}})
	}
	out = append(out, distAlgo{"sweep/splits", func(c mpix.Comm, g *DistGraph) (*DistResult, error) {
		in := &SplitInput{Split: sg.split[g.Lo:g.Hi], Exit: slices.Clone(sg.exit)}
		res, _, err := SweepDAG(c, g, in, nil)
		return res, err
	}})
	out = append(out, distAlgo{"frames", func(c mpix.Comm, g *DistGraph) (*DistResult, error) {
		in := &SplitInput{Split: sg.split[g.Lo:g.Hi], Exit: slices.Clone(sg.exit)}
		res, _, ok, err := FrameDAG(c, g, in, nil)
		if err == nil && !ok {
			res, _, err = SweepDAG(c, g, in, nil)
		}
		return res, err
	}})
	return append(out, distAlgo{"distdag", DistDAG})
}

// TestSplitAgainstDAG: on random split-structured graphs (many in-edges,
// hubs, dead ends after the exits, ties), every split mode and DistDAG
// give DAG's path vertex for vertex at 1-4 ranks with random bounds.
func TestSplitAgainstDAG(t *testing.T) {
	defer func(m int) { chunkMin = m }(chunkMin)
	chunkMin = 1 // the sweep's rounds cut into as many chunks as they have frames, on every core
	rng := rand.New(rand.NewSource(7))
	count := 120
	if testing.Short() {
		count = 30
	}
	for i := 0; i < count; i++ {
		k := []int{1, 2, 3, 5, 12}[i%5]
		n := 2*k + 1 + rng.Intn(40*k)
		sg := genSplit(rng, n, k, i%3 == 0)
		ref, err := DAG(sg.g, sg.target)
		if err != nil {
			t.Fatalf("case %d: dag: %v", i, err)
		}
		for P := 1; P <= 4; P++ {
			bounds := distRandomBounds(rng, sg.g.N, P)
			if i%4 == 0 {
				bounds = distEvenBounds(sg.g.N, P)
			}
			for _, a := range splitAlgos(sg) {
				name := fmt.Sprintf("case %d (n=%d k=%d)/P=%d/%s", i, sg.g.N, k, P, a.name)
				res, errs := distRun(distShares(sg.g, sg.target, bounds), a.run)
				checkDistResult(t, name, ref, res, errs)
				st := res[0].Stats
				if st.Edges != int64(sg.edges) {
					t.Fatalf("%s: Edges %d, want %d", name, st.Edges, sg.edges)
				}
				if strings.HasPrefix(a.name, "split") && st.Splits != k {
					t.Fatalf("%s: %d splits, want %d", name, st.Splits, k)
				}
				checkWork(t, name, a.name, st, sg.edges)
			}
		}
	}
}

// TestSplitFullPAG: the same on graphs shaped like the full PAG
// (processes in lockstep, 1-3 communication in-edges per call, global
// collectives through hub vertices, time-consistent weights).
func TestSplitFullPAG(t *testing.T) {
	defer func(m int) { chunkMin = m }(chunkMin)
	chunkMin = 1
	rng := rand.New(rand.NewSource(11))
	for i, c := range []struct{ procs, steps, every int }{{1, 5, 2}, {3, 40, 7}, {8, 60, 10}, {5, 30, 100}, {4, 50, 1}} {
		es, split, exit, target := cpathtest.FullPAG(rng, c.procs, c.steps, c.every)
		g := &Graph{N: len(split)}
		g.InStart, g.InSrc, g.InWeight = cpathtest.CSR(len(split), es)
		sg := splitGraph{g, len(es), split, exit, target}
		ref, err := DAG(g, target)
		if err != nil {
			t.Fatalf("case %d: dag: %v", i, err)
		}
		for P := 1; P <= 4; P++ {
			for _, a := range splitAlgos(sg) {
				name := fmt.Sprintf("case %d %+v/P=%d/%s", i, c, P, a.name)
				res, errs := distRun(distShares(g, target, distRandomBounds(rng, g.N, P)), a.run)
				checkDistResult(t, name, ref, res, errs)
				st := res[0].Stats
				if st.Edges != int64(len(es)) || (strings.HasPrefix(a.name, "split") && st.Splits != len(exit)) {
					t.Fatalf("%s: %d edges, %d splits; want %d, %d", name, st.Edges, st.Splits, len(es), len(exit))
				}
				checkWork(t, name, a.name, st, len(es))
			}
		}
	}
}

// checkWork checks the bound on the work: each edge into an ancestor
// relaxed once by DAG (distdag, the seq modes) and twice by the par modes
// and the sweep.
func checkWork(t *testing.T, name, algo string, st DistStats, edges int) {
	t.Helper()
	bound := int64(edges)
	if strings.HasPrefix(algo, "split/par") || strings.HasPrefix(algo, "sweep") || algo == "distdag" || algo == "frames" {
		bound *= 2 // two passes: the sweep, and the marking of the tight edges into the path's vertices
	}
	if st.Relaxations > bound {
		t.Fatalf("%s: %d relaxations for %d edges", name, st.Relaxations, edges)
	}
}

// TestSplitKnown: small hand-made cases, where the exit's two roles and
// ties across a cut matter.
func TestSplitKnown(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		edges []edge
		split []int32
		exit  []int32
	}{
		// 0 -> 1 (exit 0) -> {2, 3} -> 4 (exit 1, target); tie 2/3.
		{"tie after the cut", 5, []edge{{0, 1, 1}, {1, 3, 2}, {1, 2, 2}, {2, 4, 1}, {3, 4, 1}}, []int32{0, 0, 1, 1, 1}, []int32{1, 4}},
		// Two sources in split 0, one only reaches a dead end of the exit.
		{"dead end after the exit", 6, []edge{{0, 2, 4}, {1, 2, 4}, {2, 3, 0}, {2, 5, 9}, {3, 4, 3}}, []int32{0, 0, 0, 1, 1, 0}, []int32{2, 4}},
		// The target's split is entered only from the start's exit.
		{"exit is the start", 3, []edge{{0, 1, 5}, {0, 2, 1}, {2, 1, 4}}, []int32{0, 1, 1}, []int32{0, 1}},
		// A split that does not reach its exit, and an unreached exit.
		{"unreached exit", 6, []edge{{0, 1, 1}, {2, 3, 1}, {3, 5, 2}, {4, 5, 1}}, []int32{0, 0, 1, 1, 2, 2}, []int32{1, 3, 5}},
		{"one split", 3, []edge{{0, 1, 1}, {1, 2, 1}, {0, 2, 2}}, []int32{0, 0, 0}, []int32{2}},
	}
	for _, tc := range tests {
		g := build(tc.n, tc.edges)
		target := tc.exit[len(tc.exit)-1]
		ref, err := DAG(g, target)
		if err != nil {
			t.Fatalf("%s: dag: %v", tc.name, err)
		}
		sg := splitGraph{g, len(tc.edges), tc.split, tc.exit, target}
		for P := 1; P <= tc.n+1; P++ {
			for _, a := range splitAlgos(sg) {
				name := fmt.Sprintf("%s/P=%d/%s", tc.name, P, a.name)
				res, errs := distRun(distShares(g, target, distEvenBounds(tc.n, P)), a.run)
				checkDistResult(t, name, ref, res, errs)
			}
		}
	}
}

// TestSplitBadInput: a split input that breaks the builder's guarantee,
// or a cycle, gives one error on every rank, in every mode.
func TestSplitBadInput(t *testing.T) {
	// 0 -> 1 -> 2 (exit 0) -> 3 -> 4 (exit 1) -> 5 -> 6 (exit 2, target)
	base := []edge{{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 4, 1}, {4, 5, 1}, {5, 6, 1}}
	split := []int32{0, 0, 0, 1, 1, 2, 2}
	exit := []int32{2, 4, 6}
	type tcase struct {
		name  string
		extra []edge
		in    func(rank int, lo, hi int32) *SplitInput
		want  string
	}
	std := func(rank int, lo, hi int32) *SplitInput {
		return &SplitInput{Split: slices.Clone(split[lo:hi]), Exit: slices.Clone(exit)}
	}
	tests := []tcase{
		{"edge between splits not via the exit", []edge{{1, 3, 5}}, std, "leads from split 0 into split 1"},
		{"cross edge skips a split", []edge{{2, 5, 5}}, std, "leads from split 0 into split 2"},
		{"edge into an earlier split", []edge{{3, 1, 0}}, std, "leads from split 1 into split 0"},
		{"unreached bad edge", []edge{{1, 5, 0}}, std, "leads from split 0 into split 2"},
		{"cycle through an exit", []edge{{4, 3, 1}}, std, "cycle"},
		{"zero-weight cycle through an exit", []edge{{4, 3, 0}}, std, "cycle"},
		{"cycle inside a split", []edge{{1, 0, 1}}, std, "cycle"},
		{"long Split", nil, func(rank int, lo, hi int32) *SplitInput {
			in := std(rank, lo, hi)
			if rank == 0 {
				in.Split = append(in.Split, 0)
			}
			return in
		}, "owned vertices"},
		{"split out of range", nil, func(rank int, lo, hi int32) *SplitInput {
			in := std(rank, lo, hi)
			for i := range in.Split {
				in.Split[i] = 3
			}
			return in
		}, "in split 3 of 3"},
		{"last exit not the target", nil, func(rank int, lo, hi int32) *SplitInput {
			in := std(rank, lo, hi)
			in.Exit[2] = 5
			return in
		}, "not the target"},
		{"exit in another split", nil, func(rank int, lo, hi int32) *SplitInput {
			in := std(rank, lo, hi)
			in.Exit[0] = 3
			return in
		}, "the exit of split 0"},
		{"no exits", nil, func(rank int, lo, hi int32) *SplitInput { return &SplitInput{Split: split[lo:hi]} }, "no splits"},
		{"nil input", nil, func(rank int, lo, hi int32) *SplitInput { return nil }, "no split input"},
		{"ranks disagree on the exits", nil, func(rank int, lo, hi int32) *SplitInput {
			in := std(rank, lo, hi)
			if rank == 1 {
				in.Exit = []int32{1, 4, 6}
			}
			return in
		}, "disagree"},
	}
	for _, tc := range tests {
		g := build(7, append(slices.Clone(base), tc.extra...))
		for P := 1; P <= 4; P++ {
			if tc.name == "ranks disagree on the exits" && P == 1 {
				continue
			}
			for _, m := range SplitModes {
				name := fmt.Sprintf("%s/P=%d/%s", tc.name, P, m)
				rng := rand.New(rand.NewSource(int64(P)))
				_, errs := distRun(distShares(g, 6, distRandomBounds(rng, 7, P)), func(c mpix.Comm, g *DistGraph) (*DistResult, error) {
					return Split(c, g, tc.in(c.Rank(), g.Lo, g.Hi), m)
				})
				err := distSameError(t, name, errs)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
				}
			}
		}
	}
	// An unknown mode.
	g := build(7, base)
	_, errs := distRun(distShares(g, 6, distEvenBounds(7, 2)), func(c mpix.Comm, g *DistGraph) (*DistResult, error) {
		return Split(c, g, &SplitInput{Split: split[g.Lo:g.Hi], Exit: exit}, "par")
	})
	if err := distSameError(t, "unknown mode", errs); err == nil || !strings.Contains(err.Error(), "unknown split mode") {
		t.Errorf("unknown mode: %v", err)
	}
}

// TestDistDAGBadInput: DistDAG fails on every rank together on a cycle
// and a malformed share.
func TestDistDAGBadInput(t *testing.T) {
	g := build(4, []edge{{0, 1, 1}, {1, 2, 1}, {2, 1, 1}, {2, 3, 1}})
	for P := 1; P <= 4; P++ {
		_, errs := distRun(distShares(g, 3, distEvenBounds(4, P)), DistDAG)
		if err := distSameError(t, "cycle", errs); err == nil || !strings.Contains(err.Error(), "cycle") {
			t.Errorf("P=%d cycle: %v", P, err)
		}
		gs := distShares(build(4, []edge{{0, 1, 1}, {1, 2, 1}, {2, 3, 1}}), 3, distEvenBounds(4, P))
		gs[P-1].Target = 2
		if P > 1 {
			_, errs = distRun(gs, DistDAG)
			if err := distSameError(t, "targets differ", errs); err == nil {
				t.Errorf("P=%d: targets differ accepted", P)
			}
		}
	}
}

// TestSplitRoundBudget: with a budget of a few vertices a round, the par
// modes hold work back across many rounds, and still give DAG's path at
// 2-4 ranks; a cycle is still found.
func TestSplitRoundBudget(t *testing.T) {
	defer func(m int) { splitRoundMin = m }(splitRoundMin)
	rng := rand.New(rand.NewSource(31))
	for i, c := range []struct{ procs, steps, every int }{{3, 40, 7}, {8, 60, 10}, {4, 50, 1}} {
		es, split, exit, target := cpathtest.FullPAG(rng, c.procs, c.steps, c.every)
		g := &Graph{N: len(split)}
		g.InStart, g.InSrc, g.InWeight = cpathtest.CSR(len(split), es)
		ref, err := DAG(g, target)
		if err != nil {
			t.Fatalf("case %d: dag: %v", i, err)
		}
		for _, P := range []int{2, 3, 4} {
			bounds := distRandomBounds(rng, g.N, P)
			for _, m := range []SplitMode{ParPar, ParSeq} {
				run := func(c mpix.Comm, d *DistGraph) (*DistResult, error) {
					return Split(c, d, &SplitInput{Split: split[d.Lo:d.Hi], Exit: slices.Clone(exit)}, m)
				}
				splitRoundMin = 1 << 14 // more than these graphs have: no budget
				res, errs := distRun(distShares(g, target, bounds), run)
				checkDistResult(t, fmt.Sprintf("case %d/P=%d/%s", i, P, m), ref, res, errs)
				rounds := res[0].Stats.Rounds
				for _, least := range []int{1, 3} {
					splitRoundMin = least
					name := fmt.Sprintf("case %d %+v/P=%d/%s/budget %d", i, c, P, m, least)
					res, errs := distRun(distShares(g, target, bounds), run)
					checkDistResult(t, name, ref, res, errs)
					checkWork(t, name, "split/"+string(m), res[0].Stats, len(es))
					if res[0].Stats.Rounds <= rounds {
						t.Errorf("%s: %d rounds, as many as without the budget (%d): no work was held back", name, res[0].Stats.Rounds, rounds)
					}
				}
			}
		}
	}
	splitRoundMin = 1
	for _, tc := range cycleCases(300, 50) {
		g := build(tc.n, tc.edges)
		for _, P := range []int{2, 3} {
			name := fmt.Sprintf("%s/P=%d/budget 1", tc.name, P)
			res, errs := distRun(distShares(g, tc.target, distEvenBounds(tc.n, P)), func(c mpix.Comm, d *DistGraph) (*DistResult, error) {
				return Split(c, d, &SplitInput{Split: make([]int32, d.Hi-d.Lo), Exit: []int32{tc.target}}, ParPar)
			})
			checkDistCycle(t, name, tc, res, errs)
		}
	}
}

// TestFrameDAG: on full-PAG-like graphs with many frames, the rows
// redistributed by frame give DAG's path at 2-4 ranks (where the frames
// balance; the test fails if they never do), and a graph of one frame
// is not redistributed.
func TestFrameDAG(t *testing.T) {
	defer func(m int) { chunkMin = m }(chunkMin)
	chunkMin = 1
	rng := rand.New(rand.NewSource(5))
	used := 0
	for i, c := range []struct{ procs, steps, every int }{{3, 60, 3}, {8, 80, 4}, {5, 200, 10}, {2, 50, 1}} {
		es, split, exit, target := cpathtest.FullPAG(rng, c.procs, c.steps, c.every)
		for j := 0; j < len(es); j += 97 {
			es[j].W += 5_000_000_000 // weights past 32 bits travel apart
		}
		g := &Graph{N: len(split)}
		g.InStart, g.InSrc, g.InWeight = cpathtest.CSR(len(split), es)
		ref, err := DAG(g, target)
		if err != nil {
			t.Fatal(err)
		}
		for P := 2; P <= 4; P++ {
			oks := make([]bool, P)
			res, errs := distRun(distShares(g, target, distRandomBounds(rng, g.N, P)), func(cm mpix.Comm, d *DistGraph) (*DistResult, error) {
				in := &SplitInput{Split: split[d.Lo:d.Hi], Exit: slices.Clone(exit)}
				r, _, ok, err := FrameDAG(cm, d, in, nil)
				oks[cm.Rank()] = ok
				if err == nil && !ok {
					r, _, err = SweepDAG(cm, d, in, nil)
				}
				return r, err
			})
			name := fmt.Sprintf("case %d %+v/P=%d", i, c, P)
			checkDistResult(t, name+"/frames", ref, res, errs)
			for q := range oks {
				if oks[q] != oks[0] {
					t.Fatalf("%s: ranks disagree on redistributing", name)
				}
			}
			if oks[0] {
				used++
			}
		}
	}
	if used == 0 {
		t.Fatal("the frames never balanced: nothing was redistributed")
	}
	// One frame: nothing to share out.
	g := build(6, []edge{{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 4, 1}, {4, 5, 1}})
	_, errs := distRun(distShares(g, 5, distEvenBounds(6, 2)), func(cm mpix.Comm, d *DistGraph) (*DistResult, error) {
		_, _, ok, err := FrameDAG(cm, d, &SplitInput{Split: make([]int32, d.Hi-d.Lo), Exit: []int32{5}}, nil)
		if err == nil && ok {
			err = fmt.Errorf("one frame shared out")
		}
		return nil, err
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
