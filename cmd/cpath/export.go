package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpath/cpath/analysis"
	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/otf2" // also registers OTF2 with graph: cpath reads archives wherever it reads logs
)

func newExportCmd(stdout io.Writer) *cobra.Command {
	var outDir string
	cmd := &cobra.Command{
		Use:   "export --otf2 OUTDIR LOGDIR",
		Short: "Write a recorded run as an OTF2 archive (for Vampir, Scalasca, Pipit), the critical path marked",
		Long: `export writes the run in LOGDIR as an OTF2 archive in OUTDIR (OUTDIR/traces.otf2,
the anchor file viewers open, beside traces.def and traces/): a location per
rank and thread, each MPI call a visit of its MPI region with its MPI events
(sizes, tags, communicators; collectives over their communicators), the
computation before a call a visit of the function that made it, where its
call site names one. The critical path (cpath's exact dag path) is marked:
a "critical path" metric, 1 while the path runs on a location, and the
attribute cpath::critical on the region visits it runs through. What the
archive cannot hold is listed. docs/otf2.md has the mapping.

cpath reads the archive back like any log directory: cpath OUTDIR.`,
		Args: exactArgs(1, "--otf2 OUTDIR LOGDIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if outDir == "" {
				return fmt.Errorf("export: want --otf2 OUTDIR (the only format it writes)")
			}
			return runExport(outDir, args[0], stdout)
		},
	}
	cmd.Flags().StringVar(&outDir, "otf2", "", "write the OTF2 archive into `OUTDIR` (created if missing; it must not hold one)")
	return cmd
}

// runExport analyses the run (as one process) for its critical path and
// writes the archive.
func runExport(outDir, dir string, stdout io.Writer) error {
	if n := launchedAs(); n > 1 {
		// Every copy would write the same archive.
		return fmt.Errorf("export: started as %d processes: it runs as one (without mpirun)", n)
	}
	run, err := graph.Load(dir)
	if err != nil {
		return err
	}
	c := &mpix.Single{}
	p, err := graph.Build(c, run)
	if err != nil {
		return err
	}
	res, err := cpath.DistDAG(c, analysis.DistGraph(p))
	if err != nil {
		return fmt.Errorf("%s: finding the critical path: %s", dir, strings.TrimPrefix(err.Error(), "cpath: "))
	}
	in := otf2.ExportInput{Run: run, Comms: p.Comms, RankStart: p.RankStart, Marks: pathMarks(p, res.Path)}
	p, res = nil, nil // the archive is written from the logs
	st, err := otf2.Export(outDir, in)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d ranks, %d locations, %d calls, %d events\n", st.Anchor, st.Ranks, st.Locations, st.Calls, st.Events)
	if n := graph.NotMappedNote(st.NotExported); n != "" {
		fmt.Fprintf(stdout, "%s\n", strings.Replace(n, "not analysed (the trace's content cpath has no meaning for)", "not in the archive (OTF2 has no place for it)", 1))
	}
	return nil
}

// pathMarks marks, by call, what of it the critical path runs through:
// the call (the path reaches its end, from its start or across a
// transfer or collective) and the computation before it (the path runs
// from the end of the call before it on its thread to its start).
func pathMarks(p *graph.PAG, path cpath.Path) []uint8 {
	marks := make([]uint8, p.NumCalls())
	vs := path.Vertices
	for i := 1; i < len(vs); i++ {
		a, ka := p.Vertex(vs[i-1])
		b, kb := p.Vertex(vs[i])
		switch {
		case kb == graph.VertexEnd:
			marks[b] |= otf2.MarkCall
		case kb == graph.VertexStart && ka == graph.VertexEnd && p.Rank(a) == p.Rank(b) && p.Thread[a] == p.Thread[b]:
			marks[b] |= otf2.MarkBefore
		}
	}
	return marks
}
