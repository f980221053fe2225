package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/imbalance"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/report"
	"github.com/spf13/cobra"
)

type analyzeOpts struct {
	algo      string
	delta     int64
	splitMode string
	compress  bool
	json      string
	dot       string
	top       int
}

// addAnalyzeFlags puts the analysis flags on cmd: both the root command
// (cpath LOGDIR) and cpath analyze LOGDIR take them.
func addAnalyzeFlags(cmd *cobra.Command, o *analyzeOpts) {
	f := cmd.Flags()
	f.StringVar(&o.algo, "algo", "dag", "critical-path algorithm: dag (exact, sequential reference on rank 0), and on the graph\n"+
		"distributed over the analyzer's ranks: dijkstra, delta (exact), split (exact, cut at global\n"+
		"synchronisation points), topo, topo-shuffle (heuristics; the report gives their agreement)")
	f.Int64Var(&o.delta, "delta", 0, "bucket width in ns for --algo=delta (0: derived from the edge weights)")
	f.StringVar(&o.splitMode, "split-mode", string(cpath.ParPar), "for --algo=split: how splits are solved, inner-outer: seq-seq, par-seq, par-par, seq-par")
	f.BoolVar(&o.compress, "compress", false, "for --algo=topo-shuffle: LZ4-compress the shuffled intervals")
	f.StringVar(&o.json, "json", "", "write the JSON report to `FILE` (- for stdout, replacing the text report)")
	f.StringVar(&o.dot, "dot", "", "write the program activity graph in Graphviz DOT to `FILE` (- for stdout)")
	f.IntVar(&o.top, "top", 10, "rows in each table of the text report")
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

Run it as one process, or as an MPI job (mpirun -np P cpath analyze LOGDIR).`,
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

// runAnalyze analyses LOGDIR. Under mpirun, rank 0 does the work for now
// and the other ranks wait for its outcome, so a failure ends every rank.
func runAnalyze(o analyzeOpts, dir string, stdout io.Writer) error {
	if o.algo != "dag" && !slices.Contains(distributedAlgos, o.algo) {
		return fmt.Errorf("--algo=%s: unknown algorithm (dag, %s)", o.algo, strings.Join(distributedAlgos, ", "))
	}
	if !slices.Contains(cpath.SplitModes, cpath.SplitMode(o.splitMode)) {
		return fmt.Errorf("--split-mode=%s: unknown mode (seq-seq, par-seq, par-par, seq-par)", o.splitMode)
	}
	if o.delta < 0 {
		return fmt.Errorf("--delta=%d: must be positive (or 0 for the default)", o.delta)
	}
	if _, err := os.Stat(dir); err != nil && !strings.ContainsRune(dir, os.PathSeparator) {
		// "cpath LOGDIR" shares the command position with the subcommands.
		return fmt.Errorf("%q is neither a command nor a log directory (see cpath --help)", dir)
	}
	w := joinWorld()
	defer w.leave()
	if o.algo != "dag" {
		c := mpix.World()
		err := mpix.Agree(c, analyzeDistributed(o, dir, c, stdout))
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
	// dag, the sequential reference, runs on rank 0; the other ranks wait
	// for its outcome, so that a failure ends every rank.
	if w.rank != 0 {
		return w.await()
	}
	err := analyze(o, dir, stdout)
	if err != nil && w.size > 1 {
		// Print before telling the other ranks: they exit at once, and
		// mpirun may kill this rank before it gets to print afterwards.
		fmt.Fprintf(os.Stderr, "cpath: %v\n", err)
		w.publish(err)
		return exitStatus(1)
	}
	w.publish(err)
	return err
}

func analyze(o analyzeOpts, dir string, stdout io.Writer) error {
	t0 := time.Now()
	run, err := graph.Load(dir)
	if err != nil {
		return err
	}
	g, err := graph.Build(run)
	if err != nil {
		return err
	}
	run = nil
	gt := time.Since(t0)
	cg := cpath.FromPAG(g)
	res, err := cpath.DAG(cg, g.Target)
	if err != nil {
		return fmt.Errorf("%s: inconsistent logs: %v", dir, strings.TrimPrefix(err.Error(), "cpath: "))
	}
	// Only the path is needed from here on: give the distances back first,
	// which keeps peak memory at the graph plus the report.
	res.Dist, res.Succ = nil, nil
	runtime.GC()
	sym := report.NewSymbolizer(g)
	rep := report.Build(&report.Input{Dir: dir, PAG: g, Path: res.Path, Algo: o.algo,
		Imbalance: imbalance.Analyze(g), GraphTime: gt, Symbolize: sym.Lookup})
	if o.dot != "" {
		if err := writeTo(o.dot, stdout, func(w io.Writer) error { return report.WriteDOT(w, g, res.Path) }); err != nil {
			return err
		}
	}
	return writeReport(o, rep, stdout)
}

// writeTo writes to the file name, or to stdout for "-".
func writeTo(name string, stdout io.Writer, write func(io.Writer) error) error {
	if name == "-" {
		bw := bufio.NewWriter(stdout)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
