package graph_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
)

// comparePart checks that a one-rank Part is the PAG Build makes: the same
// calls, edges, waits, collectives and counts.
func comparePart(t *testing.T, g *graph.PAG, p *graph.Part) {
	t.Helper()
	eq := func(what string, ok bool) {
		if !ok {
			t.Errorf("%s differs between Build and BuildPart", what)
		}
	}
	eq("RankStart", slices.Equal(g.RankStart, p.RankStart))
	eq("Start", slices.Equal(g.Start, p.Start))
	eq("End", slices.Equal(g.End, p.End))
	eq("InStart", slices.Equal(g.InStart, p.InStart))
	eq("InSrc", slices.Equal(g.InSrc, p.InSrc))
	eq("InWeight", slices.Equal(g.InWeight, p.InWeight))
	eq("InKind", slices.Equal(g.InKind, p.InKind))
	eq("Waits", slices.Equal(g.Waits, p.Waits))
	eq("Colls", slices.Equal(g.Colls, p.Colls))
	eq("CollPost", slices.Equal(g.CollPost, p.CollPost))
	eq("CollDone", slices.Equal(g.CollDone, p.CollDone))
	eq("Notes", slices.Equal(g.Notes, p.Notes))
	eq("counts", g.Messages == p.Messages && g.Unmatched == p.Unmatched &&
		g.ClockViolations == p.ClockViolations && g.Inconsistent == p.Inconsistent)
	eq("Target/T0/T1", g.Target == p.Target && g.T0 == p.T0 && g.T1 == p.T1)
	if t.Failed() {
		t.Logf("Build: %d msgs %d unmatched %d viol %d incons target %d; Part: %d %d %d %d %d; notes %q vs %q",
			g.Messages, g.Unmatched, g.ClockViolations, g.Inconsistent, g.Target,
			p.Messages, p.Unmatched, p.ClockViolations, p.Inconsistent, p.Target, g.Notes, p.Notes)
		for i := range min(len(g.InSrc), len(p.InSrc)) {
			if g.InSrc[i] != p.InSrc[i] || g.InWeight[i] != p.InWeight[i] || g.InKind[i] != p.InKind[i] {
				t.Logf("first edge difference at %d: %d %d %v vs %d %d %v", i, g.InSrc[i], g.InWeight[i], g.InKind[i], p.InSrc[i], p.InWeight[i], p.InKind[i])
				break
			}
		}
	}
}

func buildBoth(t *testing.T, dir string) (*graph.PAG, *graph.Part) {
	t.Helper()
	g := mustBuild(t, dir)
	run, err := graph.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := graph.BuildPart(&mpix.Single{}, run)
	if err != nil {
		t.Fatal(err)
	}
	return g, p
}

func TestPartIsBuild(t *testing.T) {
	for _, pat := range gen.Patterns {
		for _, ranks := range []int{2, 4, 7} {
			t.Run(fmt.Sprintf("%s/%d", pat, ranks), func(t *testing.T) {
				dir := t.TempDir()
				if err := gen.Write(gen.Spec{Dir: dir, Ranks: ranks, CallsPerRank: 3000, Pattern: pat, Seed: 11}); err != nil {
					t.Fatal(err)
				}
				g, p := buildBoth(t, dir)
				comparePart(t, g, p)
				if ranks > 1 && pat == gen.Collectives && len(p.Syncs) == 0 {
					t.Errorf("no global synchronisation point found in a collectives-heavy run")
				}
			})
		}
	}
}

// TestPartIsBuildSkewed: with clocks skewed beyond the message latencies
// the rounds of BuildPart's clock correction reach the times Build's
// passes do.
func TestPartIsBuildSkewed(t *testing.T) {
	recs := simulate(7)
	for _, sc := range skewCases() {
		t.Run(sc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSkewed(t, dir, recs, sc)
			g, p := buildBoth(t, dir)
			comparePart(t, g, p)
			if sc.some && p.ClockViolations == 0 {
				t.Errorf("no clock violations found")
			}
		})
	}
}
