package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cpath/cpath/analysis"
	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/report"
	"github.com/spf13/cobra"
)

type analyzeOpts struct {
	algo         string
	delta        int64
	order        string
	splitMode    string
	compress     bool
	compareExact bool
	frames       bool
	json         string
	jsonSegments bool
	dot          string
	matrix       string
	csv          string
	top          int
	cpuprof      string
	memprof      string
	whatIf       []string
	wrapper      string
	timelineOpts
}

// addAnalyzeFlags puts the analysis flags on cmd: both the root command
// (cpath LOGDIR) and cpath analyze LOGDIR take them.
func addAnalyzeFlags(cmd *cobra.Command, o *analyzeOpts) {
	f := cmd.Flags()
	f.StringVar(&o.algo, "algo", "dag", "critical-path algorithm, on the graph distributed over the analyzer's ranks:\n"+
		"dag (exact: the longest path in topological order, pipelined over the ranks), dijkstra, delta\n"+
		"(exact, label-correcting), split (exact, cut at global synchronisation points), topo, topo-shuffle\n"+
		"(the paper's heuristics: from the calls' intervals alone, with no graph, for a fraction of the time\n"+
		"and memory; they also give a path where a log is cut short; see --compare-exact)")
	f.Int64Var(&o.delta, "delta", 0, "bucket width in ns for --algo=delta, of distance or, with --order time, of vertex time (0: from the graph:\n"+
		"1/64 of its weights' sum, at least their mean; with --order time the run's span over max(64, vertices/256) buckets)")
	f.StringVar(&o.order, "order", "", "how --algo=dijkstra and --algo=delta take their vertices: `ORDER` time (by vertex time, latest first:\n"+
		"the default, about one relaxation per edge) or distance (by distance label, as the paper describes them:\n"+
		"exact too, but a vertex is taken again each time its distance grows, far slower on real logs)")
	f.StringVar(&o.splitMode, "split-mode", string(cpath.ParPar), "for --algo=split: how splits are solved, inner-outer: seq-seq, par-seq, par-par, seq-par")
	f.BoolVar(&o.compress, "compress", false, "for --algo=topo-shuffle: LZ4-compress the shuffled intervals")
	f.BoolVar(&o.compareExact, "compare-exact", false, "for --algo=topo and topo-shuffle: build the graph too and find the exact path (split par-par),\n"+
		"to report the heuristic's agreement with it, and the tables that need the graph (wait states, POP, what-if)")
	f.BoolVar(&o.frames, "frames", false, "at more than one analyzer rank: dag and the replay redistribute the graph's rows by frame\n"+
		"(the stretches between global synchronisations) and sweep them in one pass, instead of each rank\n"+
		"sweeping its own part in rounds: faster where the frames are many and small, for about twice the\n"+
		"memory per rank (where the frames cannot be shared out evenly, the rounds it is)")
	f.StringVar(&o.json, "json", "", "write the JSON report to `FILE` (- for stdout, replacing the text report)")
	f.BoolVar(&o.jsonSegments, "json-segments", false, "list every critical-path segment in the JSON report (otherwise its stretches:\n"+
		"the path's runs on one rank, with their time by kind)")
	f.StringVar(&o.dot, "dot", "", "write the program activity graph in Graphviz DOT to `FILE` (- for stdout)")
	f.StringVar(&o.matrix, "matrix", "", "draw the communication matrix (bytes per source and destination rank, point-to-point\n"+
		"and collective) as a heatmap to `FILE`, PNG or SVG by its extension (.png, .svg)")
	f.StringVar(&o.csv, "csv", "", "write the report's tables as CSV files, one per table, into `DIR` (created if missing)")
	f.IntVar(&o.top, "top", 10, "rows in each table of the text report")
	f.StringVar(&o.wrapper, "wrapper", report.WrappersAuto, "the program's own MPI wrapper layer, which the table of the path's computation by call site\n"+
		"looks through, in logs with call paths (CPATH_CALLDEPTH), to name the caller behind it: `LAYER`\n"+
		"auto (found from the call paths: the functions that make one call towards MPI and are called\n"+
		"from several places, or only from the layer), none (name the MPI calls' own sites), or a regular\n"+
		"expression matching the layer's function names (demangled), such as '^(mp_|Foam::reduce)'")
	f.StringVar(&o.cpuprof, "cpuprofile", "", "write the analysis's Go CPU profile to `FILE` (rank r of an MPI job: FILE.r), for go tool pprof")
	f.MarkHidden("cpuprofile")
	f.StringVar(&o.memprof, "memprofile", "", "write the analysis's Go allocation profile to `FILE` at its end (rank r of an MPI job: FILE.r), for go tool pprof")
	f.MarkHidden("memprofile")
	f.StringArrayVar(&o.whatIf, "what-if", nil, "predict the run time if `SCENARIO` were so, by re-solving the longest path with changed\n"+
		"weights (repeatable): balance:RANK (its computation scaled to the ranks' mean), rank:RANK=FACTOR\n"+
		"(its computation scaled), callsite:SITE=FACTOR (the computation before the calls at SITE, as the\n"+
		"report names it or 0xADDRESS, scaled), transfers=FACTOR (the transfers of messages, collectives and\n"+
		"one-sided synchronisations scaled), mpi=FACTOR (the MPI calls' own time scaled: copies, protocol).\n"+
		"Besides these, the report always answers transfers=0, mpi=0, balance of the\n"+
		"heaviest rank and halving the critical path's three longest stretches of computation by call\n"+
		"site; \"none\" leaves those out, \"off\" the POP factors too (no replay)")
	addTimelineFlags(cmd, &o.timelineOpts)
}

func newAnalyzeCmd(stdout io.Writer) *cobra.Command {
	var o analyzeOpts
	cmd := &cobra.Command{
		Use:   "analyze [flags] LOGDIR",
		Short: "Find the critical path, imbalance and wait states of a recorded run",
		Long: `analyze reads the logs of one run (the *.cplog files in LOGDIR), builds its
program activity graph, finds the critical path and reports where the run
time goes: which ranks, MPI calls and stretches of computation bound it, and
how much is lost to imbalance and waiting. "cpath LOGDIR" is the same.

Run it as one process, or as an MPI job (mpirun -np P cpath analyze LOGDIR):
each rank then reads its share of the logs and holds its part of the graph.`,
		Args: exactArgs(1, "LOGDIR"),
		RunE: func(cmd *cobra.Command, args []string) error { return runAnalyze(o, args[0], stdout) },
	}
	addAnalyzeFlags(cmd, &o)
	return cmd
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("%s: want %s (see cpath %s --help)", cmd.Name(), what, cmd.Name())
		}
		return nil
	}
}

// runAnalyze analyses LOGDIR with every rank of the job (one without
// mpirun). Errors are agreed on: every rank returns the same one, and
// rank 0 prints it.
func runAnalyze(o analyzeOpts, dir string, stdout io.Writer) error {
	ao, err := o.options(dir, stdout)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); err != nil && !strings.ContainsRune(dir, os.PathSeparator) {
		// "cpath LOGDIR" shares the command position with the subcommands.
		return fmt.Errorf("%q is neither a command nor a log directory (see cpath --help)", dir)
	}
	w := joinWorld()
	defer w.leave()
	if err := checkJoined(w); err != nil {
		return err
	}
	c := mpix.World()
	err = analysis.Run(c, ao)
	if err == nil || c.Size() == 1 {
		return err
	}
	// Rank 0 prints the error every rank now holds, and the others wait
	// for it to have done so: mpirun ends the job as soon as one rank
	// exits with an error, which could be before rank 0 printed.
	if c.Rank() == 0 {
		fmt.Fprintf(os.Stderr, "cpath: %v\n", err)
	}
	_, _ = mpix.AllreduceOne(c, 0, mpix.Sum)
	return exitStatus(1)
}

// options turns the flags into the analysis's options, checked.
func (o analyzeOpts) options(dir string, stdout io.Writer) (analysis.Options, error) {
	var err error
	ao := analysis.Options{Dir: dir, Algo: o.algo, Delta: o.delta, Order: o.order, SplitMode: cpath.SplitMode(o.splitMode), Compress: o.compress, CompareExact: o.compareExact, Frames: o.frames,
		JSON: o.json, JSONSegments: o.jsonSegments, DOT: o.dot, Matrix: o.matrix, CSV: o.csv, Top: o.top, Stdout: stdout,
		Timeline: o.timeline, TimelineMaxBytes: int64(o.maxMB * 1e6), CPUProfile: o.cpuprof, MemProfile: o.memprof}
	if err := ao.ParseWhatIf(o.whatIf); err != nil {
		return ao, err
	}
	if ao.Wrappers, err = report.ParseWrappers(o.wrapper); err != nil {
		return ao, err
	}
	win, err := o.timelineOpts.check()
	if err != nil {
		return ao, err
	}
	ao.Window, ao.FromText = win, o.from
	return ao, ao.Check()
}
