// Command analyzebench measures the analyzer end to end (reading and
// decoding the logs, matching, the graph, the critical path, the imbalance
// metrics and the JSON report) on synthetic logs from bench/gen: calls
// analysed per second of wall time and peak memory per call.
//
//	go run ./bench/analyzebench -ranks 16 -calls 250000 -pattern halo
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/imbalance"
	"github.com/cpath/cpath/report"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("analyzebench: ")
	ranks := flag.Int("ranks", 16, "ranks to generate")
	calls := flag.Int("calls", 250_000, "calls per rank")
	pattern := flag.String("pattern", "halo", "halo, collectives, random or imbalanced")
	algo := flag.String("algo", "dag", "dag, dijkstra or delta")
	dir := flag.String("dir", "", "analyse this log directory instead of generating one")
	procs := flag.Int("procs", 1, "GOMAXPROCS for the analysis (the target is per core)")
	cpuprof := flag.String("cpuprofile", "", "write a CPU profile of the analysis to `FILE`")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "analyzebench-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		t := time.Now()
		if err := gen.Write(gen.Spec{Dir: d, Ranks: *ranks, CallsPerRank: *calls, Pattern: gen.Pattern(*pattern), Seed: 1}); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("generated %d ranks × %d calls (%s) in %v\n", *ranks, *calls, *pattern, time.Since(t).Round(time.Millisecond))
		*dir = d
	}
	runtime.GOMAXPROCS(*procs)
	runtime.GC()
	debug.FreeOSMemory()
	base := rss("VmRSS")
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	cpu0 := cpuTime()
	t0 := time.Now()
	run, err := graph.Load(*dir)
	if err != nil {
		log.Fatal(err)
	}
	t1 := time.Now()
	g, err := graph.Build(run)
	if err != nil {
		log.Fatal(err)
	}
	run = nil
	t2 := time.Now()
	cg := cpath.FromPAG(g)
	var res *cpath.Result
	switch *algo {
	case "dag":
		res, err = cpath.DAG(cg, g.Target)
	case "dijkstra":
		res, err = cpath.Dijkstra(cg, g.Target)
	case "delta":
		res, err = cpath.DeltaStepping(cg, g.Target, cpath.DefaultDelta(cg))
	default:
		log.Fatalf("unknown -algo %q", *algo)
	}
	if err != nil {
		log.Fatal(err)
	}
	// Only the path is reported: let the distances go, and collect them and
	// the solver's scratch, so that the report reuses their memory.
	res.Dist, res.Succ = nil, nil
	runtime.GC()
	t3 := time.Now()
	rep := report.Build(&report.Input{Dir: *dir, PAG: g, Path: res.Path, Algo: *algo, Imbalance: imbalance.Analyze(g), GraphTime: t2.Sub(t0)})
	bw := bufio.NewWriter(io.Discard)
	if err := json.NewEncoder(bw).Encode(rep); err != nil {
		log.Fatal(err)
	}
	t4 := time.Now()
	cpu := cpuTime() - cpu0
	peak := rss("VmHWM")
	n := g.NumCalls()
	total := t4.Sub(t0)
	fmt.Printf("calls %d, algo %s, GOMAXPROCS %d\n", n, *algo, *procs)
	fmt.Printf("headers %v, decode+match+graph %v, path %v, metrics+report %v, total %v\n",
		t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond), t3.Sub(t2).Round(time.Millisecond),
		t4.Sub(t3).Round(time.Millisecond), total.Round(time.Millisecond))
	fmt.Printf("CPU time %v (%.2f M calls per CPU second)\n", cpu.Round(time.Millisecond), float64(n)/cpu.Seconds()/1e6)
	fmt.Printf("%.2f M calls/s; peak RSS %.1f MiB above the start (%.0f bytes/call)\n",
		float64(n)/total.Seconds()/1e6, float64(peak-base)/(1<<20), float64(peak-base)/float64(n))
	fmt.Printf("critical path %d ns over %d vertices; run time %d ns\n", res.Path.Length, len(res.Path.Vertices), g.T1-g.T0)
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rss reads a field of /proc/self/status in bytes.
func rss(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field+":") {
			f := strings.Fields(line)
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v * 1024
		}
	}
	return 0
}
