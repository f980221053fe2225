package cpath_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
)

// TestSplitOneRank: every split mode in one process returns the path of
// the sequential reference on generated runs (the MPI job's ranks are
// tested through the cpath command).
func TestSplitOneRank(t *testing.T) {
	for _, pat := range gen.Patterns {
		dir := t.TempDir()
		if err := gen.Write(gen.Spec{Dir: dir, Ranks: 5, CallsPerRank: 3000, Pattern: pat, Seed: 4}); err != nil {
			t.Fatal(err)
		}
		run, err := graph.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		g, err := graph.Build(run)
		if err != nil {
			t.Fatal(err)
		}
		want, err := cpath.DAG(cpath.FromPAG(g), g.Target)
		if err != nil {
			t.Fatal(err)
		}
		p, err := graph.BuildPart(&mpix.Single{}, run)
		if err != nil {
			t.Fatal(err)
		}
		in := &cpath.SplitInput{RankStart: p.RankStart, RankLo: p.RankLo, RankHi: p.RankHi, Syncs: p.Syncs}
		for _, mode := range cpath.SplitModes {
			t.Run(fmt.Sprintf("%s/%s", pat, mode), func(t *testing.T) {
				res, err := cpath.Split(&mpix.Single{}, cpath.FromPart(p), in, mode)
				if err != nil {
					t.Fatal(err)
				}
				if res.Path.Length != want.Path.Length || !slices.Equal(res.Path.Vertices, want.Path.Vertices) {
					t.Errorf("length %d, %d vertices; want %d, %d", res.Path.Length, len(res.Path.Vertices), want.Path.Length, len(want.Path.Vertices))
				}
				if pat == gen.Collectives && res.Stats.Splits < 2 {
					t.Errorf("%d splits in a collectives-heavy run", res.Stats.Splits)
				}
			})
		}
	}
}
