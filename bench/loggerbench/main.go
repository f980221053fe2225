// Command loggerbench measures what the cpath logger (lib/libcpathlog.so)
// costs an MPI program, against the targets of the logger issue:
//
//   - added cost per intercepted call ≤ 50 ns (median, tight loop of cheap
//     calls, 2 ranks);
//   - whole-program slowdown ≤ 2% on an application making thousands of MPI
//     calls per second per rank (a 1-D halo exchange);
//   - memory held by the logger per rank ≤ 16 MiB, whatever the run length;
//   - ≤ 16 bytes on disk per call for a regular halo-exchange pattern.
//
// It builds the C programs in bench/progs with mpicc, then runs each one
// side by side, interleaved (A B, B A, A B, …), without (A, the baseline) and
// with (B) the logger preloaded, and reports every figure as a ratio or a
// difference of the two. See bench/README.md.
//
//	go run ./bench/loggerbench -quick
//	go run ./bench/loggerbench -json bench.json
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cpath/cpath/trace"
)

// Targets from the logger issue.
const (
	targetPerCallNs   = 50.0
	targetSlowdownPct = 2.0
	targetMemMiB      = 16.0
	targetBytesPerCal = 16.0
)

type config struct {
	lib, progs, tmp string
	np              int
	reps            int
	haloReps        int
	quick           bool
	rate            float64 // target MPI calls per second per rank for halo
	haloSeconds     float64
	work            int // halo compute per iteration; 0 = calibrate
	tightN          int // calls per batch
	tightBatches    int
	memHaloIters    int // short halo run for the memory test (the long one is 10×)
	memTightBatches int // short tightloop run for the memory test (the long one is 10×)
	mpirunArgs      []string
	timeout         time.Duration
	verbose         bool
	loggerEnv       []string // extra KEY=VALUE for the logger side only
	warnings        []string // stderr of the logger side, each line once
	haloBudget      time.Duration
	only            map[string]bool // sections to run
	noLogger        bool            // -lib none: run the baseline on both sides (noise floor)
	refLib          string          // micro: a reference logger run as a third side
	microReps       int
	microCases      string
	mpi             *mpiImpl // the MPI the programs are built and run with
}

func main() {
	var c config
	var jsonOut, extra, lenv, only, mpis, libMPICH, refLibMPICH string
	flag.StringVar(&c.lib, "lib", "", "logger library to preload under Open MPI (default: the repository's lib/libcpathlog.so; \"none\" runs the baseline on both sides to show the noise floor)")
	flag.StringVar(&libMPICH, "lib-mpich", "", "logger library to preload under MPICH (default: the repository's lib/libcpathlog-mpich.so; \"none\" as for -lib)")
	flag.StringVar(&mpis, "mpi", "openmpi", "the MPIs to build and run the programs with, comma-separated (openmpi, mpich): each runs the sections in turn, and a table compares them")
	flag.StringVar(&c.progs, "progs", "", "directory of the C benchmark programs (default: the repository's bench/progs)")
	flag.IntVar(&c.reps, "reps", 0, "side-by-side repetitions (default 9, 5 with -quick)")
	flag.BoolVar(&c.quick, "quick", false, "fast mode (under a minute): shorter runs, fewer repetitions")
	flag.IntVar(&c.np, "np", 2, "MPI ranks")
	flag.Float64Var(&c.rate, "rate", 10000, "halo: MPI calls per second per rank to calibrate the computation for")
	flag.Float64Var(&c.haloSeconds, "halo-seconds", 1.5, "halo: approximate length of one run, seconds")
	flag.IntVar(&c.haloReps, "halo-reps", 0, "halo: side-by-side pairs (default 25, 8 with -quick)")
	flag.IntVar(&c.work, "work", 0, "halo: stencil sweeps per iteration (0: calibrate for -rate)")
	flag.StringVar(&jsonOut, "json", "", "also write the results as JSON to this file (- for stdout)")
	flag.StringVar(&extra, "mpirun-args", "", "extra mpirun arguments, space-separated (e.g. \"--bind-to none\")")
	flag.StringVar(&lenv, "logger-env", "", "extra environment for the logger side only, comma-separated KEY=VALUE (e.g. CPATH_NO_TSC=1)")
	flag.StringVar(&only, "only", "percall,halo,memory", "sections to run, comma-separated: percall, halo, memory, micro, callpaths")
	flag.StringVar(&c.refLib, "ref-lib", "", "micro: a reference logger library (e.g. an older build) run as a third side; \"standin\" builds progs/standin.c, 36 ns of private work per send and receive")
	flag.StringVar(&refLibMPICH, "ref-lib-mpich", "", "micro: the reference logger library under MPICH (-ref-lib is Open MPI's)")
	flag.IntVar(&c.microReps, "micro-reps", 5, "micro: interleaved repetitions")
	flag.StringVar(&c.microCases, "micro-cases", "", "micro: run only these cases, comma-separated (e.g. threads-1,threads-4)")
	flag.StringVar(&c.tmp, "keep", "", "keep programs and logs in this directory instead of a removed temporary one")
	flag.DurationVar(&c.timeout, "timeout", 10*time.Minute, "limit for one mpirun")
	flag.BoolVar(&c.verbose, "v", false, "print every command and its timing lines")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: loggerbench [flags]\n\nMeasures the cpath logger's overhead side by side with a baseline. Flags:\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	c.mpirunArgs = strings.Fields(extra)
	c.only = map[string]bool{}
	for _, o := range strings.Split(only, ",") {
		switch o = strings.TrimSpace(o); o {
		case "percall", "halo", "memory", "micro", "callpaths":
			c.only[o] = true
		case "":
		default:
			fmt.Fprintln(os.Stderr, "loggerbench: -only: unknown section", o)
			os.Exit(2)
		}
	}
	for _, e := range strings.Split(lenv, ",") {
		if e = strings.TrimSpace(e); e != "" {
			if !strings.Contains(e, "=") {
				fmt.Fprintln(os.Stderr, "loggerbench: -logger-env wants KEY=VALUE, got", e)
				os.Exit(2)
			}
			c.loggerEnv = append(c.loggerEnv, e)
		}
	}
	impls, err := parseMPIs(mpis)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loggerbench:", err)
		os.Exit(2)
	}
	var reps []*Report
	for i, m := range impls {
		mc := c // each MPI runs with a copy: its own library, programs and results
		mc.mpi = m
		if m.hydra {
			mc.lib = libMPICH
			mc.refLib = refLibMPICH
		}
		if c.tmp != "" && len(impls) > 1 {
			mc.tmp = filepath.Join(c.tmp, m.Key)
		}
		if err := mc.setup(); err != nil {
			fmt.Fprintln(os.Stderr, "loggerbench:", err)
			os.Exit(1)
		}
		if len(impls) > 1 {
			fmt.Fprintf(os.Stderr, "loggerbench: %s (%d of %d)\n", m.Name, i+1, len(impls))
		}
		rep, err := run(&mc)
		if err != nil {
			fmt.Fprintf(os.Stderr, "loggerbench: %s: %v\n", m.Name, err)
			os.Exit(1)
		}
		if i > 0 {
			fmt.Println()
		}
		printReport(os.Stdout, rep)
		reps = append(reps, rep)
	}
	if len(reps) > 1 {
		fmt.Println()
		printComparison(os.Stdout, reps)
	}
	if jsonOut != "" {
		// One MPI: its report; several: the array of their reports.
		var js []byte
		if len(reps) == 1 {
			js, _ = json.MarshalIndent(reps[0], "", "  ")
		} else {
			js, _ = json.MarshalIndent(reps, "", "  ")
		}
		js = append(js, '\n')
		if jsonOut == "-" {
			os.Stdout.Write(js)
		} else if err := os.WriteFile(jsonOut, js, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "loggerbench:", err)
			os.Exit(1)
		}
	}
}

// repoRoot finds the cpath module root above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/cpath/cpath")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the cpath repository: give -lib and -progs")
		}
		dir = parent
	}
}

func (c *config) setup() error {
	if c.lib == "" || c.progs == "" {
		root, err := repoRoot()
		if err != nil {
			return err
		}
		if c.lib == "" {
			c.lib = filepath.Join(root, "lib", c.mpi.lib)
		}
		if c.progs == "" {
			c.progs = filepath.Join(root, "bench", "progs")
		}
	}
	if c.lib == "none" {
		c.noLogger = true
	} else {
		abs, err := filepath.Abs(c.lib)
		if err != nil {
			return err
		}
		c.lib = abs
		if _, err := os.Stat(c.lib); err != nil {
			return fmt.Errorf("logger library: %v (build it with `make lib/%s`, or pass -lib none to measure the noise floor)", err, c.mpi.lib)
		}
	}
	if c.reps == 0 {
		c.reps = 9
		if c.quick {
			c.reps = 5
		}
	}
	// Short runs, many of them: on a shared machine interference comes in
	// bursts of seconds, and a short pair of runs is more likely to see the
	// same conditions on both sides; the median of many pair ratios is what
	// narrows the confidence interval.
	if c.haloReps == 0 {
		c.haloReps = 25
		if c.quick {
			c.haloReps = 8
		}
	}
	// Batches of 1000 calls, well below the logger's buffer: most batches
	// hold no flush, so the median is the hot path and the mean includes
	// the flushes.
	c.tightN = 1000
	c.tightBatches = 1000
	c.memHaloIters = 100000
	c.memTightBatches = 200
	if c.quick {
		c.tightBatches = 300
		c.memHaloIters = 30000
		c.memTightBatches = 50
		// On a loaded machine a halo run can take many times its nominal
		// length: stop adding pairs after this long (3 pairs at least).
		c.haloBudget = 25 * time.Second
	}
	if c.np < 1 || c.reps < 1 || c.haloReps < 1 || c.haloSeconds <= 0 {
		return errors.New("-np, -reps, -halo-reps and -halo-seconds must be positive")
	}
	return nil
}

// ---------------------------------------------------------------- running

// side is one half of a comparison.
type side int

const (
	base side = iota // without the logger
	with             // with the logger preloaded
)

func (s side) String() string {
	if s == base {
		return "base"
	}
	return "logger"
}

type runResult struct {
	lines  [][]string // whitespace-split lines the ranks printed
	wall   time.Duration
	load   float64 // 1-minute load average just before the run
	stderr string
	logDir string
}

var runSeq int

// preload is the mpirun arguments that preload the logger lib, with the
// logger's environment.
func (c *config) preload(lib string) []string {
	a := c.mpi.env("LD_PRELOAD=" + lib)
	for _, e := range c.loggerEnv {
		a = append(a, c.mpi.env(e)...)
	}
	return a
}

// command is mpirun with arguments a, its output captured, in the cleaned
// environment.
func (c *config) command(ctx context.Context, a []string) (cmd *exec.Cmd, out, errb *bytes.Buffer) {
	cmd = exec.CommandContext(ctx, c.mpi.run(), a...)
	out, errb = new(bytes.Buffer), new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = out, errb
	cmd.Env = cleanEnv()
	if c.verbose {
		fmt.Fprintf(os.Stderr, "+ %s %s\n", filepath.Base(c.mpi.run()), strings.Join(a, " "))
	}
	return cmd, out, errb
}

// mpirun runs prog on c.np ranks, preloading the logger on the with side,
// and returns the lines the ranks printed. Each rank's output goes to its
// own file (Open MPI's --output-filename, Hydra's -outfile-pattern):
// mpirun's own stdout interleaves the ranks' output in the middle of lines.
func (c *config) mpirun(s side, prog string, args ...string) (*runResult, error) {
	runSeq++
	logDir := filepath.Join(c.tmp, fmt.Sprintf("logs-%03d-%s-%s", runSeq, filepath.Base(prog), s))
	outDir := filepath.Join(c.tmp, fmt.Sprintf("out-%03d-%s-%s", runSeq, filepath.Base(prog), s))
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(outDir)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	a := append(c.mpi.jobArgs(c.np, false, false), c.mpi.outputArgs(outDir)...)
	a = append(a, c.mpirunArgs...)
	if s == with && !c.noLogger {
		a = append(a, c.preload(c.lib)...)
	}
	a = append(a, c.mpi.env("CPATH_DIR="+logDir)...)
	a = append(a, filepath.Join(c.tmp, prog))
	a = append(a, args...)
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	cmd, out, errb := c.command(ctx, a)
	r := &runResult{logDir: logDir, load: loadAvg()}
	t0 := time.Now()
	err := cmd.Run()
	r.wall = time.Since(t0)
	r.stderr = errb.String()
	if s == with {
		for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
			if l = strings.TrimSpace(l); l != "" && !slices.Contains(c.warnings, l) && len(c.warnings) < 20 {
				c.warnings = append(c.warnings, l)
			}
		}
	}
	if c.verbose && errb.Len() > 0 {
		os.Stderr.Write(errb.Bytes())
	}
	if err != nil {
		return nil, fmt.Errorf("mpirun %s (%s): %v\n%s%s", prog, s, err, lastLines(out.String(), 10), lastLines(errb.String(), 20))
	}
	files := c.mpi.rankFiles(outDir)
	if len(files) != c.np {
		return nil, fmt.Errorf("mpirun %s (%s): found %d rank output files in %s, want %d", prog, s, len(files), outDir, c.np)
	}
	for _, fn := range files {
		b, err := os.ReadFile(fn)
		if err != nil {
			return nil, err
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 0 {
				r.lines = append(r.lines, f)
			}
		}
	}
	if c.verbose {
		fmt.Fprintf(os.Stderr, "  %d lines in %v\n", len(r.lines), r.wall.Round(time.Millisecond))
	}
	return r, nil
}

// loadAvg is the 1-minute load average (0 where /proc/loadavg is absent).
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	x, _ := strconv.ParseFloat(f[0], 64)
	return x
}

// cleanEnv is the environment without any preload or logger settings the
// caller may have, so that the baseline really is one.
func cleanEnv() []string {
	var env []string
	for _, e := range os.Environ() {
		if strings.HasPrefix(e, "LD_PRELOAD=") || strings.HasPrefix(e, "CPATH_") {
			continue
		}
		env = append(env, e)
	}
	return append(env, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	if len(l) == 1 && l[0] == "" {
		return ""
	}
	return strings.Join(l, "\n") + "\n"
}

// pairs runs f for both sides reps times, alternating which goes first so
// that neither side always runs on a warmer (or noisier) machine. With a
// budget it stops starting new pairs once the budget is spent and at least
// three pairs are done; it returns the number of pairs run.
func pairs(reps int, budget time.Duration, f func(rep int, s side) error) (int, error) {
	t0 := time.Now()
	for i := 0; i < reps; i++ {
		if budget > 0 && i >= 3 && time.Since(t0) > budget {
			return i, nil
		}
		order := []side{base, with}
		if i%2 == 1 {
			order = []side{with, base}
		}
		for _, s := range order {
			if err := f(i, s); err != nil {
				return i, err
			}
		}
	}
	return reps, nil
}

// ---------------------------------------------------------------- results

// Report is everything loggerbench measured; it is also the JSON output.
type Report struct {
	MPI       string   `json:"mpi"` // the MPI the programs were built and run with
	Date      string   `json:"date"`
	Host      string   `json:"host"`
	CPUs      int      `json:"cpus"`
	Lib       string   `json:"lib"`
	LoggerEnv []string `json:"logger_env,omitempty"`
	NoLogger  bool     `json:"no_logger,omitempty"` // -lib none: both sides are the baseline
	Ranks     int      `json:"ranks"`
	Reps      int      `json:"reps"`
	Quick     bool     `json:"quick"`
	Seconds   float64  `json:"seconds"` // the whole benchmark
	Reference struct {
		ClockGettimeNs float64 `json:"clock_gettime_ns"` // one clock_gettime(CLOCK_MONOTONIC)
		RdtscNs        float64 `json:"rdtsc_ns"`         // one rdtsc
		EmptyNs        float64 `json:"empty_loop_ns"`    // one empty loop iteration
		// RecordNs is the floor of a logger of this design: two rdtsc and
		// one 64-byte record stored into a 1 MiB buffer.
		RecordNs float64 `json:"record_ns"`
	} `json:"reference"`
	PerCall []PerCall `json:"per_call"`
	Halo    Halo      `json:"halo"`
	Memory  []Memory  `json:"memory"`
	// CommBound is the slowdown of halo without computation (the memory
	// runs), where the logger's cost is large enough to measure well.
	CommBound []CommBound `json:"comm_bound_halo,omitempty"`
	Disk      []Disk      `json:"disk"`
	Micro     *Micro      `json:"micro,omitempty"`
	CallPaths *CallPaths  `json:"call_paths,omitempty"`
	Targets   []Target    `json:"targets"`
	Warnings  []string    `json:"warnings,omitempty"`
	Config    ReportConf  `json:"config"`
}

type ReportConf struct {
	TightCallsPerBatch int      `json:"tight_calls_per_batch"`
	TightBatches       int      `json:"tight_batches"`
	HaloIters          int      `json:"halo_iters"`
	HaloWork           int      `json:"halo_work"`
	MemHaloIters       []int    `json:"mem_halo_iters"`
	MemTightBatches    []int    `json:"mem_tight_batches"`
	MpirunArgs         []string `json:"mpirun_args,omitempty"`
}

// PerCall is the cost of one kind of cheap call in the tight loop.
type PerCall struct {
	Kind string `json:"kind"`
	// Medians over every batch of every rank and repetition, ns per call.
	BaseNs float64 `json:"base_ns"`
	LogNs  float64 `json:"logger_ns"`
	// AddedNs is the median over repetitions of (logger − base) of the
	// per-repetition medians; Ratio likewise of logger / base.
	AddedNs float64 `json:"added_ns"`
	Ratio   float64 `json:"ratio"`
	// Means over batches, so including whatever the logger does only now
	// and then (flushing a full buffer): the amortised cost.
	BaseMeanNs  float64 `json:"base_mean_ns"`
	LogMeanNs   float64 `json:"logger_mean_ns"`
	AddedMeanNs float64 `json:"added_mean_ns"`
	// Slowest batch with the logger (ns per call).
	LogMaxNs float64 `json:"logger_max_ns"`
}

// Halo is the whole-program slowdown of the halo exchange.
type Halo struct {
	Pairs        int     `json:"pairs"`    // side-by-side pairs run
	LoadAvg      float64 `json:"load_avg"` // median 1-minute load average before the runs
	Iters        int     `json:"iters"`
	Work         int     `json:"work"`
	CallsPerRank int64   `json:"calls_per_rank"`
	CallsPerSec  float64 `json:"calls_per_sec_per_rank"` // baseline, median
	// Total: main's entry to the end of MPI_Finalize (max over ranks), so
	// logger start-up and the last flush are in: the whole-program figure.
	// Loop: the iterations only. Wall: mpirun as a whole, seen from outside.
	// Iter: the median time of one iteration (max over ranks), the
	// steady-state cost, robust to bursts of interference from other jobs.
	Total Slowdown `json:"total"`
	Loop  Slowdown `json:"loop"`
	Wall  Slowdown `json:"mpirun_wall"`
	Iter  Slowdown `json:"median_iteration"`
	// Threads per rank, and context switches per rank per second during
	// the loop (medians): involuntary ones of the main thread (preempted),
	// voluntary ones of the whole process (a helper thread sleeping and
	// waking up). The logger's Go runtime adds threads.
	Threads         [2]int64   `json:"threads"` // base, logger
	MainInvolPerSec [2]float64 `json:"main_involuntary_per_sec"`
	ProcVolPerSec   [2]float64 `json:"process_voluntary_per_sec"`
	// The logger's own time in MPI_Init and MPI_Finalize (median, max over
	// ranks, logger − base), seconds.
	AddedInitS     float64 `json:"added_init_s"`
	AddedFinalizeS float64 `json:"added_finalize_s"`
	// BaseSpreadPct is how much the baseline's total time varied between
	// repetitions ((max−min)/min): the noise the slowdown is measured in.
	BaseSpreadPct float64 `json:"base_spread_pct"`
	// ExpectedPct is what the better-resolved per-call cost predicts: calls
	// per second × ExpectedPerCallNs (measured as ExpectedFrom says), plus
	// the logger's MPI_Init and MPI_Finalize time, over the run time.
	ExpectedPct       float64 `json:"expected_pct"`
	ExpectedPerCallNs float64 `json:"expected_per_call_ns"`
	ExpectedFrom      string  `json:"expected_from"`
}

type Slowdown struct {
	BaseS []float64 `json:"base_s"`
	LogS  []float64 `json:"logger_s"`
	// Ratio is the median over repetitions of logger/base (each pair run
	// back to back); Pct is (Ratio−1)·100, and [CILoPct, CIHiPct] a
	// distribution-free confidence interval for it (sign test, level CI).
	Ratio   float64 `json:"ratio"`
	Pct     float64 `json:"pct"`
	CILoPct float64 `json:"ci_lo_pct"`
	CIHiPct float64 `json:"ci_hi_pct"`
	CI      float64 `json:"ci_level"`
	// RatioOfMedians is median(logger)/median(base); MinRatio is
	// min(logger)/min(base), the best runs of each side (interference
	// only ever slows a run down).
	RatioOfMedians float64 `json:"ratio_of_medians"`
	MinRatio       float64 `json:"min_ratio"`
}

// CommBound is the slowdown of a communication-bound halo exchange.
type CommBound struct {
	Run         string   `json:"run"`
	Iters       string   `json:"iters"`
	CallsPerSec float64  `json:"calls_per_sec_per_rank"` // baseline, median
	Loop        Slowdown `json:"loop"`
	Iter        Slowdown `json:"median_iteration"`
	ExpectedPct float64  `json:"expected_pct"` // calls/s × mean added cost per call of the tight loop
	// AddedNsPerCall is the logger's cost per call of this pattern, flushes
	// included: median over pairs of (loop time with − without) / calls.
	AddedNsPerCall float64 `json:"added_ns_per_call"`
}

// Memory is the peak resident set size with and without the logger.
type Memory struct {
	Program  string  `json:"program"`
	Run      string  `json:"run"` // short or long (10× the calls)
	Calls    int64   `json:"calls_per_rank"`
	BaseKiB  int64   `json:"base_vmhwm_kib"`   // max over ranks, median over repetitions
	LogKiB   int64   `json:"logger_vmhwm_kib"` // max over ranks, median over repetitions
	AddedMiB float64 `json:"added_mib"`        // median over repetitions of max over ranks of (logger − base)
}

// Disk is the on-disk size of a run's logs.
type Disk struct {
	Run          string  `json:"run"`
	Files        int     `json:"files"`
	Bytes        int64   `json:"bytes"`
	HeaderBytes  int64   `json:"header_bytes"`
	TimedRecords int64   `json:"timed_records"` // calls logged
	SubRecords   int64   `json:"sub_records"`
	Calls        int64   `json:"calls"` // MPI calls the program says it made (all ranks)
	BytesPerCall float64 `json:"bytes_per_call"`
	// Without the per-file header, which a longer run amortises away.
	RecordBytesPerCall float64 `json:"record_bytes_per_call"`
	Complete           bool    `json:"complete"`
}

type Target struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Limit float64 `json:"limit"`
	Unit  string  `json:"unit"`
	Pass  bool    `json:"pass"` // Value ≤ Limit
	// Verdict is pass, miss, or noisy: the point estimate is on one side of
	// the limit but its confidence interval straddles it.
	Verdict string `json:"verdict"`
	Note    string `json:"note,omitempty"`
}

// ---------------------------------------------------------------- benchmark

func run(c *config) (*Report, error) {
	start := time.Now()
	if c.tmp == "" {
		d, err := os.MkdirTemp("", "loggerbench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		c.tmp = d
	} else if err := os.MkdirAll(c.tmp, 0o755); err != nil {
		return nil, err
	}
	for _, p := range []string{"tightloop", "halo"} {
		cmd := exec.Command(c.mpi.cc(), "-O2", "-o", filepath.Join(c.tmp, p), filepath.Join(c.progs, p+".c"), "-lm")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("mpicc %s.c: %v\n%s", p, err, out)
		}
	}
	host, _ := os.Hostname()
	rep := &Report{MPI: c.mpi.Name, Date: time.Now().UTC().Format(time.RFC3339), Host: host, CPUs: runtime.NumCPU(),
		Lib: c.lib, LoggerEnv: c.loggerEnv, NoLogger: c.noLogger, Ranks: c.np, Reps: c.reps, Quick: c.quick}
	rep.Config.MpirunArgs = c.mpirunArgs
	if c.noLogger {
		rep.Warnings = append(rep.Warnings, "-lib none: both sides run without the logger; the figures are the noise floor")
	}
	say := func(f string, a ...any) { fmt.Fprintf(os.Stderr, "loggerbench: "+f+"\n", a...) }

	if c.only["percall"] {
		say("per-call cost: tightloop %d calls × %d batches, %d reps", c.tightN, c.tightBatches, c.reps)
		if err := benchPerCall(c, rep); err != nil {
			return nil, err
		}
	}
	if c.only["halo"] {
		say("whole-program slowdown: halo, ~%.1f s per run, %d pairs", c.haloSeconds, c.haloReps)
		if err := benchHalo(c, rep); err != nil {
			return nil, err
		}
	}
	if c.only["micro"] {
		say("micro-benchmarks: %d interleaved repetitions", c.microReps)
		if err := benchMicro(c, rep); err != nil {
			return nil, err
		}
	}
	if c.only["callpaths"] {
		say("call paths: cxxsolver without frame pointers, CPATH_CALLDEPTH 0 and 4, %d interleaved repetitions", c.microReps)
		if err := benchCallPaths(c, rep); err != nil {
			return nil, err
		}
	}
	if c.only["memory"] {
		say("memory: short and 10× longer runs")
		if err := benchMemory(c, rep); err != nil {
			return nil, err
		}
	}
	expectHalo(rep)
	rep.Seconds = time.Since(start).Seconds()
	for _, l := range c.warnings {
		rep.Warnings = append(rep.Warnings, "stderr with the logger: "+l)
	}
	judge(rep)
	return rep, nil
}

// tightBatch is one timing line of tightloop.
type tightBatch struct {
	kind string
	ns   float64
}

func parseTight(r *runResult) (batches []tightBatch, calls map[int]int64, mem map[int][2]int64, err error) {
	calls = map[int]int64{}
	mem = map[int][2]int64{}
	for _, f := range r.lines {
		switch {
		case f[0] == "tight" && len(f) == 6:
			ns, err := strconv.ParseFloat(f[5], 64)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("tightloop: bad line %q", strings.Join(f, " "))
			}
			batches = append(batches, tightBatch{f[2], ns})
		case f[0] == "calls" && len(f) == 3:
			rank, _ := strconv.Atoi(f[1])
			n, _ := strconv.ParseInt(f[2], 10, 64)
			calls[rank] = n
		case f[0] == "mem" && len(f) == 4:
			if err := parseMem(f, mem); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	if len(batches) == 0 {
		return nil, nil, nil, errors.New("tightloop printed no timing lines")
	}
	return batches, calls, mem, nil
}

func parseMem(f []string, mem map[int][2]int64) error {
	rank, e1 := strconv.Atoi(f[1])
	before, e2 := strconv.ParseInt(f[2], 10, 64)
	after, e3 := strconv.ParseInt(f[3], 10, 64)
	if e1 != nil || e2 != nil || e3 != nil {
		return fmt.Errorf("bad mem line %q", strings.Join(f, " "))
	}
	mem[rank] = [2]int64{before, after}
	return nil
}

var mpiKinds = []string{"test", "wait", "sendrecv", "isend", "irecv"}

func benchPerCall(c *config, rep *Report) error {
	rep.Config.TightCallsPerBatch = c.tightN
	rep.Config.TightBatches = c.tightBatches
	// all[side][kind] pools every batch; per[side][kind][rep] is one run's.
	all := [2]map[string][]float64{{}, {}}
	per := [2]map[string][][]float64{{}, {}}
	var checked bool
	_, err := pairs(c.reps, 0, func(i int, s side) error {
		r, err := c.mpirun(s, "tightloop", strconv.Itoa(c.tightN), strconv.Itoa(c.tightBatches))
		if err != nil {
			return err
		}
		batches, calls, _, err := parseTight(r)
		if err != nil {
			return err
		}
		for _, b := range batches {
			all[s][b.kind] = append(all[s][b.kind], b.ns)
			for len(per[s][b.kind]) <= i {
				per[s][b.kind] = append(per[s][b.kind], nil)
			}
			per[s][b.kind][i] = append(per[s][b.kind][i], b.ns)
		}
		if s == with && !checked && !c.noLogger {
			checked = true
			checkRecorded(rep, r, calls)
		}
		return os.RemoveAll(r.logDir) // tens of MB of logs per run
	})
	if err != nil {
		return err
	}
	rep.Reference.ClockGettimeNs = median(all[base]["clock"])
	rep.Reference.RdtscNs = median(all[base]["rdtsc"])
	rep.Reference.EmptyNs = median(all[base]["empty"])
	rep.Reference.RecordNs = median(all[base]["record"])
	for _, k := range mpiKinds {
		pc := PerCall{Kind: k, BaseNs: median(all[base][k]), LogNs: median(all[with][k]),
			BaseMeanNs: mean(all[base][k]), LogMeanNs: mean(all[with][k]), LogMaxNs: maxf(all[with][k])}
		var added, ratio []float64
		for i := 0; i < c.reps; i++ {
			a, b := median(per[base][k][i]), median(per[with][k][i])
			added = append(added, b-a)
			ratio = append(ratio, b/a)
		}
		pc.AddedNs = median(added)
		pc.Ratio = median(ratio)
		pc.AddedMeanNs = pc.LogMeanNs - pc.BaseMeanNs
		rep.PerCall = append(rep.PerCall, pc)
	}
	return nil
}

// checkRecorded compares the records in a tightloop run's logs with the
// calls the program made, so that a logger that skips calls cannot look
// cheap.
func checkRecorded(rep *Report, r *runResult, calls map[int]int64) {
	d, err := diskUsage(r.logDir)
	if err != nil {
		rep.Warnings = append(rep.Warnings, "tightloop logs: "+err.Error())
		return
	}
	var want int64
	for _, n := range calls {
		want += n
	}
	// The program counts the calls it made after MPI_Init; the logger also
	// logs MPI_Init and MPI_Finalize.
	want += 2 * int64(len(calls))
	if d.TimedRecords != want {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"tightloop: the logs hold %d timed records for %d MPI calls (incl. Init and Finalize): the per-call cost does not cover every call",
			d.TimedRecords, want))
	}
	if !d.Complete {
		rep.Warnings = append(rep.Warnings, "tightloop: logs are not complete (no MPI_Finalize trailer)")
	}
}

type haloOut struct {
	iters, calls                         int64
	init, loop, compute, finalize, total float64 // max over ranks
	iterMedian                           float64 // max over ranks
	threads                              int64   // max over ranks
	mainInvol, procVol                   int64   // context switches during the loop, summed over ranks
	computeMean, loopMean                float64
	mem                                  map[int][2]int64
	checksum                             string
	ranks                                int
	wall                                 float64
}

func parseHalo(r *runResult) (*haloOut, error) {
	h := &haloOut{mem: map[int][2]int64{}, wall: r.wall.Seconds()}
	for _, f := range r.lines {
		switch {
		case f[0] == "halo" && len(f) == 11:
			var v [6]float64
			for i := range v {
				x, err := strconv.ParseFloat(f[4+i], 64)
				if err != nil {
					return nil, fmt.Errorf("halo: bad line %q", strings.Join(f, " "))
				}
				v[i] = x
			}
			h.iters, _ = strconv.ParseInt(f[2], 10, 64)
			h.calls, _ = strconv.ParseInt(f[3], 10, 64)
			h.init = math.Max(h.init, v[0])
			h.loop = math.Max(h.loop, v[1])
			h.compute = math.Max(h.compute, v[2])
			h.finalize = math.Max(h.finalize, v[3])
			h.total = math.Max(h.total, v[4])
			h.iterMedian = math.Max(h.iterMedian, v[5])
			h.computeMean += v[2]
			h.loopMean += v[1]
			if h.checksum != "" && h.checksum != f[10] {
				return nil, errors.New("halo: ranks disagree on the checksum")
			}
			h.checksum = f[10]
			h.ranks++
		case f[0] == "mem" && len(f) == 4:
			if err := parseMem(f, h.mem); err != nil {
				return nil, err
			}
		case f[0] == "ctx" && len(f) == 7:
			var v [5]int64
			for i := range v {
				v[i], _ = strconv.ParseInt(f[2+i], 10, 64)
			}
			h.threads = max(h.threads, v[0])
			h.mainInvol += v[2]
			h.procVol += v[3]
		}
	}
	if h.ranks == 0 {
		return nil, errors.New("halo printed no timing line")
	}
	h.computeMean /= float64(h.ranks)
	h.loopMean /= float64(h.ranks)
	return h, nil
}

const haloCallsPerIter = 5.1 // Irecv×2, Isend×2, Waitall, and an Allreduce every 10

// calibrate picks the stencil sweeps per iteration that make halo run at
// c.rate MPI calls per second per rank without the logger.
func calibrate(c *config) (int, error) {
	const w0 = 100
	iters := 1000
	r, err := c.mpirun(base, "halo", strconv.Itoa(iters), strconv.Itoa(w0))
	if err != nil {
		return 0, err
	}
	h, err := parseHalo(r)
	if err != nil {
		return 0, err
	}
	sweep := h.computeMean / float64(iters*w0)
	mpiIter := (h.loopMean - h.computeMean) / float64(iters)
	target := haloCallsPerIter / c.rate
	if sweep <= 0 {
		return 0, errors.New("halo calibration: no compute time measured")
	}
	w := int(math.Round((target - mpiIter) / sweep))
	if w < 0 {
		w = 0
	}
	return w, nil
}

func benchHalo(c *config, rep *Report) error {
	work := c.work
	if work == 0 {
		var err error
		if work, err = calibrate(c); err != nil {
			return err
		}
	}
	iters := int(math.Max(100, math.Round(c.haloSeconds*c.rate/haloCallsPerIter)))
	rep.Config.HaloIters, rep.Config.HaloWork = iters, work
	h := &rep.Halo
	h.Iters, h.Work = iters, work
	var outs [2][]*haloOut
	var last *runResult
	var loads []float64
	n, err := pairs(c.haloReps, c.haloBudget, func(i int, s side) error {
		r, err := c.mpirun(s, "halo", strconv.Itoa(iters), strconv.Itoa(work))
		if err != nil {
			return err
		}
		o, err := parseHalo(r)
		if err != nil {
			return err
		}
		outs[s] = append(outs[s], o)
		loads = append(loads, r.load)
		if s == with {
			if last != nil {
				os.RemoveAll(last.logDir)
			}
			last = r
		}
		return nil
	})
	if err != nil {
		return err
	}
	h.Pairs = n
	h.LoadAvg = median(loads)
	if outs[base][0].checksum != outs[with][0].checksum {
		rep.Warnings = append(rep.Warnings, "halo: the checksum differs with the logger: the runs did different work")
	}
	h.CallsPerRank = outs[base][0].calls
	var rate, addInit, addFin []float64
	for i := range outs[base] {
		a, b := outs[base][i], outs[with][i]
		rate = append(rate, float64(a.calls)/a.loop)
		addInit = append(addInit, b.init-a.init)
		addFin = append(addFin, b.finalize-a.finalize)
	}
	h.CallsPerSec = median(rate)
	for sd := range outs {
		var th, inv, vol []float64
		for _, o := range outs[sd] {
			th = append(th, float64(o.threads))
			inv = append(inv, float64(o.mainInvol)/float64(o.ranks)/o.loop)
			vol = append(vol, float64(o.procVol)/float64(o.ranks)/o.loop)
		}
		h.Threads[sd] = int64(median(th))
		h.MainInvolPerSec[sd] = median(inv)
		h.ProcVolPerSec[sd] = median(vol)
	}
	h.AddedInitS = median(addInit)
	h.AddedFinalizeS = median(addFin)
	h.Loop = slowdown(outs, func(o *haloOut) float64 { return o.loop })
	h.Total = slowdown(outs, func(o *haloOut) float64 { return o.total })
	h.Wall = slowdown(outs, func(o *haloOut) float64 { return o.wall })
	h.Iter = slowdown(outs, func(o *haloOut) float64 { return o.iterMedian })
	h.BaseSpreadPct = (maxf(h.Total.BaseS)/minf(h.Total.BaseS) - 1) * 100
	if !c.noLogger {
		d, err := diskUsage(last.logDir)
		if err != nil {
			return fmt.Errorf("halo logs: %v", err)
		}
		d.Run = fmt.Sprintf("halo %d iters, work %d", iters, work)
		d.Calls = outs[with][len(outs[with])-1].calls * int64(c.np)
		rep.Disk = append(rep.Disk, d)
	}
	os.RemoveAll(last.logDir)
	return nil
}

// expectHalo predicts the halo slowdown from the better-resolved per-call
// costs: the communication-bound halo's own cost per call when it was
// measured (the same pattern, flushes included), else the tight loop's
// amortised cost; plus the logger's added MPI_Init and MPI_Finalize time.
func expectHalo(rep *Report) {
	h := &rep.Halo
	if h.Pairs == 0 {
		return
	}
	perCall, from := 0.0, ""
	for _, cb := range rep.CommBound {
		perCall, from = cb.AddedNsPerCall, "communication-bound halo"
	}
	if from == "" && len(rep.PerCall) > 0 {
		perCall, from = meanAddedNs(rep), "tight loop, flushes included"
	}
	if from == "" {
		return
	}
	fixed := math.Max(0, h.AddedInitS) + math.Max(0, h.AddedFinalizeS)
	h.ExpectedPerCallNs, h.ExpectedFrom = perCall, from
	h.ExpectedPct = (h.CallsPerSec*perCall*1e-9*median(h.Loop.BaseS) + fixed) / median(h.Total.BaseS) * 100
}

// meanAddedNs is the amortised added cost per call (flushes included),
// averaged over the call kinds of the tight loop.
func meanAddedNs(rep *Report) float64 {
	var sum float64
	for _, p := range rep.PerCall {
		sum += p.AddedMeanNs
	}
	return sum / float64(len(rep.PerCall))
}

func slowdown(outs [2][]*haloOut, f func(*haloOut) float64) Slowdown {
	var s Slowdown
	var ratios []float64
	for i := range outs[base] {
		a, b := f(outs[base][i]), f(outs[with][i])
		s.BaseS = append(s.BaseS, a)
		s.LogS = append(s.LogS, b)
		ratios = append(ratios, b/a)
	}
	s.Ratio = median(ratios)
	s.Pct = (s.Ratio - 1) * 100
	lo, hi, level := medianCI(ratios, 0.9)
	s.CILoPct, s.CIHiPct, s.CI = (lo-1)*100, (hi-1)*100, level
	s.RatioOfMedians = median(s.LogS) / median(s.BaseS)
	s.MinRatio = minf(s.LogS) / minf(s.BaseS)
	return s
}

// medianCI is the sign-test confidence interval for the median of x: the
// k-th smallest and k-th largest values, with the largest k whose level
// reaches want (k = 1, the whole range, when none does). It returns the
// interval and its level.
func medianCI(x []float64, want float64) (lo, hi, level float64) {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return math.NaN(), math.NaN(), 0
	}
	// cdf[j] = P(Binomial(n, ½) ≤ j)
	cdf := make([]float64, n+1)
	p := math.Pow(0.5, float64(n))
	c := 1.0
	acc := 0.0
	for j := 0; j <= n; j++ {
		if j > 0 {
			c = c * float64(n-j+1) / float64(j)
		}
		acc += c * p
		cdf[j] = acc
	}
	k := 1
	for kk := 1; 2*kk <= n+1; kk++ {
		if 1-2*cdf[kk-1] >= want {
			k = kk
		}
	}
	return s[k-1], s[n-k], 1 - 2*cdf[k-1]
}

func benchMemory(c *config, rep *Report) error {
	reps := min(c.reps, 3)
	if c.quick {
		reps = 1
	}
	type job struct {
		prog, run string
		args      []string
	}
	hs, hl := c.memHaloIters, 10*c.memHaloIters
	ts, tl := c.memTightBatches, 10*c.memTightBatches
	rep.Config.MemHaloIters = []int{hs, hl}
	rep.Config.MemTightBatches = []int{ts, tl}
	jobs := []job{
		{"halo", "short", []string{strconv.Itoa(hs), "0"}},
		{"halo", "long", []string{strconv.Itoa(hl), "0"}},
		{"tightloop", "short", []string{strconv.Itoa(c.tightN), strconv.Itoa(ts)}},
		{"tightloop", "long", []string{strconv.Itoa(c.tightN), strconv.Itoa(tl)}},
	}
	for _, j := range jobs {
		var hwm [2][]int64
		var added []float64
		var calls int64
		var keepDisk *runResult
		var houts [2][]*haloOut
		_, err := pairs(reps, 0, func(i int, s side) error {
			r, err := c.mpirun(s, j.prog, j.args...)
			if err != nil {
				return err
			}
			var mem map[int][2]int64
			if j.prog == "halo" {
				o, err := parseHalo(r)
				if err != nil {
					return err
				}
				mem, calls = o.mem, o.calls
				houts[s] = append(houts[s], o)
			} else {
				_, cl, m, err := parseTight(r)
				if err != nil {
					return err
				}
				mem, calls = m, cl[0]
			}
			if len(mem) != c.np {
				return fmt.Errorf("%s: %d of %d ranks reported their memory", j.prog, len(mem), c.np)
			}
			var mx int64
			for _, m := range mem {
				mx = max(mx, m[1]) // after MPI_Finalize: includes the last flush
			}
			hwm[s] = append(hwm[s], mx)
			if s == with && j.prog == "halo" && j.run == "long" && i == 0 && !c.noLogger {
				keepDisk = r
			} else {
				os.RemoveAll(r.logDir)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for i := range hwm[base] {
			added = append(added, float64(hwm[with][i]-hwm[base][i])/1024)
		}
		rep.Memory = append(rep.Memory, Memory{Program: j.prog, Run: j.run, Calls: calls,
			BaseKiB: medianInt(hwm[base]), LogKiB: medianInt(hwm[with]), AddedMiB: median(added)})
		if j.prog == "halo" && len(houts[base]) > 0 {
			// The same runs measure the slowdown of a communication-bound
			// loop: a large, well-resolved effect to check the per-call
			// figures against.
			var rate []float64
			for _, o := range houts[base] {
				rate = append(rate, float64(o.calls)/o.loop)
			}
			cb := CommBound{Run: j.run, Iters: j.args[0], CallsPerSec: median(rate),
				Loop: slowdown(houts, func(o *haloOut) float64 { return o.loop }),
				Iter: slowdown(houts, func(o *haloOut) float64 { return o.iterMedian })}
			if len(rep.PerCall) > 0 {
				cb.ExpectedPct = cb.CallsPerSec * meanAddedNs(rep) * 1e-9 * 100
			}
			var per []float64
			for i := range houts[base] {
				a, b := houts[base][i], houts[with][i]
				per = append(per, (b.loop-a.loop)/float64(a.calls)*1e9)
			}
			cb.AddedNsPerCall = median(per)
			rep.CommBound = append(rep.CommBound, cb)
		}
		if keepDisk != nil {
			d, err := diskUsage(keepDisk.logDir)
			if err != nil {
				return fmt.Errorf("halo logs: %v", err)
			}
			d.Run = fmt.Sprintf("halo %s, %s iters, no compute", j.run, j.args[0])
			d.Calls = calls * int64(c.np)
			rep.Disk = append(rep.Disk, d)
			os.RemoveAll(keepDisk.logDir)
		}
	}
	return nil
}

// diskUsage sums the *.cplog files of a log directory and counts their
// records with the streaming reader (memory stays bounded however long the
// logs are).
func diskUsage(dir string) (Disk, error) {
	var d Disk
	files, err := filepath.Glob(filepath.Join(dir, "*.cplog"))
	if err != nil {
		return d, err
	}
	if len(files) == 0 {
		return d, fmt.Errorf("no *.cplog files in %s", dir)
	}
	d.Complete = true
	var buf []trace.Record
	for _, fn := range files {
		st, err := os.Stat(fn)
		if err != nil {
			return d, err
		}
		d.Files++
		d.Bytes += st.Size()
		f, err := os.Open(fn)
		if err != nil {
			return d, err
		}
		br := bufio.NewReaderSize(f, 1<<20)
		var pre [16]byte
		if _, err := io.ReadFull(br, pre[:]); err == nil {
			d.HeaderBytes += 16 + int64(binary.LittleEndian.Uint32(pre[12:])) + 4
		}
		f.Seek(0, io.SeekStart)
		br.Reset(f)
		rd, err := trace.NewReader(br, fn)
		if err != nil {
			f.Close()
			return d, err
		}
		for {
			buf, err = rd.Batch()
			for i := range buf {
				if buf[i].Op.IsSub() {
					d.SubRecords++
				} else {
					d.TimedRecords++
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return d, err
			}
		}
		if rd.Trailer().Status != trace.EndFinalized {
			d.Complete = false
		}
		f.Close()
	}
	if d.TimedRecords > 0 {
		d.BytesPerCall = float64(d.Bytes) / float64(d.TimedRecords)
		d.RecordBytesPerCall = float64(d.Bytes-d.HeaderBytes) / float64(d.TimedRecords)
	}
	return d, nil
}

// judge compares the results with the targets.
func judge(rep *Report) {
	add := func(t Target) {
		t.Verdict = "pass"
		if !t.Pass {
			t.Verdict = "miss"
		}
		rep.Targets = append(rep.Targets, t)
	}
	if m := rep.Micro; m != nil && len(m.Sides) > 1 {
		limits := map[string]float64{"self-1": 35, "self-2": 50, "latency": 40, "allreduce": 60}
		for _, c := range m.Cases {
			if lim, ok := limits[c.Name]; ok {
				add(Target{Name: "micro " + c.Name + ": added ns per call (wall), flushes included", Value: c.AddedNs[1],
					Limit: lim, Unit: "ns", Pass: c.AddedNs[1] <= lim, Note: fmt.Sprintf("base %.1f ns", c.BaseNs)})
				add(Target{Name: "micro " + c.Name + ": added CPU ns per call", Value: c.AddedCPUNs[1],
					Limit: lim, Unit: "ns", Pass: c.AddedCPUNs[1] <= lim, Note: fmt.Sprintf("base %.1f ns", c.BaseCPUNs)})
			}
			var mem []float64
			for i := range c.VmHWMKiB[1] {
				if i < len(c.VmHWMKiB[0]) {
					mem = append(mem, float64(c.VmHWMKiB[1][i]-c.VmHWMKiB[0][i])/1024)
				}
			}
			if c.Name == "self-2" {
				v := median(mem)
				add(Target{Name: "micro self-2: peak RSS added (rank 0)", Value: v, Limit: targetMemMiB, Unit: "MiB", Pass: v <= targetMemMiB})
			}
		}
		if m.ThreadRatio[1] != 0 { // measured: both threads cases ran
			add(Target{Name: "micro: 4-thread / 1-thread added CPU per call", Value: m.ThreadRatio[1], Limit: 2, Unit: "x",
				Pass: m.ThreadRatio[1] <= 2})
		}
		for _, d := range m.HaloDisk {
			add(Target{Name: "on disk, " + d.Run, Value: d.BytesPerCall, Limit: 12, Unit: "B/call", Pass: d.BytesPerCall <= 12,
				Note: fmt.Sprintf("%.2f B/call without the headers", d.RecordBytesPerCall)})
		}
	}
	if cp := rep.CallPaths; cp != nil {
		add(Target{Name: fmt.Sprintf("call paths: cxxsolver without frame pointers, CPATH_CALLDEPTH=%d / 0", cp.CallDepth), Value: cp.Ratio,
			Limit: callPathsLimit, Unit: "x", Pass: cp.Ratio <= callPathsLimit,
			Note: fmt.Sprintf("%+.1f ns per call; paths of up to %d frames", cp.AddedNs, cp.Frames)})
	}
	if len(rep.PerCall) > 0 {
		worst := rep.PerCall[0]
		for _, p := range rep.PerCall {
			if p.AddedNs > worst.AddedNs {
				worst = p
			}
		}
		add(Target{Name: "added cost per call (median, worst kind)", Value: worst.AddedNs,
			Limit: targetPerCallNs, Unit: "ns", Pass: worst.AddedNs <= targetPerCallNs,
			Note: fmt.Sprintf("%s; amortised with flushes %.1f ns", worst.Kind, worst.AddedMeanNs)})
	}
	if h := rep.Halo; h.Pairs > 0 {
		note := fmt.Sprintf("%.0f%% CI [%+.1f, %+.1f]; steady state %+.2f%%; ", h.Total.CI*100, h.Total.CILoPct, h.Total.CIHiPct, h.Iter.Pct)
		if h.ExpectedFrom != "" {
			note += fmt.Sprintf("expected %+.2f%%; ", h.ExpectedPct)
		}
		note += fmt.Sprintf("baseline noise %.0f%%", h.BaseSpreadPct)
		t := Target{Name: "halo whole-program slowdown", Value: h.Total.Pct,
			Limit: targetSlowdownPct, Unit: "%", Pass: h.Total.Pct <= targetSlowdownPct, Note: note}
		add(t)
		// The point estimate alone says little when the interval around it
		// straddles the limit: say so.
		if h.Total.CILoPct <= targetSlowdownPct && h.Total.CIHiPct > targetSlowdownPct {
			rep.Targets[len(rep.Targets)-1].Verdict = "noisy"
		}
	}
	if len(rep.Memory) > 0 {
		var worstMem, growth float64
		var worstRun string
		short := map[string]float64{}
		for _, m := range rep.Memory {
			if m.AddedMiB >= worstMem || worstRun == "" {
				worstMem, worstRun = m.AddedMiB, m.Program+" "+m.Run
			}
			if m.Run == "short" {
				short[m.Program] = m.AddedMiB
			} else if g, ok := short[m.Program]; ok {
				growth = math.Max(growth, m.AddedMiB-g)
			}
		}
		add(Target{Name: "logger memory per rank (peak RSS added)", Value: worstMem,
			Limit: targetMemMiB, Unit: "MiB", Pass: worstMem <= targetMemMiB,
			Note: fmt.Sprintf("%s; 10× longer run adds %+.2f MiB", worstRun, growth)})
	}
	for _, d := range rep.Disk {
		add(Target{Name: "on-disk bytes per call", Value: d.BytesPerCall,
			Limit: targetBytesPerCal, Unit: "B", Pass: d.BytesPerCall <= targetBytesPerCal, Note: d.Run})
	}
}

// ---------------------------------------------------------------- output

func printReport(w io.Writer, r *Report) {
	fmt.Fprintf(w, "cpath logger benchmark, %s — %s, %d CPUs, %d ranks, %d reps%s, %.0f s\n", r.MPI, r.Host, r.CPUs, r.Ranks, r.Reps,
		map[bool]string{true: " (quick)", false: ""}[r.Quick], r.Seconds)
	fmt.Fprintf(w, "library: %s", r.Lib)
	if len(r.LoggerEnv) > 0 {
		fmt.Fprintf(w, " with %s", strings.Join(r.LoggerEnv, " "))
	}
	fmt.Fprintf(w, "\n\n")

	if r.Micro != nil {
		printMicro(w, r.Micro)
	}
	if r.CallPaths != nil {
		printCallPaths(w, r.CallPaths)
	}
	if len(r.PerCall) > 0 {
		fmt.Fprintf(w, "Per-call cost, tight loop (ns per call; median over batches; added = logger − base)\n")
		fmt.Fprintf(w, "  %-9s %8s %8s %8s %7s   %9s %9s %10s\n", "call", "base", "logger", "added", "ratio", "mean base", "mean log", "mean added")
		for _, p := range r.PerCall {
			fmt.Fprintf(w, "  %-9s %8.1f %8.1f %8.1f %6.2fx   %9.1f %9.1f %10.1f\n", p.Kind, p.BaseNs, p.LogNs, p.AddedNs, p.Ratio,
				p.BaseMeanNs, p.LogMeanNs, p.AddedMeanNs)
		}
		fmt.Fprintf(w, "  reference (no MPI): clock_gettime %.1f ns, rdtsc %.1f ns, 2×rdtsc + 64-byte record store %.1f ns, empty loop %.2f ns\n\n",
			r.Reference.ClockGettimeNs, r.Reference.RdtscNs, r.Reference.RecordNs, r.Reference.EmptyNs)
	}

	if h := r.Halo; h.Pairs > 0 {
		fmt.Fprintf(w, "Whole-program slowdown, halo exchange (%d iters, work %d, %d calls/rank, %.0f calls/s/rank; %d pairs, load avg %.1f)\n",
			h.Iters, h.Work, h.CallsPerRank, h.CallsPerSec, h.Pairs, h.LoadAvg)
		fmt.Fprintf(w, "  %-26s %8s %8s %8s %8s %17s %8s\n", "time (median over reps)", "base", "logger", "ratio", "slowdown", "CI", "min/min")
		for _, x := range []struct {
			name string
			s    Slowdown
		}{{"main→end of MPI_Finalize", h.Total}, {"loop", h.Loop}, {"mpirun wall", h.Wall}, {"one iteration (median)", h.Iter}} {
			scale, unit := 1.0, "s"
			if x.s.BaseS[0] < 0.01 {
				scale, unit = 1e6, "µs"
			}
			fmt.Fprintf(w, "  %-26s %6.3f%-2s %6.3f%-2s %7.4fx %+7.2f%% %3.0f%% [%+.1f,%+.1f] %7.4fx\n", x.name,
				median(x.s.BaseS)*scale, unit, median(x.s.LogS)*scale, unit,
				x.s.Ratio, x.s.Pct, x.s.CI*100, x.s.CILoPct, x.s.CIHiPct, x.s.MinRatio)
		}
		fmt.Fprintf(w, "  baseline noise: total time varied by %.0f%% between repetitions\n", h.BaseSpreadPct)
		if h.ExpectedFrom != "" {
			fmt.Fprintf(w, "  expected: %+.2f%% (%.0f ns per call, from the %s, and the Init/Finalize time)\n",
				h.ExpectedPct, h.ExpectedPerCallNs, h.ExpectedFrom)
		}
		fmt.Fprintf(w, "  logger time in MPI_Init %+.1f ms, in MPI_Finalize %+.1f ms\n", h.AddedInitS*1e3, h.AddedFinalizeS*1e3)
		fmt.Fprintf(w, "  threads per rank %d → %d; context switches per rank per s in the loop: main thread preempted %.0f → %.0f, process voluntary %.0f → %.0f\n\n",
			h.Threads[base], h.Threads[with], h.MainInvolPerSec[base], h.MainInvolPerSec[with], h.ProcVolPerSec[base], h.ProcVolPerSec[with])
	}

	if len(r.Memory) > 0 {
		fmt.Fprintf(w, "Memory per rank (peak RSS, VmHWM after MPI_Finalize, max over ranks)\n")
		fmt.Fprintf(w, "  %-10s %-6s %12s %10s %10s %10s\n", "program", "run", "calls/rank", "base MiB", "logger MiB", "added MiB")
		for _, m := range r.Memory {
			fmt.Fprintf(w, "  %-10s %-6s %12d %10.1f %10.1f %10.2f\n", m.Program, m.Run, m.Calls,
				float64(m.BaseKiB)/1024, float64(m.LogKiB)/1024, m.AddedMiB)
		}
		fmt.Fprintln(w)
	}

	if len(r.CommBound) > 0 {
		fmt.Fprintf(w, "Communication-bound halo (no computation; the memory runs)\n")
		fmt.Fprintf(w, "  %-6s %9s %12s %10s %21s %10s %14s %10s\n", "run", "iters", "calls/s/rank", "loop", "CI", "iteration",
			"added ns/call", "expected")
		for _, x := range r.CommBound {
			ci := "n/a (1 pair)"
			if x.Loop.CI > 0 {
				ci = fmt.Sprintf("%3.0f%% [%+.1f,%+.1f]", x.Loop.CI*100, x.Loop.CILoPct, x.Loop.CIHiPct)
			}
			fmt.Fprintf(w, "  %-6s %9s %12.0f %+9.2f%% %21s %+9.2f%% %14.1f %+9.2f%%\n", x.Run, x.Iters, x.CallsPerSec,
				x.Loop.Pct, ci, x.Iter.Pct, x.AddedNsPerCall, x.ExpectedPct)
		}
		fmt.Fprintf(w, "  expected: calls/s × the tight loop's mean added cost per call\n")
		fmt.Fprintln(w)
	}

	if len(r.Disk) > 0 {
		fmt.Fprintf(w, "On-disk size (all ranks)\n")
		fmt.Fprintf(w, "  %-38s %12s %10s %9s %12s\n", "run", "bytes", "calls", "B/call", "B/call-hdr")
		for _, d := range r.Disk {
			fmt.Fprintf(w, "  %-38s %12d %10d %9.2f %12.2f\n", d.Run, d.Bytes, d.TimedRecords, d.BytesPerCall, d.RecordBytesPerCall)
		}
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "Targets\n")
	for _, t := range r.Targets {
		fmt.Fprintf(w, "  %-5s %-42s %8.2f %-3s (limit %g %s)  %s\n", strings.ToUpper(t.Verdict), t.Name, t.Value, t.Unit, t.Limit, t.Unit, t.Note)
	}
	for _, s := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
}

// ---------------------------------------------------------------- stats

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func medianInt(x []int64) int64 {
	f := make([]float64, len(x))
	for i, v := range x {
		f[i] = float64(v)
	}
	return int64(math.Round(median(f)))
}

func mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func minf(x []float64) float64 {
	m := math.Inf(1)
	for _, v := range x {
		m = math.Min(m, v)
	}
	return m
}

func maxf(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	return m
}
