// Package analysis is cpath's driver: it runs the analysis of one recorded
// run, stage by stage, on every rank of the analyzer's job (one process
// is the job of one rank), from an Options struct, and writes the report
// and the other outputs. The stages are one list (stages): each reads
// what the ones before it left in the state and is agreed on in one
// place, so that an error any rank meets ends the whole job with the same
// message on every rank. cmd/cpath only turns flags into Options.
//
// Data flows one way: logs (graph.Load) → the program activity graph,
// each rank its part (graph.Build) → the critical path (package cpath) →
// the replay (POP factors, what-if) → the report (package report), with
// the imbalance and traffic shares computed beside the search.
package analysis

import (
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
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/replay"
	"github.com/cpath/cpath/report"
)

// Algos are the critical-path algorithms, the default first; all run on
// the PAG distributed over the analyzer's ranks (one rank without mpirun).
var Algos = []string{"dag", "dijkstra", "delta", "split", "topo", "topo-shuffle"}

// Orders are how dijkstra and delta take their vertices, the default
// first: by vertex time, latest first (a reverse-time sweep, exact, about
// one relaxation per edge where the clocks are consistent), or by
// distance label, as the paper's §4.2 and §4.3 describe them (a priority
// queue of tentative distances, the largest first, over the weights made
// negative; Δ-stepping's buckets of them with light and heavy edges).
// Label-correcting on the longest path, the distance order takes a
// vertex again each time its distance grows: on a generated 8-rank,
// 160 k-call halo log it did not finish in 6 minutes (dijkstra) or 60 s
// (delta), where the time order takes 0.3 s; so time is the default.
var Orders = []string{"time", "distance"}

// Options are what one analysis is asked.
type Options struct {
	Dir       string          // the log directory
	Algo      string          // one of Algos ("": the default)
	Delta     int64           // --algo=delta's bucket width, ns (0: from the run's span)
	Order     string          // dijkstra's and delta's order, one of Orders ("": the default)
	SplitMode cpath.SplitMode // --algo=split's mode ("": par-par)
	Compress  bool            // --algo=topo-shuffle: LZ4-compress the shuffled intervals
	// CompareExact has topo and topo-shuffle build the graph as well and
	// find the exact path, to report their agreement with it and the
	// tables that need the graph. Without it they read only the calls
	// (graph.ReadCalls): no graph, no exact search (Graphless).
	CompareExact bool
	// Frames asks dag and the replay, at more than one rank, to sweep the
	// graph's rows redistributed by frame (cpath.FrameRows: one pass with
	// no rounds between the ranks, for about as much memory again as the
	// rank's part) rather than each rank's part in rounds (cpath.Schedule).
	// Where the frames do not balance over the ranks, the rounds it is.
	Frames bool

	// Scenarios are the what-if questions asked (ParseWhatIf); NoDefaults
	// leaves out the default ones, NoReplay the replay altogether (no POP
	// factors either).
	Scenarios  []replay.Scenario
	NoDefaults bool
	NoReplay   bool

	// Window, if set, restricts the timeline and the critical path's
	// tables to a stretch of the run and asks its POP factors too (ns
	// since the run's start; To 0: up to the run's end).
	Window *graph.Window
	// FromText is the window's start as the user gave it (--from), for
	// errors; its time in ns if empty.
	FromText string

	// The outputs: file names, "-" for Stdout where it makes sense, ""
	// for none. The text report goes to Stdout unless JSON or DOT does.
	JSON, DOT, Matrix, CSV string
	// JSONSegments writes every critical-path segment into the JSON
	// (otherwise only its stretches, report.CriticalPath.Stretches).
	JSONSegments     bool
	Timeline         string
	TimelineMaxBytes int64 // 0: no limit
	Top              int   // rows in each table of the text report
	// Wrappers is the program's MPI wrapper layer, which the table of
	// the path's computation by call site looks through (--wrapper).
	Wrappers report.Wrappers
	Stdout   io.Writer

	// Profiles of the analysis itself, for go tool pprof (rank r of a job
	// writes NAME.r).
	CPUProfile, MemProfile string
}

// The --what-if values that leave out the default scenarios, and the
// replay altogether (the POP factors too).
const (
	NoWhatIf = "none"
	NoReplay = "off"
	offAlone = "--what-if off turns the replay off: it takes no other scenario"
)

// ParseWhatIf reads the --what-if values into o: their syntax is checked
// before the job starts, the ranks and call sites they name against the
// run.
func (o *Options) ParseWhatIf(list []string) error {
	o.Scenarios, o.NoDefaults, o.NoReplay = nil, false, false
	for _, s := range list {
		if s == NoWhatIf || s == NoReplay {
			o.NoDefaults = true
			o.NoReplay = o.NoReplay || s == NoReplay
			continue
		}
		x, err := replay.Parse(s)
		if err != nil {
			return err
		}
		o.Scenarios = append(o.Scenarios, x)
	}
	if o.NoReplay && len(o.Scenarios) > 0 {
		return errors.New(offAlone)
	}
	return nil
}

// Check checks the options before any log is read, with the flags'
// names in its errors.
func (o *Options) Check() error {
	if o.Algo == "" {
		o.Algo = Algos[0]
	}
	if o.SplitMode == "" {
		o.SplitMode = cpath.ParPar
	}
	if !slices.Contains(Algos, o.Algo) {
		return fmt.Errorf("--algo=%s: unknown algorithm (%s)", o.Algo, strings.Join(Algos, ", "))
	}
	if !slices.Contains(cpath.SplitModes, o.SplitMode) {
		return fmt.Errorf("--split-mode=%s: unknown mode (seq-seq, par-seq, par-par, seq-par)", o.SplitMode)
	}
	if o.Delta < 0 {
		return fmt.Errorf("--delta=%d: must be positive (or 0 for the default)", o.Delta)
	}
	if o.Order != "" {
		if !slices.Contains(Orders, o.Order) {
			return fmt.Errorf("--order=%s: unknown order (%s)", o.Order, strings.Join(Orders, ", "))
		}
		if o.Algo != "dijkstra" && o.Algo != "delta" {
			return fmt.Errorf("--order=%s: for --algo=dijkstra and --algo=delta only", o.Order)
		}
	}
	if o.CompareExact && !o.topo() {
		return fmt.Errorf("--compare-exact: for --algo=topo and --algo=topo-shuffle only")
	}
	if o.Graphless() {
		if err := o.checkGraphless(); err != nil {
			return err
		}
	}
	if w := o.Window; w != nil && w.To != 0 && w.To <= w.From {
		return fmt.Errorf("--from=%s --to=%s: the window is empty (--from must be before --to)", report.Duration(w.From), report.Duration(w.To))
	}
	if o.TimelineMaxBytes < 0 {
		return fmt.Errorf("--timeline-max-mb: must be positive (or 0 for no limit)")
	}
	if o.Timeline == "-" {
		return fmt.Errorf("--timeline: needs a file name (the trace is too large for a terminal)")
	}
	if o.Matrix != "" {
		if _, err := report.HeatmapFormat(o.Matrix); err != nil {
			return fmt.Errorf("--matrix %s: %v", o.Matrix, err)
		}
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	return nil
}

// topo reports whether the algorithm is a topological heuristic.
func (o *Options) topo() bool { return o.Algo == "topo" || o.Algo == "topo-shuffle" }

// Graphless reports whether the analysis builds no graph: a topological
// heuristic without --compare-exact, which reads only the calls.
func (o *Options) Graphless() bool { return o.topo() && !o.CompareExact }

// checkGraphless rejects the outputs a graphless analysis cannot make.
func (o *Options) checkGraphless() error {
	need := func(flag string) error {
		return fmt.Errorf("%s needs the program activity graph, which --algo=%s builds only with --compare-exact", flag, o.Algo)
	}
	switch {
	case o.DOT != "":
		return need("--dot")
	case o.Matrix != "":
		return need("--matrix")
	case len(o.Scenarios) > 0:
		return need("--what-if")
	case o.Window != nil:
		return need("--from/--to")
	}
	return nil
}

// Run analyses o.Dir on every rank of c together and writes the outputs
// from rank 0. Every rank returns the same error.
func Run(c mpix.Comm, o Options) error {
	if err := o.Check(); err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		// The graph is a few large arrays without pointers, so a collection
		// costs little, while the default (the heap may reach twice what is
		// live) makes the peak RSS, and its first-touch page faults, about a
		// quarter larger. The user's GOGC wins.
		defer debug.SetGCPercent(debug.SetGCPercent(gcPercent))
	}
	stop, err := profile(c, o.CPUProfile, o.MemProfile)
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	defer stop()
	return run(c, &o)
}

// gcPercent is the analysis's GOGC. On a 16 M-call halo log (genlogs
// -ranks 16 -calls 1000000), 25 against Go's 100 took the peak RSS from
// 3.8–5.9 GB to 3.6 GB (2.9 GB without the replay, from 3.8); 10 against
// 25, from 2.7 to 2.3 GB without the replay and from 3.7 to 3.55 GB with
// it, in the same time within noise (7.5–7.9 s and 10.1–10.8 s).
const gcPercent = 10

// profile starts the CPU profile and arranges the allocation profile
// (its file made now, so that a bad name fails before the analysis);
// stop ends both.
func profile(c mpix.Comm, cpu, mem string) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	name := func(n string) string {
		if c.Size() > 1 {
			n += "." + strconv.Itoa(c.Rank())
		}
		return n
	}
	if cpu != "" {
		f, err := os.Create(name(cpu))
		if err != nil {
			return stop, err
		}
		stops = append(stops, func() { f.Close() })
		if err := pprof.StartCPUProfile(f); err != nil {
			return stop, err
		}
		stops = append(stops, pprof.StopCPUProfile)
	}
	if mem != "" {
		f, err := os.Create(name(mem))
		if err != nil {
			return stop, err
		}
		stops = append(stops, func() {
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		})
	}
	return stop, nil
}

// state is what the stages hand on to each other.
type state struct {
	c    mpix.Comm
	o    *Options
	prog *progress

	start      time.Time
	run        *graph.Run
	p          *graph.PAG
	graphTime  time.Duration // from the start to the graph built
	win        graph.Window  // the window asked, or the whole run
	buildBytes int64         // shipped to build the graph, summed over the ranks
	shares     chan share    // the imbalance and traffic shares, computed beside the search
	in         *report.Input

	res   *cpath.DistResult
	topo  *cpath.TopoResult
	sched *cpath.Schedule // the search's order of the graph, for the replay's sweeps
	rows  *cpath.Rows     // or its rows redistributed by frame
	calls graph.CallTable
	names *report.Symbolizer // rank 0: how the report and the scenarios name call sites
	sites []graph.SiteTable  // rank 0: every logged rank's call sites and call paths
	dot   []report.DOTEdge
	rep   *report.Report // rank 0
}

// stage is one step of the analysis: what progress shows while it runs
// ("": what showed before), the name CPATH_TIMINGS gives its end (""
// for none: the stage marks its own steps), and what it does.
type stage struct {
	show, mark string
	run        func(*state) error
}

// stages are the analysis, in order. Every rank runs every one; a stage
// that only rank 0 does checks for itself.
var stages = []stage{
	{"reading the logs", "load", (*state).load},
	{"building the graph", "", (*state).build},
	{"", "", (*state).startShares},
	{"finding the critical path", "path", (*state).search},
	{"gathering the report", "gather", (*state).gather},
	{"", "", (*state).drawing},
	{"replaying the run: POP factors and what-if", "replay", (*state).replay},
	{"", "report-build", (*state).buildReport},
	{"", "", (*state).timeline},
	{"", "report-write", (*state).write},
}

// run runs the stages. From the report on rank 0 works alone, but for the
// timeline; the others wait for it without polling (mpix.Idle), so that
// it has the cores of a node they share, and it meets them on its
// return.
func run(c mpix.Comm, o *Options) error {
	st := &state{c: c, o: o, prog: newProgress(c.Rank()), start: time.Now()}
	defer st.prog.Done()
	graph.Timings().Mark(c.Rank(), "")
	for _, s := range stages {
		if s.show != "" {
			st.prog.Stage(s.show)
		}
		err := s.run(st)
		if s.mark != "" {
			graph.Timings().Mark(c.Rank(), s.mark)
		}
		if err = mpix.Agree(c, err); err != nil {
			return err
		}
	}
	return nil
}

// load checks the logs' headers.
func (st *state) load() (err error) {
	load := graph.Load
	if st.o.Graphless() {
		load = graph.LoadCalls
	}
	st.run, err = load(st.o.Dir)
	return err
}

// build builds this rank's part of the PAG.
func (st *state) build() error {
	c := st.c
	b0, _ := c.Stats()
	build := graph.Build
	if st.o.Graphless() {
		build = graph.ReadCalls
	}
	p, err := build(c, st.run)
	if err != nil {
		return err
	}
	b1, _ := c.Stats()
	st.p, st.run, st.graphTime = p, nil, time.Since(st.start)
	if st.win, err = window(st.o.Window, st.o.FromText, p); err != nil {
		return err
	}
	// What building needed (messages, dependencies, the edges before their
	// rows) is garbage now: collect it before the search allocates, or the
	// heap grows to twice what building left live. And give it back: the
	// search's arrays want long runs of pages that the build's garbage,
	// kept by Go, does not have in one piece, so they would take fresh
	// pages beside it (on the 16 M-call halo log, peak RSS in the search
	// 2149 MiB against 1908 given back).
	debug.FreeOSMemory()
	graph.Timings().Mark(c.Rank(), "free-memory")
	st.buildBytes, err = mpix.AllreduceOne(c, b1-b0, mpix.Sum)
	return err
}

// window is the window asked, on the run of p (every analyzer rank knows
// its span): the whole run without one. A window that starts at or after
// the run's end is bad input.
func window(asked *graph.Window, fromText string, p *graph.PAG) (graph.Window, error) {
	run := p.T1 - p.T0
	if asked == nil {
		return graph.Window{To: run}, nil
	}
	w := graph.Window{From: asked.From, To: run}
	if asked.To != 0 {
		w.To = min(asked.To, run)
	}
	if w.From >= run {
		if fromText == "" {
			fromText = strconv.FormatInt(asked.From, 10)
		}
		return w, fmt.Errorf("--from=%s: outside the run, which lasts %s (%d ns)", fromText, report.Duration(run), run)
	}
	return w, nil
}

// replays reports whether the analysis replays the run.
func (o *Options) replays() bool { return !o.NoReplay && !o.Graphless() }

// gather fetches the calls the report names, the path's (and the
// heuristic's), and gathers the imbalance and traffic shares on rank 0.
func (st *state) gather() error {
	p := st.p
	var want []int32
	for _, v := range st.res.Path.Vertices {
		if call, kind := p.Vertex(v); kind <= graph.VertexEnd {
			want = append(want, call)
		}
	}
	if st.topo != nil {
		for _, s := range st.topo.Segments {
			want = append(want, s.Call)
		}
	}
	var err error
	if st.calls, err = p.FetchCalls(st.c, want); err != nil {
		return err
	}
	if err = mpix.Agree(st.c, err); err != nil {
		return err
	}
	if err := st.gatherShares(); err != nil {
		return err
	}
	if st.sites, err = p.GatherSites(st.c); err != nil {
		return err
	}
	if st.c.Rank() == 0 {
		st.names = report.NewSymbolizer(st.in.PAG)
	}
	return nil
}

// drawing gathers the graph's drawing for --dot: it reads the graph,
// which the replay may let go of.
func (st *state) drawing() (err error) {
	if st.o.DOT != "" {
		st.dot, err = drawing(st.c, st.p, st.res.Path, st.calls)
	}
	return err
}

// replay computes the POP factors and the what-if predictions.
func (st *state) replay() error {
	rr, err := replayRun(st)
	st.sched, st.rows = nil, nil
	if err != nil {
		return err
	}
	st.in.Replay = rr
	// Likewise the schedule and the solves' scratch: without this the
	// report's segments took fresh pages (report-build 0.73 s with the
	// replay on the 16 M-call halo log, 0.16 s without).
	if rr != nil {
		runtime.GC()
	}
	return nil
}

// buildReport assembles the report on rank 0.
func (st *state) buildReport() error {
	if st.c.Rank() != 0 {
		return nil
	}
	in := st.in
	in.PathCalls, in.Path = st.calls, st.res.Path
	if st.topo != nil {
		in.Agreement = cpath.Agreement(exactSegments(in.PAG, st.res.Path, st.calls), st.topo.Segments)
		in.Path = cpath.Path{Length: st.topo.Length}
		for _, s := range st.topo.Segments {
			in.Heuristic = append(in.Heuristic, report.HeuristicSegment{Rank: int(s.Rank), Kind: s.Kind, Call: s.Call, Start: s.Start, End: s.End})
		}
	}
	in.Names, in.Sites, in.Wrappers = st.names, st.sites, st.o.Wrappers
	if st.o.Window != nil {
		in.Window = &st.win
	}
	st.rep = report.Build(in)
	return nil
}

// timeline writes the --timeline file, every rank its part.
func (st *state) timeline() error {
	if st.o.Timeline == "" {
		return nil
	}
	st.prog.Stage("writing the timeline")
	return writeTimeline(st.c, st.p, st.o, st.rep, st.win)
}

// write writes the outputs from rank 0, while the other ranks wait.
func (st *state) write() error {
	if st.c.Rank() != 0 {
		return mpix.Idle(st.c)
	}
	defer mpix.Idle(st.c)
	st.prog.Done()
	return writeOutputs(st.o, st.rep, st.dot, st.in.SiteLabel)
}
