package report

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
)

// TestDOTRenders writes the PAG of a small run (every vertex) and of a large
// one (condensed) and has Graphviz render both: the output must be valid DOT
// with the critical path highlighted.
func TestDOTRenders(t *testing.T) {
	dotBin, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("Graphviz's dot is not installed (Debian package graphviz; make deps installs it)")
	}
	for _, tc := range []struct {
		name  string
		calls int
		full  bool
	}{{"full", 40, true}, {"condensed", 400, false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := gen.Write(gen.Spec{Dir: dir, Ranks: 4, CallsPerRank: tc.calls, Pattern: gen.Imbalanced, Seed: 3}); err != nil {
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
			res, err := cpath.DAG(cpath.FromPAG(g), g.Target)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := WriteDOT(&b, g, res.Path); err != nil {
				t.Fatal(err)
			}
			src := b.String()
			if strings.Contains(src, "subgraph cluster_") != tc.full {
				t.Fatalf("full drawing = %v, want %v", !tc.full, tc.full)
			}
			if !strings.Contains(src, "color=red") {
				t.Fatal("the critical path is not highlighted")
			}
			cmd := exec.Command(dotBin, "-Tsvg")
			cmd.Stdin = &b
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("dot -Tsvg: %v", err)
			}
			if !bytes.Contains(out, []byte("<svg")) {
				t.Fatalf("dot produced no SVG: %.200s", out)
			}
		})
	}
}
