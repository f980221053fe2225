//go:build mpi

package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

// Injected clock skew (CPATH_TEST_CLOCK_SKEW): rank r's clock is r·30 ms
// ahead and runs r·50 ppm fast, far more than the message latencies (µs)
// and than the designed waits' resolution, so an analysis that did not
// remove it would see receives end long before their sends started.
const (
	skewOffsetNs = 30_000_000
	skewDriftPPM = 50.0
)

// skewDesigns are the designed programs run with and without skew: a
// point-to-point path in ring order over more ranks than cores, and a
// collective one.
var skewDesigns = []string{"tokenring/np3", "slowallreduce/np2"}

// TestClockSkew runs programs with a known critical path twice under the
// logger, with undistorted clocks and with CPATH_TEST_CLOCK_SKEW, and
// holds the analysis of the skewed run to the same standard as the
// other's: no negative durations anywhere in the report, a path as long as
// the run, through the same ranks in the same order with the same
// computation on each as the undistorted run (and as designed), the
// report held to its logs as TestDesignedCriticalPath holds it, and the
// corrected clock-condition violations counted in run.clock_violations.
// The raw logs are checked to be skewed, so that the test cannot pass
// because the skew was never injected.
func TestClockSkew(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	exeDir := t.TempDir()
	t.Setenv("OMPI_MCA_hwloc_base_binding_policy", "none") // as in TestDesignedCriticalPath
	skewEnv := fmt.Sprintf("CPATH_TEST_CLOCK_SKEW=%d:%g", skewOffsetNs, skewDriftPPM)
	byName := map[string]design{}
	for _, d := range designs() {
		byName[d.name] = d
	}
	for _, name := range skewDesigns {
		d, ok := byName[name]
		if !ok {
			t.Fatalf("no design %q in designs()", name)
		}
		t.Run(d.name, func(t *testing.T) {
			exe := mpitest.Compile(t, exeDir, "mpicc", d.src, "-Wall")
			plain := runDesigned(t, lib, exe, &d)
			skewed := runDesigned(t, lib, exe, &d, skewEnv)
			checkSkewInjected(t, &d, plain.logDir, false)
			checkSkewInjected(t, &d, skewed.logDir, true)
			bin := cpathBin(t)
			for _, a := range analyzers {
				t.Run(a.String(), func(t *testing.T) {
					ref := analyze(t, bin, plain.logDir, a)
					raw, rep := analyzeRaw(t, bin, skewed.logDir, a)
					t.Logf("run.clock_violations: %d with skew, %d without; run.messages %d",
						rep.Run.ClockViolations, ref.Run.ClockViolations, rep.Run.Messages)
					checkViolationsReported(t, raw, rep)
					checkNoNegative(t, rep)
					// Everything TestDesignedCriticalPath holds a report to
					// whatever the machine's load: the run time, a contiguous
					// path as long as the run (up to the MPI_Init skew) that
					// never waits, every wait state and collective instance
					// as the logs say.
					checkReport(t, &d, skewed, rep, a.algo)
					t.Run("same as without skew", func(t *testing.T) {
						if !plain.designed || !skewed.designed {
							designMissed(t, "the machine did not run %s as designed (load average %s), so the paths of the runs cannot be compared",
								d.src, mpitest.LoadAverage())
						}
						sameDesignedPath(t, &d, plain, ref, skewed, rep)
					})
					t.Run("design", func(t *testing.T) {
						if !skewed.designed {
							designMissed(t, "the machine did not run %s as designed (load average %s):\n  %s",
								d.src, mpitest.LoadAverage(), strings.Join(skewed.gate, "\n  "))
						}
						checkDesign(t, &d, skewed, rep)
					})
				})
			}
		})
	}
}

// checkSkewInjected checks that the raw logs are skewed as asked (or not):
// every rank's header records the injected distortion, the sync measured
// it, and the local times at which the ranks left the same Barrier differ
// by about r·30 ms from rank 0's.
func checkSkewInjected(t *testing.T, d *design, logDir string, skewed bool) {
	t.Helper()
	logs := mpitest.ReadLogs(t, logDir, d.np)
	// The sync is within µs (clocksync's tests); 1 ms is far below the
	// 30 ms steps between ranks.
	const syncTol = time.Millisecond
	// The ranks leave a Barrier together, up to a scheduler tick or two
	// when one was descheduled (with more ranks than cores); the drift
	// adds r·50 ppm of the run (< 1 s), µs. The test asks this of the
	// Barrier they left most nearly together, and logs the others.
	const barrierTol = 5 * time.Millisecond
	barrierEnds := make([][]int64, d.np) // by rank: local ends of its world Barriers, in order
	for r, l := range logs {
		c := l.Header.Clock
		want := int64(r) * skewOffsetNs
		switch {
		case !skewed && c.Injected != nil:
			t.Errorf("%s: rank %d: clock skew injected without CPATH_TEST_CLOCK_SKEW: %+v", logDir, r, *c.Injected)
		case skewed && r == 0 && c.Injected != nil && (c.Injected.OffsetNs != 0 || c.Injected.DriftPPM != 0):
			t.Errorf("%s: rank 0's clock is skewed: %+v (rank r is skewed by r times the setting)", logDir, *c.Injected)
		case skewed && r > 0 && (c.Injected == nil || c.Injected.OffsetNs != want || c.Injected.DriftPPM != float64(r)*skewDriftPPM):
			t.Fatalf("%s: rank %d: header clock.injected = %+v, want offset %d ns and drift %g ppm: the skew was not injected",
				logDir, r, c.Injected, want, float64(r)*skewDriftPPM)
		}
		if !skewed {
			want = 0
		}
		// The sync found the offset: the global clock (rank 0's) is
		// r·30 ms behind this rank's.
		if m := c.Init.OffsetNs; m > -want+int64(syncTol) || m < -want-int64(syncTol) {
			t.Errorf("%s: rank %d: the sync measured an offset of %s at MPI_Init, want %s ± %v", logDir, r, ms(m), ms(-want), syncTol)
		}
		for _, rec := range l.Records {
			if rec.Op == trace.OpBarrier && rec.Comm == trace.CommWorld {
				barrierEnds[r] = append(barrierEnds[r], rec.End)
			}
		}
		if skewed {
			t.Logf("rank %d: injected %+v; sync at MPI_Init: offset %s (± %s), at MPI_Finalize: %+v", r, c.Injected, ms(c.Init.OffsetNs), ms(c.Init.ErrNs), c.Final)
		}
	}
	if len(barrierEnds[0]) == 0 {
		t.Fatalf("%s: rank 0 logged no world Barrier", logDir)
	}
	for r := 1; r < d.np; r++ {
		if len(barrierEnds[r]) != len(barrierEnds[0]) {
			t.Fatalf("%s: rank %d logged %d world Barriers, rank 0 %d", logDir, r, len(barrierEnds[r]), len(barrierEnds[0]))
		}
		want := time.Duration(0)
		if skewed {
			want = time.Duration(r) * skewOffsetNs
		}
		best := time.Duration(math.MaxInt64)
		var apart []string
		for i := range barrierEnds[0] {
			got := time.Duration(barrierEnds[r][i] - barrierEnds[0][i])
			apart = append(apart, got.String())
			best = min(best, (got - want).Abs())
		}
		t.Logf("world Barriers: rank %d's local clock reads %s more than rank 0's as they leave them (injected %v)", r, strings.Join(apart, ", "), want)
		if best > barrierTol {
			t.Errorf("%s: rank %d's local clock reads %s more than rank 0's as they leave the world Barriers: none is within %v of the injected %v",
				logDir, r, strings.Join(apart, ", "), barrierTol, want)
		}
	}
}

// checkViolationsReported checks that the report states how many
// clock-condition violations it corrected (a count, even when 0) and
// that the count is plausible: at most one per matched message.
func checkViolationsReported(t *testing.T, raw []byte, rep *report.Report) {
	t.Helper()
	var top struct {
		Run map[string]json.RawMessage `json:"run"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatalf("decoding run: %v", err)
	}
	v, ok := top.Run["clock_violations"]
	if !ok {
		t.Fatalf("the report's run has no clock_violations key: %s", raw[:min(len(raw), 2000)])
	}
	var n int64
	if err := json.Unmarshal(v, &n); err != nil {
		t.Fatalf("run.clock_violations = %s, not an integer: %v", v, err)
	}
	if n < 0 || n > int64(rep.Run.Messages) {
		t.Errorf("run.clock_violations = %d, want 0..%d (run.messages: receives corrected)", n, rep.Run.Messages)
	}
}

// checkNoNegative checks that no duration in the report is negative: the
// path's segments, the per-rank and per-operation shares, the collective
// instances, the wait states and the per-process table.
func checkNoNegative(t *testing.T, rep *report.Report) {
	t.Helper()
	lim := &limiter{t: t, max: 3}
	defer lim.flush()
	neg := func(cat, what string, ns int64) {
		if ns < 0 {
			lim.errorf(cat, "%s = %d ns: negative", what, ns)
		}
	}
	cp := &rep.CriticalPath
	neg("runtime", "runtime_ns", rep.RuntimeNs)
	neg("path", "critical_path.length_ns", cp.LengthNs)
	for i, s := range cp.Segments {
		if s.EndNs < s.StartNs {
			lim.errorf("segments", "critical_path.segments[%d] (%s %s on rank %d): ends at %d before it starts at %d",
				i, s.Kind, s.Op, s.Rank, s.EndNs, s.StartNs)
		}
	}
	for _, rs := range cp.ByRank {
		neg("path", fmt.Sprintf("critical_path.by_rank[rank %d].compute_ns", rs.Rank), rs.ComputeNs)
		neg("path", fmt.Sprintf("critical_path.by_rank[rank %d].mpi_ns", rs.Rank), rs.MPINs)
		neg("path", fmt.Sprintf("critical_path.by_rank[rank %d].transfer_ns", rs.Rank), rs.TransferNs)
	}
	for _, o := range cp.ByOp {
		neg("path", fmt.Sprintf("critical_path.by_op[%s].ns", o.Op), o.Ns)
	}
	for _, c := range rep.Calls {
		what := fmt.Sprintf("calls[%s on %s, seq %d]", c.Op, c.Comm, c.Seq)
		neg("calls", what+".wait_before_ns", c.WaitBeforeNs)
		neg("calls", what+".wait_after_ns", c.WaitAfterNs)
		neg("calls", what+".execution_ns", c.ExecutionNs)
		if c.Imbalance < 0 {
			lim.errorf("calls", "%s.imbalance = %g: negative", what, c.Imbalance)
		}
	}
	ws := &rep.Waitstates
	for k, v := range kindsOfTotals(ws) {
		neg("waitstates", "waitstates."+k+"_ns", v)
	}
	for _, part := range []struct {
		name string
		bs   []report.WaitBreakdown
	}{{"by_rank", ws.ByRank}, {"by_op", ws.ByOp}, {"by_comm", ws.ByComm}} {
		for _, b := range part.bs {
			for k, v := range kindsOf(b) {
				neg("waitstates", fmt.Sprintf("waitstates.%s[%s].%s_ns", part.name, b.Key, k), v)
			}
		}
	}
	for _, p := range rep.Processes {
		what := fmt.Sprintf("processes[rank %d]", p.Rank)
		neg("processes", what+".program_time_ns", p.ProgramTimeNs)
		neg("processes", what+".total_execution_time_ns", p.TotalExecutionNs)
		neg("processes", what+".total_wait_time_ns", p.TotalWaitNs)
	}
	neg("totals", "totals.total_execution_time_ns", rep.Totals.TotalExecutionNs)
	neg("totals", "totals.total_wait_time_ns", rep.Totals.TotalWaitNs)
}

// pathCompute is what checkDesign reads off a report's critical path: the
// ranks it computes on in the designed part, in order (stretches of at
// least half the shortest designed one), and its computation there per
// rank.
func pathCompute(d *design, rn *run, rep *report.Report) (order []int, compute []time.Duration) {
	compute = make([]time.Duration, d.np)
	for _, s := range globalSegments(rep, rn.prof) {
		if s.Kind != "compute" || s.Rank < 0 || s.Rank >= d.np || s.StartNs < rn.prof.LoopStart {
			continue
		}
		l := time.Duration(s.EndNs - s.StartNs)
		compute[s.Rank] += l
		if l >= d.stretch/2 && (len(order) == 0 || order[len(order)-1] != s.Rank) {
			order = append(order, s.Rank)
		}
	}
	return order, compute
}

// sameDesignedPath checks that the skewed run's critical path computes on
// the same ranks in the same order as the undistorted run's (and as
// designed), as long on each, within the design's tolerance.
func sameDesignedPath(t *testing.T, d *design, plain *run, ref *report.Report, skewed *run, rep *report.Report) {
	t.Helper()
	po, pc := pathCompute(d, plain, ref)
	so, sc := pathCompute(d, skewed, rep)
	if !reflect.DeepEqual(so, po) {
		t.Errorf("with skew the critical path computes on ranks %v in turn, without skew on %v", so, po)
	}
	if want := collapse(d.order); !reflect.DeepEqual(so, want) {
		t.Errorf("with skew the critical path computes on ranks %v in turn, designed %v", so, want)
	}
	for r := 0; r < d.np; r++ {
		t.Logf("rank %d: computation on the critical path after the aligning calls: %s with skew, %s without, designed %v",
			r, ms(int64(sc[r])), ms(int64(pc[r])), d.pathCompute[r])
		if !d.tol.ok(sc[r], pc[r]) {
			t.Errorf("rank %d: computation on the critical path = %s with skew, %s without: more than %v apart",
				r, ms(int64(sc[r])), ms(int64(pc[r])), d.tol.of(pc[r]))
		}
	}
	t.Logf("critical path: %s long with skew (runtime %s, %d segments), %s without (runtime %s, %d segments)",
		ms(rep.CriticalPath.LengthNs), ms(rep.RuntimeNs), len(rep.CriticalPath.Segments),
		ms(ref.CriticalPath.LengthNs), ms(ref.RuntimeNs), len(ref.CriticalPath.Segments))
}
