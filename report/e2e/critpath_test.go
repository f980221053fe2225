//go:build mpi

package e2e

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

// analyzers are the exact algorithms, each of which must find dag's path:
// as one process, and the distributed ones as an MPI job too (SPEC §1: the
// analyzer runs as a parallel MPI job).
var analyzers = []analyzer{{"dag", 0}, {"dijkstra", 0}, {"delta", 0}, {"dijkstra", 2}, {"delta", 2}}

// attempts is how many times a program is run before the test gives up on
// the machine delivering its designed timings.
const attempts = 4

// oracleTol is how close the analyzer must come to what the logs say
// exactly: the same records, the same clock corrections.
var oracleTol = tolerance{Rel: 0.01, Abs: 200 * time.Microsecond}

// run is one run of a designed program: its logs' timeline, profile and
// oracle, and whether it followed its design.
type run struct {
	logDir   string
	tl       [][]call
	prof     profile
	orc      *oracle
	designed bool
	gate     []string // how it strayed from its design
}

// TestDesignedCriticalPath runs each designed program under the logger and
// holds the analyzer's report, with every exact algorithm, to the logs
// and, in the "design" subtests, to the design.
func TestDesignedCriticalPath(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	exeDir := t.TempDir()
	// Open MPI binds each of 2 ranks to a core: one busy process of
	// someone else's on a core then slows that rank for the whole run.
	// Unbound, the scheduler moves the rank to the idler core.
	t.Setenv("OMPI_MCA_hwloc_base_binding_policy", "none")
	for _, d := range designs() {
		t.Run(d.name, func(t *testing.T) {
			exe := mpitest.Compile(t, exeDir, "mpicc", d.src, "-Wall")
			rn := runDesigned(t, lib, exe, &d)
			bin := cpathBin(t)
			reps := map[analyzer]*report.Report{}
			for _, a := range analyzers {
				t.Run(a.String(), func(t *testing.T) {
					rep := analyze(t, bin, rn.logDir, a)
					reps[a] = rep
					checkReport(t, &d, rn, rep, a.algo)
					t.Run("design", func(t *testing.T) {
						if !rn.designed {
							designMissed(t, "the machine did not run %s as designed (load average %s), so the report was held to the logs only:\n  %s",
								d.src, mpitest.LoadAverage(), strings.Join(rn.gate, "\n  "))
						}
						checkDesign(t, &d, rn, rep)
					})
				})
			}
			t.Run("same path", func(t *testing.T) {
				ref := reps[analyzers[0]]
				if ref == nil {
					t.Fatal("no dag report to compare with: its analysis failed (above)")
				}
				for _, a := range analyzers[1:] {
					if rep := reps[a]; rep != nil {
						samePath(t, a.String(), &ref.CriticalPath, &rep.CriticalPath)
					}
				}
			})
		})
	}
}

// runDesigned runs the program until its logs show the designed timings
// (a loaded machine stretches busy loops and delays wake-ups). When no
// attempt does, the test fails (mpitest.DesignMissed), or under
// CPATH_DESIGN_LENIENT=1 it returns the closest run, marked as not
// designed. extra is more environment
// for the ranks (VAR=value).
func runDesigned(t *testing.T, lib, exe string, d *design, extra ...string) *run {
	t.Helper()
	return runDesignedOn(t, mpitest.OpenMPI, lib, exe, d, extra...)
}

// runDesignedOn is runDesigned under MPI m (exe built against it, lib its
// logger).
func runDesignedOn(t *testing.T, m *mpitest.Impl, lib, exe string, d *design, extra ...string) *run {
	t.Helper()
	var env []string
	if d.np > 2 && m == mpitest.OpenMPI {
		// More ranks than cores: ranks waiting in MPI give the core away.
		env = append(env, "OMPI_MCA_mpi_yield_when_idle=1")
	}
	env = append(env, extra...)
	var best *run
	for i := 1; i <= attempts; i++ {
		logDir := filepath.Join(t.TempDir(), fmt.Sprintf("logs%d", i))
		m.RunEnv(t, d.np, env, lib, logDir, filepath.Dir(exe), exe, d.args...)
		logs := mpitest.ReadLogs(t, logDir, d.np)
		tl := timelines(logs)
		rn := &run{logDir: logDir, tl: tl, prof: profileOf(tl, d.align), orc: oracleOf(tl)}
		rn.gate = checkRun(d, rn)
		t.Logf("%s%s %s, attempt %d: %s%s", strings.Join(append(extra[:len(extra):len(extra)], ""), " "), d.src, strings.Join(d.args, " "), i, rn.prof, rn.orc.waitsText(d.align, tl))
		if best == nil || len(rn.gate) < len(best.gate) {
			best = rn
		}
		if len(rn.gate) == 0 {
			break
		}
		t.Logf("the run did not follow its design (load average %s):\n  %s", mpitest.LoadAverage(), strings.Join(rn.gate, "\n  "))
	}
	best.designed = len(best.gate) == 0
	if !best.designed && !mpitest.Lenient() {
		t.Fatalf("design check failed: in %d runs the logs never showed the designed timings (load average %s); closest run:\n  %s",
			attempts, mpitest.LoadAverage(), strings.Join(best.gate, "\n  "))
	}
	return best
}

// checkRun compares a run's logs with everything the design subtests
// check: what each rank computed in the designed part and in the stretches
// designed to be on the critical path, how long it waited there for what
// (the oracle), and each designed collective instance. A design subtest
// that fails on a run that passed these points at the analyzer, not at the
// machine. The gate holds the run to half the checks' relative tolerance:
// a run admitted at the checks' own edge leaves the analysis no room (a
// rank descheduled for 23 ms at np 4 waited 77 ms at a Barrier designed
// for 100 ± 25, and the late arrival took the path through it).
func checkRun(d *design, rn *run) []string {
	var bad []string
	p := rn.prof
	gt := gateTol(d.tol)
	// Sums over ranks, as the design subtests check them: ranks each
	// within the tolerance of a designed zero may add up to more than it.
	all, byOp, byComm := map[string]waits{}, map[string]waits{}, map[string]waits{}
	for r := 0; r < d.np; r++ {
		if !gt.ok(p.Compute[r], d.compute[r]) {
			bad = append(bad, fmt.Sprintf("rank %d computed %v, designed %v ± %v", r, p.Compute[r], d.compute[r], gt.of(d.compute[r])))
		}
		got := map[string]time.Duration{}
		for _, c := range rn.tl[r][min(d.align+1, len(rn.tl[r])):] {
			if w := rn.orc.wait[[2]int{r, c.Idx}]; w.ns > 0 {
				v := time.Duration(w.ns)
				got[w.kind] += v
				addWaits(all, "all calls", w.kind, v)
				addWaits(byOp, c.Op.String(), w.kind, v)
				addWaits(byComm, w.comm, w.kind, v)
			}
		}
		for _, k := range waitKinds {
			if want := d.waitsByRank[r][k]; !gt.ok(got[k], want) {
				bad = append(bad, fmt.Sprintf("rank %d waited %v (%s), designed %v ± %v", r, got[k], k, want, gt.of(want)))
			}
		}
		if m := measuredOnPath(d, rn, r); !gt.ok(m, d.pathCompute[r]) {
			bad = append(bad, fmt.Sprintf("rank %d computed %v in the stretches designed to be on the critical path, designed %v ± %v",
				r, m, d.pathCompute[r], gt.of(d.pathCompute[r])))
		}
	}
	for _, part := range []struct {
		name      string
		got, want map[string]waits
	}{{"in", all, map[string]waits{"all calls": d.waits}}, {"in", byOp, d.waitsByOp}, {"on", byComm, d.waitsByComm}} {
		keys := map[string]bool{}
		for k := range part.got {
			keys[k] = true
		}
		for k := range part.want {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			for _, kind := range waitKinds {
				if g, w := part.got[k][kind], part.want[k][kind]; !gt.ok(g, w) {
					bad = append(bad, fmt.Sprintf("the ranks waited %v (%s) %s %s, designed %v ± %v", g, kind, part.name, k, w, gt.of(w)))
				}
			}
		}
	}
	// The designed collective instances, one by one.
	tol := gateTol(instanceTol(d))
	for _, cd := range d.colls {
		var inst []report.Collective
		for _, c := range rn.orc.colls {
			if c.Op == cd.op && c.Comm == cd.comm {
				inst = append(inst, c)
			}
		}
		if len(inst) != cd.skip+cd.n {
			bad = append(bad, fmt.Sprintf("%d instances of %s on %s, designed %d", len(inst), cd.op, cd.comm, cd.skip+cd.n))
			continue
		}
		for i, c := range inst[cd.skip:] {
			if cd.lastRank != nil && c.LastRank != cd.lastRank(i) {
				bad = append(bad, fmt.Sprintf("rank %d arrived last at %s on %s seq %d, designed %d", c.LastRank, cd.op, cd.comm, c.Seq, cd.lastRank(i)))
			}
			if w := time.Duration(c.WaitBeforeNs); !tol.ok(w, cd.waitBefore) {
				bad = append(bad, fmt.Sprintf("%s on %s seq %d: the others waited %v, designed %v ± %v", cd.op, cd.comm, c.Seq, w, cd.waitBefore, tol.of(cd.waitBefore)))
			}
		}
	}
	return bad
}

// measuredOnPath is the computation of rank r in the stretches its design
// puts on the critical path, as the logs measure it.
func measuredOnPath(d *design, rn *run, r int) time.Duration {
	var m time.Duration
	calls := rn.tl[r]
	for i := d.align + 1; i < len(calls); i++ {
		if d.onPath(r, i-d.align-1, calls[i].Op) {
			m += time.Duration(calls[i].Start - calls[i-1].End)
		}
	}
	return m
}

// gateTol is the tolerance a run's gate holds it to: half the checks'
// relative tolerance (see checkRun).
func gateTol(t tolerance) tolerance { return tolerance{Rel: t.Rel / 2, Abs: t.Abs} }

// instanceTol is the tolerance for one collective instance: one stretch,
// so the run's noise does not average out.
func instanceTol(d *design) tolerance {
	return tolerance{Rel: max(d.tol.Rel, 0.25), Abs: 2 * d.tol.Abs}
}

// checkReport holds one analyzer report to what is true of every run
// whatever the machine's load: the run time and the waits the logs show,
// and a critical path that never waits and is as long as the run.
func checkReport(t *testing.T, d *design, rn *run, rep *report.Report, algo string) {
	t.Helper()
	cp := &rep.CriticalPath
	p := rn.prof

	// The run time is the logs' (the same clocks, the same corrections).
	if got := time.Duration(rep.RuntimeNs); !(tolerance{Abs: 10 * time.Microsecond}).ok(got, p.Runtime) {
		t.Errorf("runtime_ns = %s, the logs span %s", ms(rep.RuntimeNs), ms(int64(p.Runtime)))
	}
	if want := reportedAlgo(algo); cp.Algo != want {
		t.Errorf("critical_path.algo = %q, want %q", cp.Algo, want)
	}
	// The path never waits, so it is as long as the run, up to clock error
	// and the ranks' skew entering MPI_Init (the run starts at the first
	// rank's MPI_Init, the path at the MPI_Init of a rank it goes through).
	if cp.DiffNs != cp.LengthNs-rep.RuntimeNs {
		t.Errorf("critical_path.diff_ns = %d, want length_ns - runtime_ns = %d", cp.DiffNs, cp.LengthNs-rep.RuntimeNs)
	}
	maxDiff := max(time.Millisecond, p.Runtime/100) + p.InitSkew
	if diff := time.Duration(cp.LengthNs - rep.RuntimeNs); diff > maxDiff || diff < -maxDiff {
		t.Errorf("critical_path.length_ns = %s, runtime_ns = %s: they differ by %v, more than max(1ms, 1%%) + the MPI_Init skew %v",
			ms(cp.LengthNs), ms(rep.RuntimeNs), diff, p.InitSkew)
	}
	t.Logf("length %s, runtime %s, diff %s (MPI_Init skew %v); %d segments", ms(cp.LengthNs), ms(rep.RuntimeNs), ms(cp.DiffNs), p.InitSkew, len(cp.Segments))

	segs := globalSegments(rep, p)
	// Where the logs' synchronised clocks ran a dependency backwards
	// (clock error), the analysis moved calls later, each by at most the
	// largest gap (clock_correction_max_ns, docs/analysis.md §3): its
	// times are then up to that much later than the logs'. Up to
	// maxCompareSlack they are matched with the logs' calls within it;
	// beyond, which call starts or ends at a segment's time, and which
	// member came last, cannot be told.
	var slack int64
	if rep.Run.ClockCorrections > 0 {
		slack = rep.Run.ClockCorrectionMaxNs
	}
	switch {
	case slack > maxCompareSlack:
		mpitest.LeaveOutCheck(t, "the exact comparison of times with the logs: on the synchronised clocks %d dependencies ran backwards, by up to %s (clock error; load average %s)",
			rep.Run.ClockCorrections, ms(rep.Run.ClockCorrectionMaxNs), mpitest.LoadAverage())
		slack = -1
	case slack > 0:
		t.Logf("times compared with the logs' up to %d ns later: on the synchronised clocks %d dependencies ran backwards by that much at most, and the analysis moved their calls",
			slack, rep.Run.ClockCorrections)
	}
	checkSegments(t, d, rn, cp, segs, slack)
	checkByRank(t, d, cp, segs)
	checkWaits(t, d, rn, &rep.Waitstates)
	checkColls(t, rn, rep.Calls, slack)
	if len(rep.Processes) != d.np {
		t.Errorf("processes: %d rows, want one per rank (%d)", len(rep.Processes), d.np)
	}
	for i, pr := range rep.Processes {
		if pr.Rank != i {
			t.Errorf("processes[%d].rank = %d, want %d", i, pr.Rank, i)
		} else if i < len(rn.tl) && pr.NumCalls != len(rn.tl[i]) {
			t.Errorf("processes[%d].num_calls = %d, the log holds %d calls", i, pr.NumCalls, len(rn.tl[i]))
		}
	}
}

// globalSegments returns the path's segments in time order on the global
// clock (the report's times count from the run's first event).
func globalSegments(rep *report.Report, p profile) []report.Segment {
	segs := append([]report.Segment(nil), rep.CriticalPath.Segments...)
	if len(segs) == 0 {
		return nil
	}
	if segs[0].StartNs > segs[len(segs)-1].StartNs {
		for i, j := 0, len(segs)-1; i < j; i, j = i+1, j-1 {
			segs[i], segs[j] = segs[j], segs[i]
		}
	}
	if segs[0].StartNs <= rep.RuntimeNs {
		for i := range segs {
			segs[i].StartNs += p.T0
			segs[i].EndNs += p.T0
		}
	}
	return segs
}

// maxCompareSlack is how much later than the logs' (clock correction) the
// report's times may be for checkReport to still match them with the
// logs' calls: well under the programs' designed stretches (10 ms and
// more); calls closer together than that are told apart by their
// operation. At 20 µs, CI's tokenring at 3 ranks on 2 cores, whose
// clocks ran 3 dependencies backwards by up to 22 µs, failed the run;
// the comparison itself stays within the correction the run needed.
const maxCompareSlack = 200_000

// checkSegments checks the path's segments: in time order, contiguous,
// from a rank's first event to the run's last, as long as the path in all,
// on logged calls, and never waiting. slack is how much later than the
// logs' calls the report's times may be (-1: they cannot be matched with
// them).
func checkSegments(t *testing.T, d *design, rn *run, cp *report.CriticalPath, segs []report.Segment, slack int64) {
	t.Helper()
	p := rn.prof
	if len(segs) == 0 {
		t.Errorf("critical_path.segments is empty")
		return
	}
	rel := func(ns int64) string { return ms(ns - p.T0) }
	lim := &limiter{t: t, max: 3}
	defer lim.flush()
	var sum int64
	for i, s := range segs {
		if s.Kind != "compute" && s.Kind != "mpi" && s.Kind != "transfer" && (s.Kind != "launch" || i != 0) {
			lim.errorf("kind", "segment %d: kind %q, want launch (first only), compute, mpi or transfer", i, s.Kind)
		}
		if s.Rank < 0 || s.Rank >= d.np {
			t.Errorf("segment %d: rank %d of %d", i, s.Rank, d.np)
			return
		}
		if s.EndNs < s.StartNs {
			lim.errorf("order", "segment %d (%s on rank %d): ends at %s before it starts at %s", i, s.Kind, s.Rank, rel(s.EndNs), rel(s.StartNs))
		}
		if i > 0 && s.StartNs < segs[i-1].StartNs {
			lim.errorf("order", "segment %d (%s %s on rank %d) starts at %s, before segment %d: the segments are not in time order",
				i, s.Kind, s.Op, s.Rank, rel(s.StartNs), i-1)
		}
		if i > 0 && s.StartNs != segs[i-1].EndNs {
			lim.errorf("contiguity", "segment %d (%s %s on rank %d) starts at %s, segment %d (%s %s on rank %d) ends at %s: the path is not contiguous",
				i, s.Kind, s.Op, s.Rank, rel(s.StartNs), i-1, segs[i-1].Kind, segs[i-1].Op, segs[i-1].Rank, rel(segs[i-1].EndNs))
		}
		sum += s.EndNs - s.StartNs
	}
	if gap := time.Duration(sum - cp.LengthNs); gap > 10*time.Microsecond || gap < -10*time.Microsecond {
		t.Errorf("the segments add up to %s, length_ns is %s", ms(sum), ms(cp.LengthNs))
	}
	first, last := segs[0], segs[len(segs)-1]
	// The path starts at the run's start, with the launch of the rank it
	// runs on first: up to that rank's first event.
	if first.Kind != "launch" || first.StartNs != p.T0 || first.EndNs != p.InitStart[first.Rank] {
		t.Errorf("the path starts with a %s segment on rank %d from %s to %s, want its launch from the run's start to the rank's first event (%s)",
			first.Kind, first.Rank, rel(first.StartNs), rel(first.EndNs), rel(p.InitStart[first.Rank]))
	}
	// MPI_Init synchronises the ranks (Open MPI's fence, the logger's
	// clock-sync Allreduce): a rank that entered it before the last one
	// waited there. Which MPI_Init the path starts with is left to the
	// analyzer; say how much waiting it can hold.
	var lastInit int64
	for _, s := range p.InitStart {
		lastInit = max(lastInit, s)
	}
	t.Logf("the path starts with rank %d's %s at %s, %s before the last rank entered MPI_Init (waiting in MPI_Init on the path, at most)",
		first.Rank, first.Op, rel(first.StartNs), ms(lastInit-first.StartNs))
	if end := p.T0 + int64(p.Runtime); last.EndNs != end {
		t.Errorf("the path ends at %s on rank %d, not at the run's last event (%s)", rel(last.EndNs), last.Rank, rel(end))
	}

	// No waiting on the path: a call on it lasts no longer than its own
	// work, the part of it after its cause started. Transfers run from a
	// call's start on one rank to a call's end on the segment's rank.
	for i, s := range segs {
		if slack < 0 {
			break
		}
		isInit := s.Op == trace.OpInit.String() || s.Op == trace.OpInitThread.String()
		if isInit && i > 0 && segs[i-1].Rank != s.Rank {
			// MPI_Init is a barrier over MPI_COMM_WORLD: after the last
			// rank entered it (segs[i-1]'s), the rest of this rank's is
			// start-up, in MPI.
			if s.Kind != "mpi" || callAt(rn.tl[s.Rank], s.EndNs, false, slack, "") == nil || callAt(rn.tl[segs[i-1].Rank], s.StartNs, true, slack, "") == nil {
				lim.errorf("unknown call", "segment %d: %s %s on rank %d from %s to %s, after rank %d's: want mpi from the start of the last rank's MPI_Init to the end of this rank's",
					i, s.Kind, s.Op, s.Rank, rel(s.StartNs), rel(s.EndNs), segs[i-1].Rank)
			}
			continue
		}
		switch s.Kind {
		case "mpi":
			c := callAt(rn.tl[s.Rank], s.StartNs, true, slack, s.Op)
			if c == nil {
				lim.errorf("unknown call", "segment %d: %s on rank %d at %s starts no call in the rank's log", i, s.Op, s.Rank, rel(s.StartNs))
				continue
			}
			if c.Op.String() != s.Op {
				lim.errorf("unknown call", "segment %d: %s on rank %d at %s, but the log has %s there", i, s.Op, s.Rank, rel(s.StartNs), c.Op)
			}
			w := rn.orc.wait[[2]int{c.Rank, c.Idx}]
			if own := c.End - c.Start - w.ns; s.EndNs-s.StartNs > own+50_000 {
				lim.errorf("waiting", "segment %d: %s on rank %d lasts %s from %s, but the call waited %s (%s) and its own work is %s: waiting on the critical path",
					i, s.Op, s.Rank, ms(s.EndNs-s.StartNs), rel(s.StartNs), ms(w.ns), w.kind, ms(own))
			}
		case "transfer":
			if callAt(rn.tl[s.Rank], s.EndNs, false, slack, "") == nil {
				lim.errorf("unknown call", "segment %d: transfer %s to rank %d ends at %s, which ends no call of the rank", i, s.Op, s.Rank, rel(s.EndNs))
			}
			from := false
			for r := range rn.tl {
				from = from || callAt(rn.tl[r], s.StartNs, true, slack, "") != nil
			}
			if !from {
				lim.errorf("unknown call", "segment %d: transfer %s to rank %d starts at %s, which starts no call", i, s.Op, s.Rank, rel(s.StartNs))
			}
		}
	}
}

// callAt returns the rank's call that starts (or ends) at global time ns,
// or up to slack ns before it (the analysis moved it later): the latest
// of those that is an op ("": any), else the latest of them.
func callAt(calls []call, ns int64, start bool, slack int64, op string) *call {
	at := func(c *call) int64 {
		if start {
			return c.Start
		}
		return c.End
	}
	i := sort.Search(len(calls), func(i int) bool { return at(&calls[i]) > ns })
	var latest *call
	for j := i - 1; j >= 0 && at(&calls[j]) >= ns-slack; j-- {
		if op == "" || calls[j].Op.String() == op {
			return &calls[j]
		}
		if latest == nil {
			latest = &calls[j]
		}
	}
	return latest
}

// checkByRank checks critical_path.by_rank against the segments.
func checkByRank(t *testing.T, d *design, cp *report.CriticalPath, segs []report.Segment) {
	t.Helper()
	byRank := map[int]report.RankShare{}
	var total int64
	for _, rs := range cp.ByRank {
		if _, dup := byRank[rs.Rank]; dup {
			t.Errorf("critical_path.by_rank lists rank %d twice", rs.Rank)
		}
		byRank[rs.Rank] = rs
		total += rs.LaunchNs + rs.ComputeNs + rs.MPINs + rs.TransferNs
	}
	if gap := time.Duration(total - cp.LengthNs); gap > 10*time.Microsecond || gap < -10*time.Microsecond {
		t.Errorf("critical_path.by_rank adds up to %s, length_ns is %s", ms(total), ms(cp.LengthNs))
	}
	kinds := map[string]func(*report.RankShare) int64{
		"launch":   func(rs *report.RankShare) int64 { return rs.LaunchNs },
		"compute":  func(rs *report.RankShare) int64 { return rs.ComputeNs },
		"mpi":      func(rs *report.RankShare) int64 { return rs.MPINs },
		"transfer": func(rs *report.RankShare) int64 { return rs.TransferNs },
	}
	sums := map[string][]int64{}
	for k := range kinds {
		sums[k] = make([]int64, d.np)
	}
	for _, s := range segs {
		if sums[s.Kind] != nil && s.Rank >= 0 && s.Rank < d.np {
			sums[s.Kind][s.Rank] += s.EndNs - s.StartNs
		}
	}
	for r := 0; r < d.np; r++ {
		rs := byRank[r]
		for _, k := range sortedKeys(kinds) {
			if off := kinds[k](&rs) - sums[k][r]; off > 10_000 || off < -10_000 {
				t.Errorf("critical_path.by_rank[rank %d].%s_ns = %s, its %s segments add up to %s", r, k, ms(kinds[k](&rs)), k, ms(sums[k][r]))
			}
		}
		t.Logf("rank %d on the path: compute %s, mpi %s, transfer %s", r, ms(rs.ComputeNs), ms(rs.MPINs), ms(rs.TransferNs))
	}
}

// checkWaits checks the wait states in all, per rank, per operation and
// per communicator against the logs.
func checkWaits(t *testing.T, d *design, rn *run, ws *report.Waitstates) {
	t.Helper()
	orc := rn.orc
	repRank, repOp, repComm := breakdowns(t, ws.ByRank), breakdowns(t, ws.ByOp), breakdowns(t, ws.ByComm)
	for k := range repRank {
		if r, err := strconv.Atoi(k); err != nil || r < 0 || r >= d.np {
			t.Errorf("waitstates.by_rank has key %q, not a rank of %d", k, d.np)
		}
	}
	exact := func(what string, got, want map[string]int64) {
		for _, k := range waitKinds {
			if g, w := time.Duration(got[k]), time.Duration(want[k]); !oracleTol.ok(g, w) {
				t.Errorf("waitstates%s.%s_ns = %s, the logs say %s", what, k, ms(got[k]), ms(want[k]))
			}
		}
	}
	exact("", kindsOfTotals(ws), orc.total)
	for r := 0; r < d.np; r++ {
		exact(fmt.Sprintf(".by_rank[%d]", r), repRank[strconv.Itoa(r)], orc.byRank[r])
	}
	for _, part := range []struct {
		name      string
		got, want map[string]map[string]int64
	}{{"by_op", repOp, orc.byOp}, {"by_comm", repComm, orc.byComm}} {
		keys := map[string]bool{}
		for k := range part.got {
			keys[k] = true
		}
		for k := range part.want {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			exact(fmt.Sprintf(".%s[%s]", part.name, k), part.got[k], part.want[k])
		}
	}
	t.Logf("wait states: %s", fmtKinds(kindsOfTotals(ws)))
	for r := 0; r < d.np; r++ {
		t.Logf("wait states of rank %d: %s", r, fmtKinds(repRank[strconv.Itoa(r)]))
	}
	t.Logf("wait states by_op: %s", fmtBreakdowns(ws.ByOp))
	t.Logf("wait states by_comm: %s", fmtBreakdowns(ws.ByComm))
}

func breakdowns(t *testing.T, bs []report.WaitBreakdown) map[string]map[string]int64 {
	t.Helper()
	m := map[string]map[string]int64{}
	for _, b := range bs {
		if _, dup := m[b.Key]; dup {
			t.Errorf("waitstates: key %q listed twice", b.Key)
		}
		m[b.Key] = kindsOf(b)
	}
	return m
}

// checkColls checks every collective instance in calls[] against the logs;
// slack is as for checkSegments.
func checkColls(t *testing.T, rn *run, calls []report.Collective, slack int64) {
	t.Helper()
	lim := &limiter{t: t, max: 3}
	defer lim.flush()
	got := map[collKey]report.Collective{}
	for _, c := range calls {
		k := collKey{c.Op, c.Comm, uint32(c.Seq)}
		if _, dup := got[k]; dup {
			t.Errorf("calls lists %s on %s seq %d twice", c.Op, c.Comm, c.Seq)
		}
		got[k] = c
	}
	for _, w := range rn.orc.colls {
		k := collKey{w.Op, w.Comm, uint32(w.Seq)}
		c, ok := got[k]
		if !ok {
			lim.errorf("missing", "calls has no %s on %s seq %d", w.Op, w.Comm, w.Seq)
			continue
		}
		delete(got, k)
		what := fmt.Sprintf("calls[%s on %s, seq %d]", w.Op, w.Comm, w.Seq)
		if c.Members != w.Members {
			lim.errorf("members", "%s.members = %d, the logs have %d", what, c.Members, w.Members)
		}
		// A lead the correction could have undone (moving the last
		// member's start later) leaves the last rank open.
		if c.LastRank != w.LastRank && rn.orc.lead[k] >= max(tieNs, slack+1) && slack >= 0 {
			lim.errorf("last_rank", "%s.last_rank = %d, the logs say %d", what, c.LastRank, w.LastRank)
		}
		for _, f := range []struct {
			name      string
			got, want int64
		}{{"wait_before_ns", c.WaitBeforeNs, w.WaitBeforeNs}, {"wait_after_ns", c.WaitAfterNs, w.WaitAfterNs},
			{"execution_ns", c.ExecutionNs, w.ExecutionNs}} {
			if !oracleTol.ok(time.Duration(f.got), time.Duration(f.want)) {
				lim.errorf(f.name, "%s.%s = %s, the logs say %s", what, f.name, ms(f.got), ms(f.want))
			}
		}
		if c.ExecutionNs > 0 {
			want := float64(c.WaitBeforeNs+c.WaitAfterNs) / float64(c.ExecutionNs)
			if diff := c.Imbalance - want; diff > 1e-6*want+1e-9 || diff < -1e-6*want-1e-9 {
				lim.errorf("imbalance", "%s.imbalance = %g, want (wait_before + wait_after) / execution = %g", what, c.Imbalance, want)
			}
		}
	}
	for _, k := range sortedCollKeys(got) {
		lim.errorf("extra", "calls lists %s on %s seq %d, which the logs do not have", k.op, k.comm, k.seq)
	}
}

func sortedCollKeys(m map[collKey]report.Collective) []collKey {
	var ks []collKey
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].comm != ks[j].comm {
			return ks[i].comm < ks[j].comm
		}
		return ks[i].seq < ks[j].seq
	})
	return ks
}

// samePath checks that an exact algorithm found dag's path.
func samePath(t *testing.T, algo string, ref, got *report.CriticalPath) {
	t.Helper()
	if got.LengthNs != ref.LengthNs {
		t.Errorf("%s: length_ns = %d, dag's is %d", algo, got.LengthNs, ref.LengthNs)
	}
	if len(got.Segments) != len(ref.Segments) {
		t.Errorf("%s: %d segments, dag's path has %d", algo, len(got.Segments), len(ref.Segments))
	}
	for i := 0; i < min(len(got.Segments), len(ref.Segments)); i++ {
		if got.Segments[i] != ref.Segments[i] {
			t.Errorf("%s: segment %d is %+v, dag's is %+v", algo, i, got.Segments[i], ref.Segments[i])
			break
		}
	}
	if got.DiffNs != ref.DiffNs {
		t.Errorf("%s: diff_ns = %d, dag's is %d", algo, got.DiffNs, ref.DiffNs)
	}
	if !reflect.DeepEqual(got.ByRank, ref.ByRank) {
		t.Errorf("%s: by_rank = %+v, dag's is %+v", algo, got.ByRank, ref.ByRank)
	}
	if !reflect.DeepEqual(got.ByOp, ref.ByOp) {
		t.Errorf("%s: by_op = %+v, dag's is %+v", algo, got.ByOp, ref.ByOp)
	}
}

// limiter reports the first max errors of each category and counts the
// rest, so that one wrong rule does not flood the output.
type limiter struct {
	t    *testing.T
	max  int
	seen map[string]int
}

func (l *limiter) errorf(cat, format string, args ...any) {
	l.t.Helper()
	if l.seen == nil {
		l.seen = map[string]int{}
	}
	l.seen[cat]++
	if l.seen[cat] <= l.max {
		l.t.Errorf(format, args...)
	}
}

func (l *limiter) flush() {
	l.t.Helper()
	for _, cat := range sortedKeys(l.seen) {
		if n := l.seen[cat]; n > l.max {
			l.t.Errorf("... and %d more %s errors", n-l.max, cat)
		}
	}
}

func collapse(rs []int) []int {
	var out []int
	for _, r := range rs {
		if len(out) == 0 || out[len(out)-1] != r {
			out = append(out, r)
		}
	}
	return out
}

// addWaits adds v to m[key][kind].
func addWaits(m map[string]waits, key, kind string, v time.Duration) {
	if m[key] == nil {
		m[key] = waits{}
	}
	m[key][kind] += v
}

func copyWaits(w waits) waits {
	out := waits{}
	for k, v := range w {
		out[k] = v
	}
	return out
}

func kindsOf(b report.WaitBreakdown) map[string]int64 {
	return map[string]int64{
		lateSender: b.LateSenderNs, lateReceiver: b.LateReceiverNs, wrongOrder: b.WrongOrderNs,
		waitAtBarrier: b.WaitAtBarrierNs, waitAtNxN: b.WaitAtNxNNs,
		lateBroadcast: b.LateBroadcastNs, earlyReduce: b.EarlyReduceNs,
	}
}

func kindsOfTotals(w *report.Waitstates) map[string]int64 {
	return kindsOf(report.WaitBreakdown{WaitTimes: w.WaitTimes})
}

func fmtKinds(m map[string]int64) string {
	var parts []string
	for _, k := range waitKinds {
		if m[k] != 0 {
			parts = append(parts, k+" "+ms(m[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func fmtWaits(w waits) string {
	m := map[string]int64{}
	for k, v := range w {
		m[k] = int64(v)
	}
	return fmtKinds(m)
}

func fmtBreakdowns(bs []report.WaitBreakdown) string {
	var parts []string
	for _, b := range bs {
		parts = append(parts, b.Key+": "+fmtKinds(kindsOf(b)))
	}
	return strings.Join(parts, "; ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
