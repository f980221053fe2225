//go:build mpi

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

// designMissed ends a design check the machine did not run as designed:
// a failure, or under CPATH_DESIGN_LENIENT=1 a skip (mpitest.DesignMissed).
func designMissed(t *testing.T, format string, args ...any) {
	t.Helper()
	mpitest.DesignMissed(t, format, args...)
}

// cpathBin returns the cpath command under test (internal/mpitest).
func cpathBin(t *testing.T) string { return mpitest.CPathBin(t) }

// analyzeTimeout bounds one analyzer run on these small logs.
const analyzeTimeout = 60 * time.Second

// analyzer is one way to run cpath analyze: an algorithm, as one process
// (np 0) or as an MPI job of np ranks.
type analyzer struct {
	algo string
	np   int
}

func (a analyzer) String() string {
	if a.np == 0 {
		return a.algo
	}
	return fmt.Sprintf("%s-mpirun-np%d", a.algo, a.np)
}

// analyze is analyzeRaw for callers that need only the decoded report.
func analyze(t *testing.T, bin, logDir string, a analyzer) *report.Report {
	t.Helper()
	_, rep := analyzeRaw(t, bin, logDir, a)
	return rep
}

// analyzeRaw runs `cpath analyze --algo ALGO --json - [extra] logDir` (under
// mpirun if a.np > 0) and returns the JSON as printed and decoded.
func analyzeRaw(t *testing.T, bin, logDir string, a analyzer, extra ...string) ([]byte, *report.Report) {
	t.Helper()
	return runJSON(t, bin, a.np, append(append([]string{"analyze", "--algo", a.algo, "--json", "-", "--json-segments"}, extra...), logDir))
}

// runJSON runs cpath with args, as one process (np 0 or 1) or under
// mpirun -np np, and returns the JSON report it prints, as printed and
// decoded.
func runJSON(t *testing.T, bin string, np int, args []string) ([]byte, *report.Report) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), analyzeTimeout)
	defer cancel()
	name := bin
	if np > 1 {
		name = mpitest.OpenMPI.Mpirun(t)
		args = append([]string{"--oversubscribe", "--allow-run-as-root", "-np", fmt.Sprint(np), bin}, args...)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: no exit after %v (hang)\nstderr: %s", name, strings.Join(args, " "), analyzeTimeout, stderr.String())
	}
	if err != nil {
		t.Fatalf("%s %s: %v\nstderr: %s\nstdout: %.2000s", name, strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	var rep report.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%s %s: the output is not one JSON report: %v\nstdout: %.2000s", name, strings.Join(args, " "), err, stdout.String())
	}
	return stdout.Bytes(), &rep
}

// call is one timed record of a rank's log on the global timeline, with
// what the oracle needs to match it.
type call struct {
	Rank, Idx  int // Idx: index among the rank's timed records
	Op         trace.Op
	Start, End int64    // global ns
	Comm       string   // communicator name ("W0.0"), "" for none
	Peer, Tag  int32    // peer as a world rank
	Seq        uint32   // collective sequence number on Comm
	Req        uint32   // the request the call created (FlagNewReq)
	Done       []uint32 // the requests it completed (ReqDone sub-records)
}

func (c call) dur() time.Duration { return time.Duration(c.End - c.Start) }

// timelines maps every rank's timed records to the global clock with the
// rank's own clock parameters, attaching the requests each completion call
// completed.
func timelines(logs []*trace.Log) [][]call {
	out := make([][]call, len(logs))
	for r, l := range logs {
		clk := &l.Header.Clock
		for _, rec := range l.Records {
			if rec.Op.IsSub() {
				if n := len(out[r]); n > 0 && rec.Op == trace.OpReqDone {
					out[r][n-1].Done = append(out[r][n-1].Done, rec.Req)
				}
				continue
			}
			c := call{Rank: r, Idx: len(out[r]), Op: rec.Op, Start: clk.Global(rec.Start), End: clk.Global(rec.End),
				Peer: rec.Peer, Tag: rec.Tag, Seq: rec.Seq}
			if rec.Flags&trace.FlagNewReq != 0 {
				c.Req = rec.Req
			}
			if rec.Comm != trace.CommNone && int(rec.Comm) < len(l.Comms) {
				c.Comm = l.Comms[rec.Comm].Name
			}
			out[r] = append(out[r], c)
		}
	}
	return out
}

// profile is what a run's logs say about the designed part of its timing:
// per rank, from the end of its align-th call after MPI_Init (the
// synchronisation that starts the designed part) to its last call, how long
// it computed between calls and how long it spent inside each MPI
// operation; and the run as a whole.
type profile struct {
	T0        int64           // global ns: the run's first event, where the report's times start
	InitStart []int64         // per rank, global ns: the start of its first call (MPI_Init)
	Runtime   time.Duration   // earliest first event to latest last event
	InitSkew  time.Duration   // latest MPI_Init start minus earliest
	LoopStart int64           // global ns: the earliest end of a rank's align-th call after MPI_Init
	PreMax    time.Duration   // the longest computation of a rank before the designed part
	Compute   []time.Duration // per rank
	InOp      []map[string]time.Duration
	Calls     []map[string]int
}

func profileOf(tl [][]call, align int) profile {
	n := len(tl)
	p := profile{Compute: make([]time.Duration, n), InOp: make([]map[string]time.Duration, n),
		Calls: make([]map[string]int, n), InitStart: make([]int64, n)}
	var t1, i1 int64
	seen := false
	for r, calls := range tl {
		p.InOp[r] = map[string]time.Duration{}
		p.Calls[r] = map[string]int{}
		if len(calls) <= align {
			continue
		}
		first, last := calls[0], calls[len(calls)-1]
		p.InitStart[r] = first.Start
		if !seen || first.Start < p.T0 {
			p.T0 = first.Start
		}
		if !seen || last.End > t1 {
			t1 = last.End
		}
		if !seen || first.Start > i1 {
			i1 = first.Start
		}
		if !seen || calls[align].End < p.LoopStart {
			p.LoopStart = calls[align].End
		}
		seen = true
		var pre time.Duration
		for i := 1; i <= align; i++ {
			pre += time.Duration(calls[i].Start - calls[i-1].End)
		}
		p.PreMax = max(p.PreMax, pre)
		for i := align + 1; i < len(calls); i++ {
			c := calls[i]
			p.InOp[r][c.Op.String()] += c.dur()
			p.Calls[r][c.Op.String()]++
			p.Compute[r] += time.Duration(c.Start - calls[i-1].End)
		}
	}
	p.Runtime = time.Duration(t1 - p.T0)
	p.InitSkew = time.Duration(i1 - p.T0)
	return p
}

func (p profile) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "runtime %v, MPI_Init start skew %v, computation before the designed part ≤ %v\n",
		p.Runtime, p.InitSkew, p.PreMax.Round(10*time.Microsecond))
	for r := range p.Compute {
		fmt.Fprintf(&b, "  rank %d: compute %v", r, p.Compute[r].Round(10*time.Microsecond))
		ops := make([]string, 0, len(p.InOp[r]))
		for op := range p.InOp[r] {
			ops = append(ops, op)
		}
		sort.Strings(ops)
		for _, op := range ops {
			fmt.Fprintf(&b, ", %s×%d %v", op, p.Calls[r][op], p.InOp[r][op].Round(10*time.Microsecond))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// tolerance is how far a measured time may be from its designed value on a
// noisy machine: Rel of the value or Abs, whichever is larger.
type tolerance struct {
	Rel float64
	Abs time.Duration
}

func (tl tolerance) of(want time.Duration) time.Duration {
	d := time.Duration(tl.Rel * float64(want))
	if d < tl.Abs {
		d = tl.Abs
	}
	return d
}

func (tl tolerance) ok(got, want time.Duration) bool {
	d := got - want
	if d < 0 {
		d = -d
	}
	return d <= tl.of(want)
}

// ms formats ns as milliseconds.
func ms(ns int64) string { return fmt.Sprintf("%.3fms", float64(ns)/1e6) }

// us renders a duration as the microseconds the test programs take.
func us(d time.Duration) string { return fmt.Sprint(d.Microseconds()) }

// retryUntilDesigned runs a designed program through run, which records it into
// logDir and says how the run strayed from its design ("" if it did not),
// until a run follows the design, at most attempts times. It returns the
// last run's logs and how that run strayed.
func retryUntilDesigned(t *testing.T, run func(logDir string) (gate string)) (logDir, gate string) {
	t.Helper()
	for try := 1; try <= attempts; try++ {
		logDir = filepath.Join(t.TempDir(), fmt.Sprintf("logs%d", try))
		if gate = run(logDir); gate == "" {
			return logDir, ""
		}
		t.Logf("run %d: %s; again", try, gate)
	}
	return logDir, gate
}

// reportedAlgo is how the report names --algo=algo: dijkstra and delta
// with their order, by time unless asked otherwise.
func reportedAlgo(algo string) string {
	if algo == "dijkstra" || algo == "delta" {
		return algo + "/time"
	}
	return algo
}
