// Command mpibench measures the analyzer as an MPI job: every algorithm at
// several numbers of analyzer ranks on one log directory (generated with
// bench/gen unless -dir is given), runs interleaved so that the machine's
// noise falls on all alike, medians reported. For each run it prints the
// wall time, calls per second, the bytes the algorithm and the graph's
// construction shipped between ranks (from the report), the largest
// resident memory of any rank and the CPU time (user and system) summed
// over the ranks (GNU time's %M, %U and %S per rank). With -compare, other
// cpath binaries (an older commit's) run beside this tree's, interleaved
// too, so that each figure has its reference from the same run.
//
//	go run ./bench/mpibench -ranks 16 -calls 1000000 -np 1,2
//	go run ./bench/mpibench -dir LOGS -np 1,2,4 -compare base=/tmp/cpath.base
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/internal/openmpi"
	"github.com/cpath/cpath/report"
)

func main() {
	dir := flag.String("dir", "", "analyse this log directory instead of generating one")
	ranks := flag.Int("ranks", 16, "ranks to generate")
	calls := flag.Int("calls", 1_000_000, "calls per rank to generate")
	pattern := flag.String("pattern", "halo", "halo, collectives, random or imbalanced")
	nps := flag.String("np", "1,2", "analyzer ranks, comma-separated")
	algos := flag.String("algos", "dag,dag+json,dijkstra,delta,split,topo,topo-shuffle,topo-shuffle+compress", "algorithms (split:MODE for a split mode, +compress for topo-shuffle --compress, +json to write the JSON report too, +all for every output: JSON, CSV, matrix, timeline, POP and what-if, +bare for the text report alone without POP and what-if, +frames for --frames, +exact for topo's --compare-exact; in any order)")
	reps := flag.Int("reps", 3, "repetitions of each run (median reported)")
	coresPerRank := flag.Int("cores-per-rank", 0, "cores each analyzer rank's Go runtime may use (GOMAXPROCS, passed by mpirun -x); 0: Go's default, every core the rank may run on. With N cores per rank, P ranks are compared fairly on a machine of P×N cores or more")
	compare := flag.String("compare", "", "`LABEL=BIN,...`: cpath binaries (built with the mpi tag) to run beside this tree's, each algorithm and np interleaved with it")
	independent := flag.Bool("independent-clocks", false, "generate logs whose ranks' timelines run on their own (messages often arrive before they are sent: the clock correction's worst case) instead of causal ones, as the logger's synchronised clocks show a run")
	flag.Parse()
	if *coresPerRank < 0 {
		fmt.Fprintln(os.Stderr, "mpibench: -cores-per-rank: want 0 or more")
		os.Exit(2)
	}
	// --bind-to none: Open MPI binds each of up to 2 ranks to one core,
	// which would keep P = 1 from the goroutines that read the logs on
	// every core, as it has when run without mpirun.
	mpirunArgs = []string{"--allow-run-as-root", "--oversubscribe", "--bind-to", "none"}
	if *coresPerRank > 0 {
		mpirunArgs = append(mpirunArgs, "-x", fmt.Sprintf("GOMAXPROCS=%d", *coresPerRank))
	}
	if err := run(*dir, *ranks, *calls, *pattern, !*independent, *nps, *algos, *reps, *compare); err != nil {
		fmt.Fprintln(os.Stderr, "mpibench:", err)
		os.Exit(1)
	}
}

type result struct {
	wall      []time.Duration
	cpu       []time.Duration // user and system, summed over the ranks
	rssKiB    int64
	algoBytes int64
	rawBytes  int64
	build     int64
	rounds    int64
	relax     float64 // relaxations per edge
}

func run(dir string, ranks, calls int, pattern string, synchronised bool, nps, algos string, reps int, compare string) error {
	tmp, err := os.MkdirTemp("", "mpibench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if dir == "" {
		dir = filepath.Join(tmp, "logs")
		fmt.Fprintf(os.Stderr, "generating %d ranks × %d calls (%s, synchronised %v)...\n", ranks, calls, pattern, synchronised)
		if err := gen.Write(gen.Spec{Dir: dir, Ranks: ranks, CallsPerRank: calls, Pattern: gen.Pattern(pattern), Seed: 1, Synchronised: synchronised}); err != nil {
			return err
		}
	}
	bin := filepath.Join(tmp, "cpath")
	if out, err := exec.Command("go", "build", "-tags", "mpi", "-o", bin, "./cmd/cpath").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	bins := []labelled{{"", bin}}
	if compare != "" {
		for _, c := range strings.Split(compare, ",") {
			l, b, ok := strings.Cut(c, "=")
			if !ok || l == "" || b == "" {
				return fmt.Errorf("-compare %q: want LABEL=BIN", c)
			}
			if _, err := os.Stat(b); err != nil {
				return fmt.Errorf("-compare %s: %v", c, err)
			}
			bins = append(bins, labelled{l, b})
		}
	}
	var ps []int
	for _, s := range strings.Split(nps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-np %q: want positive numbers", nps)
		}
		ps = append(ps, n)
	}
	as := strings.Split(algos, ",")
	res := map[string]*result{}
	key := func(a string, np int) string { return fmt.Sprintf("%s/%d", a, np) }
	totalCalls := 0
	startup := map[int][]time.Duration{}
	for rep := 0; rep < reps; rep++ {
		for _, np := range ps {
			// mpirun's own start and stop, to subtract.
			t0 := time.Now()
			if out, err := exec.Command(openmpi.Tool("mpirun"), append(slices.Clone(mpirunArgs), "-np", fmt.Sprint(np), bin, "version")...).CombinedOutput(); err != nil {
				return fmt.Errorf("mpirun cpath version: %v\n%s", err, out)
			}
			startup[np] = append(startup[np], time.Since(t0))
		}
		for _, a := range as {
			for _, np := range ps {
				for _, b := range bins {
					k := key(b.name(a), np)
					r := res[k]
					if r == nil {
						r = &result{}
						res[k] = r
					}
					rep, wall, rss, cpu, err := analyze(b.bin, dir, a, np)
					if err != nil {
						return err
					}
					totalCalls = rep.Run.Calls
					r.wall = append(r.wall, wall)
					r.cpu = append(r.cpu, cpu)
					r.rssKiB = max(r.rssKiB, rss)
					if an := rep.CriticalPath.Analyzer; an != nil {
						r.algoBytes, r.rawBytes, r.build, r.rounds, r.relax = an.BytesSent, an.RawBytes, an.BuildBytes, an.Rounds, an.RelaxationsPerEdge
					}
				}
			}
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%d calls; mpirun start/stop subtracted (median %v at np=%d); mpirun %s\n", totalCalls, median(startup[ps[0]]).Round(time.Millisecond), ps[0], strings.Join(mpirunArgs, " "))
	fmt.Fprintln(tw, "algo\tnp\tseconds\tMcalls/s\tspeed-up\tCPU s\tCPU ns/call\trounds\trelax/edge\talgo bytes\traw bytes\tbuild bytes\tmax RSS MiB\tB/call\tRSS vs np1\t")
	for _, a := range as {
		for _, b := range bins {
			var base float64
			var baseRSS int64
			for _, np := range ps {
				r := res[key(b.name(a), np)]
				if r == nil {
					continue
				}
				s := (median(r.wall) - median(startup[np])).Seconds()
				speed := float64(totalCalls) / s / 1e6
				if base == 0 {
					base, baseRSS = speed, r.rssKiB
				}
				cpu := median(r.cpu).Seconds()
				fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.2fx\t%.2f\t%.0f\t%d\t%.2f\t%d\t%d\t%d\t%.0f\t%.0f\t%.2f\t\n", b.name(a), np, s, speed, speed/base,
					cpu, cpu*1e9/float64(totalCalls), r.rounds, r.relax,
					r.algoBytes, r.rawBytes, r.build, float64(r.rssKiB)/1024, float64(r.rssKiB)*1024/float64(totalCalls), float64(r.rssKiB)/float64(baseRSS))
			}
		}
	}
	return tw.Flush()
}

// mpirunArgs are the options every mpirun of the benchmark gets (main
// sets them from the flags).
var mpirunArgs []string

var rssRE = regexp.MustCompile(`maxrss=(\d+) cpu=([0-9.]+)\+([0-9.]+)`)

// labelled is a cpath binary and the label its rows get ("" for this
// tree's).
type labelled struct{ label, bin string }

// name is algorithm a's row name for the binary.
func (b labelled) name(a string) string {
	if b.label == "" {
		return a
	}
	return b.label + ":" + a
}

// allOutputs are the analysis flags +all adds besides the output files.
var allOutputs = []string{}

// analyze runs one analysis and returns its report, wall time, the
// largest resident set of its ranks and their CPU time summed.
func analyze(bin, dir, algo string, np int) (*report.Report, time.Duration, int64, time.Duration, error) {
	// The text report; +json: the JSON one too (every segment of the
	// path, millions here), to a file; +all: every output there is (JSON,
	// CSV tables, matrix heatmap, timeline, what-if), to files.
	args := append(slices.Clone(mpirunArgs), "-np", fmt.Sprint(np), "/usr/bin/time", "-f", "maxrss=%M cpu=%U+%S", bin, "analyze")
	a, mods, _ := strings.Cut(algo, "+")
	has := func(m string) bool { return slices.Contains(strings.Split(mods, "+"), m) }
	withJSON, withAll, compress := has("json"), has("all"), has("compress")
	if has("frames") {
		args = append(args, "--frames")
	}
	if has("exact") {
		args = append(args, "--compare-exact") // topo and topo-shuffle: the graph and the exact path too
	}
	if has("bare") {
		args = append(args, "--what-if", "off") // the text report alone: no POP factors or what-if replay
	}
	if withJSON || withAll {
		tmp, err := os.MkdirTemp("", "mpibench-")
		if err != nil {
			return nil, 0, 0, 0, err
		}
		defer os.RemoveAll(tmp)
		args = append(args, "--json", filepath.Join(tmp, "report.json"))
		if withAll {
			args = append(args, "--csv", filepath.Join(tmp, "csv"), "--matrix", filepath.Join(tmp, "matrix.png"),
				"--timeline", filepath.Join(tmp, "timeline.json"))
			args = append(args, allOutputs...)
		}
	}
	if name, mode, ok := strings.Cut(a, ":"); ok {
		args = append(args, "--algo="+name, "--split-mode="+mode)
	} else {
		args = append(args, "--algo="+a)
	}
	if compress {
		args = append(args, "--compress")
	}
	args = append(args, dir)
	cmd := exec.Command(openmpi.Tool("mpirun"), args...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		return nil, 0, 0, 0, fmt.Errorf("%s np=%d: %v\n%s", algo, np, err, errs.String())
	}
	rep, err := parseText(out.String())
	if err != nil {
		return nil, 0, 0, 0, fmt.Errorf("%s np=%d: %v", algo, np, err)
	}
	rss := int64(0)
	var cpu time.Duration
	for _, m := range rssRE.FindAllStringSubmatch(errs.String(), -1) {
		v, _ := strconv.ParseInt(m[1], 10, 64)
		rss = max(rss, v)
		u, _ := strconv.ParseFloat(m[2], 64)
		sy, _ := strconv.ParseFloat(m[3], 64)
		cpu += time.Duration((u + sy) * 1e9)
	}
	return rep, wall, rss, cpu, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

var (
	runRE      = regexp.MustCompile(`(?m)^run .*: (\d+) ranks, (\d+) MPI calls`)
	analyzerRE = regexp.MustCompile(`(?m)^analyzer: (\d+) ranks, (\d+) exchange rounds, (\d+) bytes shipped by the algorithm(?: \((\d+) before compression\))?.*; (\d+) bytes to (?:build the graph|read the calls)(?:; ([0-9.]+) relaxations per edge)?`)
)

// parseText reads what the benchmark needs from a text report.
func parseText(out string) (*report.Report, error) {
	m := runRE.FindStringSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("no run line in the report:\n%.500s", out)
	}
	rep := &report.Report{}
	rep.Run.Calls, _ = strconv.Atoi(m[2])
	if a := analyzerRE.FindStringSubmatch(out); a != nil {
		n := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
		rep.CriticalPath.Analyzer = &report.AnalyzerStats{Ranks: int(n(a[1])), Rounds: n(a[2]), BytesSent: n(a[3]), RawBytes: n(a[4]), BuildBytes: n(a[5])}
		rep.CriticalPath.Analyzer.RelaxationsPerEdge, _ = strconv.ParseFloat(a[6], 64)
	}
	return rep, nil
}
