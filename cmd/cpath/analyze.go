package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/imbalance"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/traffic"
	"github.com/spf13/cobra"
)

// algos are the critical-path algorithms, the default first; all run on
// the PAG distributed over the analyzer's ranks (one rank without mpirun).
var algos = []string{"dag", "dijkstra", "delta", "split", "topo", "topo-shuffle"}

type analyzeOpts struct {
	algo      string
	delta     int64
	splitMode string
	compress  bool
	json      string
	dot       string
	matrix    string
	csv       string
	top       int
	cpuprof   string
	memprof   string
	whatIf    []string
	timelineOpts
}

// addAnalyzeFlags puts the analysis flags on cmd: both the root command
// (cpath LOGDIR) and cpath analyze LOGDIR take them.
func addAnalyzeFlags(cmd *cobra.Command, o *analyzeOpts) {
	f := cmd.Flags()
	f.StringVar(&o.algo, "algo", "dag", "critical-path algorithm, on the graph distributed over the analyzer's ranks:\n"+
		"dag (exact sequential reference, on rank 0), dijkstra, delta (exact, parallel), split (exact,\n"+
		"cut at global synchronisation points), topo, topo-shuffle (heuristics; the report gives their agreement)")
	f.Int64Var(&o.delta, "delta", 0, "bucket width in ns of vertex time for --algo=delta (0: the run's span over max(64, vertices/256) buckets)")
	f.StringVar(&o.splitMode, "split-mode", string(cpath.ParPar), "for --algo=split: how splits are solved, inner-outer: seq-seq, par-seq, par-par, seq-par")
	f.BoolVar(&o.compress, "compress", false, "for --algo=topo-shuffle: LZ4-compress the shuffled intervals")
	f.StringVar(&o.json, "json", "", "write the JSON report to `FILE` (- for stdout, replacing the text report)")
	f.StringVar(&o.dot, "dot", "", "write the program activity graph in Graphviz DOT to `FILE` (- for stdout)")
	f.StringVar(&o.matrix, "matrix", "", "draw the communication matrix (bytes per source and destination rank, point-to-point\n"+
		"and collective) as a heatmap to `FILE`, PNG or SVG by its extension (.png, .svg)")
	f.StringVar(&o.csv, "csv", "", "write the report's tables as CSV files, one per table, into `DIR` (created if missing)")
	f.IntVar(&o.top, "top", 10, "rows in each table of the text report")
	f.StringVar(&o.cpuprof, "cpuprofile", "", "write the analysis's Go CPU profile to `FILE` (rank r of an MPI job: FILE.r), for go tool pprof")
	f.MarkHidden("cpuprofile")
	f.StringVar(&o.memprof, "memprofile", "", "write the analysis's Go allocation profile to `FILE` at its end (rank r of an MPI job: FILE.r), for go tool pprof")
	f.MarkHidden("memprofile")
	f.StringArrayVar(&o.whatIf, "what-if", nil, "predict the run time if `SCENARIO` were so, by re-solving the longest path with changed\n"+
		"weights (repeatable): balance:RANK (its computation scaled to the ranks' mean), rank:RANK=FACTOR\n"+
		"(its computation scaled), callsite:SITE=FACTOR (the computation before the calls at SITE, as the\n"+
		"report names it or 0xADDRESS, scaled), transfers=FACTOR (MPI's own time and the transfers scaled;\n"+
		"0: an ideal network). Besides these, the report always answers transfers=0, balance of the\n"+
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
	if !slices.Contains(algos, o.algo) {
		return fmt.Errorf("--algo=%s: unknown algorithm (%s)", o.algo, strings.Join(algos, ", "))
	}
	if !slices.Contains(cpath.SplitModes, cpath.SplitMode(o.splitMode)) {
		return fmt.Errorf("--split-mode=%s: unknown mode (seq-seq, par-seq, par-par, seq-par)", o.splitMode)
	}
	if _, _, err := parseWhatIf(o.whatIf); err != nil {
		return err
	}
	if o.delta < 0 {
		return fmt.Errorf("--delta=%d: must be positive (or 0 for the default)", o.delta)
	}
	if err := o.timelineOpts.check(); err != nil {
		return err
	}
	if o.matrix != "" {
		if _, err := report.HeatmapFormat(o.matrix); err != nil {
			return fmt.Errorf("--matrix %s: %v", o.matrix, err)
		}
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
	if os.Getenv("GOGC") == "" {
		// The graph is a few large arrays without pointers, so a collection
		// costs little, while the default (the heap may reach twice what is
		// live) makes the peak RSS, and its first-touch page faults, about a
		// quarter larger. The user's GOGC wins.
		debug.SetGCPercent(analysisGCPercent)
	}
	if o.cpuprof != "" {
		name := o.cpuprof
		if c.Size() > 1 {
			name += "." + strconv.Itoa(c.Rank())
		}
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if o.memprof != "" {
		name := o.memprof
		if c.Size() > 1 {
			name += "." + strconv.Itoa(c.Rank())
		}
		f, err := os.Create(name) // now, so that a bad name fails before the analysis
		if err != nil {
			return err
		}
		defer f.Close()
		defer pprof.Lookup("allocs").WriteTo(f, 0)
	}
	err := mpix.Agree(c, analyze(o, dir, c, stdout))
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

// analysisGCPercent is the analysis's GOGC. On a 16 M-call halo log
// (genlogs -ranks 16 -calls 1000000), 25 against Go's 100 took the peak
// RSS from 3.8–5.9 GB to 3.6 GB (2.9 GB without the replay, from 3.8);
// 10 against 25, from 2.7 to 2.3 GB without the replay and from 3.7 to
// 3.55 GB with it, in the same time within noise (7.5–7.9 s and
// 10.1–10.8 s).
const analysisGCPercent = 10

// analyze is the analysis: every rank of c reads its share of the logs
// and builds its part of the PAG, the algorithm runs over the parts, and
// rank 0 gathers the path's calls, the imbalance shares and the run's
// summary for the report.

func analyze(o analyzeOpts, dir string, c mpix.Comm, stdout io.Writer) error {
	prog := newProgress(c.Rank())
	defer prog.Done()
	t0 := time.Now()
	mark := func(step string) { graph.Timings().Mark(c.Rank(), step) }
	mark("")
	prog.Stage("reading the logs")
	run, err := graph.Load(dir)
	mark("load")
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	prog.Stage("building the graph")
	b0, _ := c.Stats()
	p, err := graph.Build(c, run)
	if err != nil {
		return err
	}
	b1, _ := c.Stats()
	gt := time.Since(t0)
	win, err := o.window(p)
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	run = nil
	// What building needed (messages, dependencies, the edges before their
	// rows) is garbage now: collect it before the search allocates, or the
	// heap grows to twice what building left live. And give it back: the
	// search's arrays want long runs of pages that the build's garbage,
	// kept by Go, does not have in one piece, so they would take fresh
	// pages beside it (on the 16 M-call halo log, peak RSS in the search
	// 2149 MiB against 1908 given back).
	debug.FreeOSMemory()
	mark("free-memory")
	buildBytes, err := mpix.AllreduceOne(c, b1-b0, mpix.Sum)
	if err != nil {
		return err
	}
	// The imbalance and traffic shares read the graph and need no path:
	// computed beside the search, on a core the search leaves idle.
	type share struct {
		Imbalance *imbalance.Result
		Colls     []graph.Collective
		Traffic   *traffic.Result
	}
	shareDone := make(chan share, 1)
	go func() { shareDone <- share{imbalance.Analyze(p), p.Colls, traffic.Analyze(p)} }()
	prog.Stage("finding the critical path (" + o.algo + ")")
	g := distGraph(p)
	in := &report.Input{Dir: dir, Algo: o.algo, GraphTime: gt, Agreement: -1,
		Analyzer: &report.AnalyzerStats{Ranks: c.Size(), BuildBytes: buildBytes}}
	var res *cpath.DistResult
	var topo *cpath.TopoResult
	switch o.algo {
	case "dag":
		if o.replays() { // the replay takes dag's whole graph and order
			res, err = cpath.DistDAG(c, g)
		} else {
			res, err = cpath.DistDAGPath(c, g)
		}
	case "dijkstra":
		g.Time = p.Times() // latest first, as the paper says: about one relaxation per edge
		res, err = cpath.ParallelDijkstra(c, g)
	case "delta":
		g.Time = p.Times() // buckets of time
		res, err = cpath.ParallelDeltaStepping(c, g, o.delta)
	case "split":
		in.Algo = "split/" + o.splitMode
		var splitIn *cpath.SplitInput
		if splitIn, err = splitInput(c, p); err == nil {
			res, err = cpath.Split(c, g, splitIn, cpath.SplitMode(o.splitMode))
		}
	case "topo", "topo-shuffle":
		topo, err = cpath.Topo(c, topoCalls(p), cpath.TopoOptions{Shuffle: o.algo == "topo-shuffle", Compress: o.compress})
		if err = mpix.Agree(c, err); err != nil {
			return err
		}
		// The exact path, to measure the heuristic's agreement with it.
		prog.Stage("finding the exact path for comparison")
		in.Analyzer.ExactAlgo = "split/" + string(cpath.ParPar)
		var splitIn *cpath.SplitInput
		if splitIn, err = splitInput(c, p); err == nil {
			res, err = cpath.Split(c, g, splitIn, cpath.ParPar)
		}
	}
	if err != nil {
		// Labelled where it happened: Agree hands the other ranks its text.
		what := "finding the critical path"
		if errors.Is(err, cpath.ErrCycle) {
			what = "inconsistent logs"
		}
		err = fmt.Errorf("%s: %s", what, strings.TrimPrefix(err.Error(), "cpath: "))
	}
	if err = mpix.Agree(c, err); err != nil {
		return fmt.Errorf("%s: %v", dir, err)
	}
	// dag's whole graph and order (asked for only with a replay) serve
	// the replay, which would otherwise gather and search the graph again.
	whole := res.Whole
	res.Whole = nil
	st := res.Stats
	if topo != nil {
		st = topo.Stats
	}
	a := in.Analyzer
	a.Rounds, a.BytesSent, a.RawBytes, a.Splits = st.Rounds, st.BytesSent, st.RawBytes, st.Splits
	a.Relaxations, a.Edges = st.Relaxations, st.Edges
	if st.Edges > 0 {
		a.RelaxationsPerEdge = float64(st.Relaxations) / float64(st.Edges)
	}

	// The search's arrays are garbage now: collect them, so that the
	// report reuses their pages (under GOGC 10 the heap's goal is above
	// what the report takes, which would otherwise come from fresh pages).
	runtime.GC()
	mark("path")
	prog.Stage("gathering the report")
	// The calls the report names: the path's (and the heuristic's).
	var want []int32
	for _, v := range res.Path.Vertices {
		if call, kind := p.Vertex(v); kind <= graph.VertexEnd {
			want = append(want, call)
		}
	}
	if topo != nil {
		for _, s := range topo.Segments {
			want = append(want, s.Call)
		}
	}
	calls, err := p.FetchCalls(c, want)
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	shares, err := mpix.GatherGob(c, <-shareDone)
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	mark("gather")
	// The drawing reads the graph, which the replay may let go of.
	var dotEdges []report.DOTEdge
	if o.dot != "" {
		if dotEdges, err = drawing(c, p, res.Path, calls); err != nil {
			return err
		}
	}
	prog.Stage("replaying the run: POP factors and what-if")
	rr, err := replayRun(c, p, o, win, res.Path, calls, whole)
	whole = nil
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	// Likewise the replay's renumbered graph and its solvers' arrays:
	// without this the report's segments took fresh pages (report-build
	// 0.73 s with the replay on the 16 M-call halo log, 0.16 s without).
	if rr != nil {
		runtime.GC()
	}
	mark("replay")
	// From here rank 0 reports alone (but for its share of the
	// timeline); the others wait for it without polling, so that it has
	// the cores of a node they share. It meets them on every return.
	if c.Rank() != 0 {
		err := writeTimeline(&o.timelineOpts, c, p, nil, win)
		if ierr := mpix.Idle(c); err == nil {
			err = ierr
		}
		return err
	}
	defer mpix.Idle(c)
	// Rank 0: merge the shares (instances in communicator and sequence
	// order) and report.
	var colls []graph.Collective
	parts := make([]*imbalance.Result, len(shares))
	offsets := make([]int32, len(shares))
	traffics := make([]*traffic.Result, len(shares))
	for i, s := range shares {
		parts[i] = s.Imbalance
		traffics[i] = s.Traffic
		offsets[i] = int32(len(colls))
		colls = append(colls, s.Colls...)
	}
	im := imbalance.Merge(parts, offsets)
	slices.SortFunc(im.Instances, func(a, b imbalance.Instance) int {
		x, y := &colls[a.Coll], &colls[b.Coll]
		return cmp.Or(cmp.Compare(x.Comm, y.Comm), cmp.Compare(x.Seq, y.Seq))
	})
	in.PAG = p.Summary(colls)
	in.Imbalance = im
	in.Replay = rr
	in.Traffic = traffic.Merge(traffics)
	in.PathCalls = calls
	in.Path = res.Path
	if topo != nil {
		in.Agreement = cpath.Agreement(exactSegments(in.PAG, res.Path, calls), topo.Segments)
		in.Path = cpath.Path{Length: topo.Length}
		for _, s := range topo.Segments {
			in.Heuristic = append(in.Heuristic, report.HeuristicSegment{Rank: int(s.Rank), Kind: s.Kind, Call: s.Call, Start: s.Start, End: s.End})
		}
	}
	sym := report.NewSymbolizer(in.PAG)
	in.Symbolize, in.Function = sym.Lookup, sym.Function
	if o.windowUsed {
		in.Window = &win
	}
	rep := report.Build(in)
	mark("report-build")
	if o.timeline != "" {
		prog.Stage("writing the timeline")
	}
	if err := writeTimeline(&o.timelineOpts, c, p, rep, win); err != nil {
		return err
	}
	prog.Done()
	if o.dot != "" {
		if err := writeTo(o.dot, stdout, func(w io.Writer) error { return report.WriteDOT(w, dotEdges, in.SiteLabel) }); err != nil {
			return err
		}
	}
	if o.matrix != "" {
		if err := writeTo(o.matrix, stdout, func(w io.Writer) error { return report.WriteHeatmap(w, rep, o.matrix) }); err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the flag names the file
			}
			return fmt.Errorf("--matrix %s: %v", o.matrix, err)
		}
	}
	if o.csv != "" {
		if err := report.WriteCSV(o.csv, rep); err != nil {
			return fmt.Errorf("--csv %s: %v", o.csv, err)
		}
	}
	err = writeReport(o, rep, stdout)
	mark("report-write")
	return err
}

// distGraph is the algorithms' view of this rank's part of the PAG: the
// same rows, shared.
func distGraph(p *graph.PAG) *cpath.DistGraph {
	me := p.Part
	return &cpath.DistGraph{N: p.NumVertices(), Bounds: p.Bounds, Lo: p.Bounds[me], Hi: p.Bounds[me+1],
		InStart: p.InStart, InSrc: p.InSrc, InWeight: p.InWeight, Target: p.Target}
}

// splitInput labels the splits (on every rank of c together) for the
// global split algorithm: each vertex's split, and the vertices each split
// is left through, the hubs of the synchronisation points, then the target.
func splitInput(c mpix.Comm, p *graph.PAG) (*cpath.SplitInput, error) {
	if err := p.Splits(c); err != nil {
		return nil, err
	}
	return &cpath.SplitInput{Split: p.Split, Exit: append(slices.Clone(p.SyncHub), p.Target)}, nil
}

// topoCalls gives the topological heuristics this rank's calls and their
// threads' order (the sources of the program edges).
func topoCalls(p *graph.PAG) *cpath.TopoCalls {
	in := &cpath.TopoCalls{Ranks: p.Ranks, RankStart: p.RankStart, RankLo: p.RankLo, RankHi: p.RankHi,
		Start: p.Start, End: p.End, Prev: make([]int32, len(p.Start))}
	for c := range in.Prev {
		in.Prev[c] = -1
		for e := p.InStart[2*c]; e < p.InStart[2*c+1]; e++ {
			if p.InKind[e] == graph.EdgeProgram {
				in.Prev[c] = p.InSrc[e] >> 1 // from E(prev)
			}
		}
	}
	return in
}

// exactSegments is the exact path as the segments the heuristics are
// compared by (cpath.PathSegments): hubs and the run's start are no call's.
func exactSegments(g *graph.PAG, path cpath.Path, calls graph.CallTable) []cpath.TopoSegment {
	vertex := func(v int32) (int32, bool, int64, bool) {
		c, kind := g.Vertex(v)
		switch kind {
		case graph.VertexStart:
			return c, true, calls.At(c).Start, true
		case graph.VertexEnd:
			return c, false, calls.At(c).End, true
		}
		return 0, false, 0, false
	}
	return cpath.PathSegments(path, vertex, func(c int32) int32 { return int32(g.Rank(c)) })
}
