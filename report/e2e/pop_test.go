//go:build mpi

package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

// popphases.c's arguments (testdata/popphases.c): four ranks; phase 1, N1
// rounds of rank r computing C + r·K, then MPI_Allreduce; phase 2, a
// pipeline of M sweeps of D; phase 3, N3 rounds of E, then MPI_Sendrecv
// of popBytes with the partner rank.
const (
	popNP    = 4
	popN1    = 4
	popC     = 10 * time.Millisecond
	popK     = 5 * time.Millisecond
	popM     = 2
	popD     = 20 * time.Millisecond
	popN3    = 4
	popE     = 20 * time.Millisecond
	popBytes = 1 << 20
	popPh    = 3 // designed phases, after phase 0 (MPI_Init to the first MPI_Pcontrol)
)

// popFactorTol is how close a POP factor must come to the test's own from
// the logs (popFactors); popWhatIfTol how close a what-if prediction to
// the rerun of the changed program; popDesignTol how close the logs'
// load balance and serialisation to the design's, and popStretchTol a
// rank's computation in a phase to its design, for a run to count as the
// program designed (gate).
var popStretchTol = tolerance{Rel: 0.15, Abs: 5 * time.Millisecond}

const (
	popDesignTol = 0.05
	popFactorTol = 0.02
	popWhatIfTol = 0.05
	// popClockTol is how far the report's window may be from the logs':
	// the analyzer's clock corrections.
	popClockTol = 200 * time.Microsecond
)

// popKnobs change the program: rank scaleRank computes scalePct % of its
// design everywhere, every rank phase1Pct % in phase 1.
type popKnobs struct{ scaleRank, scalePct, phase1Pct int }

var popAsDesigned = popKnobs{popNP, 100, 100} // rank popNP does not exist

func (k popKnobs) String() string {
	return fmt.Sprintf("rank %d at %d%%, phase 1 at %d%%", k.scaleRank, k.scalePct, k.phase1Pct)
}

func (k popKnobs) args() []string {
	return []string{fmt.Sprint(popN1), us(popC), us(popK), fmt.Sprint(popM), us(popD), fmt.Sprint(popN3), us(popE),
		fmt.Sprint(popBytes), fmt.Sprint(k.scaleRank), fmt.Sprint(k.scalePct), fmt.Sprint(k.phase1Pct)}
}

// pct scales d by rank r's knob (and phase 1's, if phase1).
func (k popKnobs) scale(d time.Duration, r int, phase1 bool) time.Duration {
	if phase1 {
		d = d * time.Duration(k.phase1Pct) / 100
	}
	if r == k.scaleRank {
		d = d * time.Duration(k.scalePct) / 100
	}
	return d
}

// compute is rank r's designed computation in phase ph (1..3).
func (k popKnobs) compute(r, ph int) time.Duration {
	switch ph {
	case 1:
		return popN1 * k.scale(popC+time.Duration(r)*popK, r, true)
	case 2:
		return popM * k.scale(popD, r, false)
	}
	return popN3 * k.scale(popE, r, false)
}

// window is the designed length of phase 1 (the slowest rank's rounds) or
// 2 (the pipeline: rank r's sweep s starts when its sweep s-1 and rank
// r-1's sweep s have ended) or 3 (N3 rounds of E with the partner).
func (k popKnobs) window(ph int) time.Duration {
	if ph == 3 {
		return popN3 * popE // the partners' rounds, each E
	}
	if ph == 1 {
		var slowest time.Duration
		for r := 0; r < popNP; r++ {
			slowest = max(slowest, k.compute(r, 1))
		}
		return slowest
	}
	end := make([]time.Duration, popNP) // of each rank's last sweep
	for s := 0; s < popM; s++ {
		for r := 0; r < popNP; r++ {
			begin := end[r]
			if r > 0 {
				begin = max(begin, end[r-1])
			}
			end[r] = begin + k.scale(popD, r, false)
		}
	}
	return end[popNP-1]
}

// popMeasure is what the logs say of the phases, by the POP definitions,
// independently of the analyzer: by phase (0: MPI_Init to the first
// MPI_Pcontrol) and rank, the computation; by phase, the window from the
// earliest start on a rank (the end of MPI_Init or of its MPI_Pcontrol) to
// the latest end (the start of the next MPI_Pcontrol or MPI_Finalize);
// the whole run's window; and the ideal run (popIdeal) of each phase and
// of the whole run.
type popMeasure struct {
	T0             int64 // the run's first event, where the report's times start
	useful         [popPh + 1][]time.Duration
	from, to       [popPh + 1]int64
	runFrom, runTo int64
	ideal          [popPh + 1]time.Duration
	runIdeal       time.Duration
	tl             [][]call
}

// held is the time phases 1 and 2 lasted beyond their ideal run: each
// message there is a word, so by design they lose ~nothing to transfers,
// and what they lost is handoffs the machine held up (a rank woken late
// from a wait), which a rerun need not repeat.
func (m *popMeasure) held() time.Duration {
	var d time.Duration
	for ph := 1; ph <= 2; ph++ {
		d += max(0, time.Duration(m.to[ph]-m.from[ph])-m.ideal[ph])
	}
	return d
}

// usefulIn is each rank's computation within [from, to] (global ns): the
// time outside MPI calls, clipped to the window.
func (m *popMeasure) usefulIn(from, to int64) []time.Duration {
	out := make([]time.Duration, len(m.tl))
	for r, calls := range m.tl {
		for i := 1; i < len(calls); i++ {
			if a, b := max(calls[i-1].End, from), min(calls[i].Start, to); b > a {
				out[r] += time.Duration(b - a)
			}
		}
	}
	return out
}

func measurePop(tl [][]call) (popMeasure, error) {
	m := popMeasure{tl: tl}
	m.T0 = math.MaxInt64
	for k := range m.useful {
		m.useful[k] = make([]time.Duration, len(tl))
		m.from[k], m.to[k] = math.MaxInt64, math.MinInt64
	}
	m.runFrom, m.runTo = math.MaxInt64, math.MinInt64
	bounds := make([][]int, len(tl)) // by rank: Init, the Pcontrols, Finalize
	for r, calls := range tl {
		for i, c := range calls {
			if c.Op == trace.OpInit || c.Op == trace.OpInitThread || c.Op == trace.OpPcontrol || c.Op == trace.OpFinalize {
				bounds[r] = append(bounds[r], i)
			}
		}
		bounds := bounds[r]
		if len(bounds) != popPh+2 || calls[bounds[0]].Op != trace.OpInit || calls[bounds[popPh+1]].Op != trace.OpFinalize {
			return m, fmt.Errorf("rank %d: MPI_Init, %d MPI_Pcontrol and MPI_Finalize expected, found %d of them", r, popPh, len(bounds))
		}
		m.T0 = min(m.T0, calls[0].Start)
		for k := 0; k <= popPh; k++ {
			a, b := bounds[k], bounds[k+1]
			for i := a + 1; i <= b; i++ {
				m.useful[k][r] += time.Duration(calls[i].Start - calls[i-1].End)
			}
			m.from[k] = min(m.from[k], calls[a].End)
			m.to[k] = max(m.to[k], calls[b].Start)
		}
		m.runFrom = min(m.runFrom, calls[bounds[0]].End)
		m.runTo = max(m.runTo, calls[bounds[popPh+1]].Start)
	}
	at := func(k int) []int {
		out := make([]int, len(tl))
		for r := range out {
			out[r] = bounds[r][k]
		}
		return out
	}
	var err error
	for k := 0; k <= popPh && err == nil; k++ {
		m.ideal[k], err = popIdeal(tl, at(k), at(k+1))
	}
	if err == nil {
		m.runIdeal, err = popIdeal(tl, at(0), at(popPh+1))
	}
	return m, err
}

// gate says how a run strayed from its design, beyond what the oracle
// (popFactors, from the logs) follows: each rank's computation in phases
// 1 to 3 within popStretchTol of its design, and the load balance and
// serialisation the logs give within popDesignTol of the design's. A
// wake-up the scheduler delays or a handoff it holds up lengthens the
// run, and the oracle's ideal run with it; only a run whose shape is not
// the program's (a rank no longer the slowest, a pipeline out of step)
// misses the design.
func (m *popMeasure) gate(k popKnobs) []string {
	var bad []string
	for ph := 1; ph <= popPh; ph++ {
		for r := 0; r < popNP; r++ {
			if got, want := m.useful[ph][r], k.compute(r, ph); !popStretchTol.ok(got, want) {
				bad = append(bad, fmt.Sprintf("phase %d: rank %d computed %v, designed %v ± %v", ph, r, got, want, popStretchTol.of(want)))
			}
		}
	}
	logs := popFactors(m)
	for ph := 1; ph <= popPh; ph++ {
		lb, ser := k.designed(ph)
		got := logs[ph-1]
		if math.Abs(got.lb-lb) > popDesignTol || math.Abs(got.ser-ser) > popDesignTol {
			bad = append(bad, fmt.Sprintf("phase %d: the logs give load balance %.3f and serialisation %.3f, designed %.3f and %.3f ± %.2f",
				ph, got.lb, got.ser, lb, ser, popDesignTol))
		}
	}
	return bad
}

// designed is phase ph's load balance and serialisation by design: of
// the designed computation, over the designed longest chain.
func (k popKnobs) designed(ph int) (lb, ser float64) {
	var sum, most float64
	for r := 0; r < popNP; r++ {
		u := float64(k.compute(r, ph))
		sum += u
		most = max(most, u)
	}
	return sum / popNP / most, most / float64(k.window(ph))
}

type popRun struct {
	logDir   string
	m        popMeasure
	designed bool
	gate     []string
}

// runPop runs popphases with the knobs until its logs follow the design
// (at most attempts times), returning the closest run.
func runPop(t *testing.T, lib, exe string, k popKnobs) *popRun {
	t.Helper()
	// More ranks than cores: ranks waiting in MPI give the core away.
	env := []string{"OMPI_MCA_mpi_yield_when_idle=1"}
	var best *popRun
	for i := 1; i <= attempts; i++ {
		logDir := filepath.Join(t.TempDir(), fmt.Sprintf("logs%d", i))
		mpitest.RunEnv(t, popNP, env, lib, logDir, filepath.Dir(exe), exe, k.args()...)
		m, err := measurePop(timelines(mpitest.ReadLogs(t, logDir, popNP)))
		if err != nil {
			t.Fatal(err) // the calls are the program's: exact, whatever the load
		}
		rn := &popRun{logDir: logDir, m: m}
		rn.gate = m.gate(k)
		t.Logf("popphases (%v), attempt %d: computation by phase %v, phases 1 and 2 lasted %v and %v%s", k, i,
			m.useful[1:], time.Duration(m.to[1]-m.from[1]), time.Duration(m.to[2]-m.from[2]), gateText(rn.gate))
		if best == nil || len(rn.gate) < len(best.gate) {
			best = rn
		}
		if len(rn.gate) == 0 {
			break
		}
	}
	best.designed = len(best.gate) == 0
	if !best.designed && !mpitest.Lenient() {
		t.Fatalf("design check failed: in %d runs the logs never showed the designed timings (load average %s); closest run:\n  %s",
			attempts, mpitest.LoadAverage(), strings.Join(best.gate, "\n  "))
	}
	return best
}

func gateText(gate []string) string {
	if len(gate) == 0 {
		return ""
	}
	return "; not as designed:\n  " + strings.Join(gate, "\n  ")
}

// factors are a phase's (or the run's) POP factors, as the oracle gives them.
type factors struct {
	name              string
	lb, ser, transfer float64
}

// popFactors are the POP factors of phases 1 to 3 and of the whole run
// by their definitions, from the logs alone: load balance from each
// rank's computation, serialisation and transfer from the ideal run the
// test computes itself (popIdeal), over the window.
func popFactors(m *popMeasure) []factors {
	of := func(name string, useful []time.Duration, ideal time.Duration, window int64) factors {
		var sum, most float64
		for _, u := range useful {
			sum += float64(u)
			most = max(most, float64(u))
		}
		return factors{name, sum / float64(len(useful)) / most, most / float64(ideal), float64(ideal) / float64(window)}
	}
	var out []factors
	all := make([]time.Duration, popNP)
	for ph := 0; ph <= popPh; ph++ {
		for r := range all {
			all[r] += m.useful[ph][r]
		}
		if ph > 0 {
			out = append(out, of(fmt.Sprintf("phases[%d]", ph), m.useful[ph], m.ideal[ph], m.to[ph]-m.from[ph]))
		}
	}
	return append(out, of("run", all, m.runIdeal, m.runTo-m.runFrom))
}

// TestPOPFactors runs popphases.c, whose POP factors by phase and what
// changing it gains are known by construction, and holds the analyzer's
// pop and what_if keys, at one and two analyzer ranks, to the logs (exact
// checks: the same computation and windows, the same answers at any number
// of analyzer ranks), to the design (the factors within popFactorTol) and
// to reruns of the program changed as the what-if scenarios say (within
// popWhatIfTol of the rerun's run time).
func TestPOPFactors(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	t.Setenv("OMPI_MCA_hwloc_base_binding_policy", "none")
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "popphases.c", "-Wall", "-Wno-unused-function")
	bin := cpathBin(t)
	base := runPop(t, lib, exe, popAsDesigned)

	// The scenarios: rank 3 (the heaviest) balanced, and the computation
	// before phase 1's Allreduce halved; that call site is the report's.
	_, first := analyzeRaw(t, bin, base.logDir, analyzer{"dag", 0})
	site := ""
	for _, s := range first.CriticalPath.Segments {
		if s.Kind == "compute" && s.Op == "MPI_Allreduce" && s.Callsite != "" {
			site = s.Callsite
		}
	}
	if site == "" {
		t.Fatalf("no computation before an MPI_Allreduce on the critical path")
	}
	scenarios := []string{"balance:3", "callsite:" + site + "=0.5"}
	var args []string
	for _, s := range scenarios {
		args = append(args, "--what-if", s)
	}
	raw1, rep := analyzeRaw(t, bin, base.logDir, analyzer{"dag", 0}, args...)
	raw2, _ := analyzeRaw(t, bin, base.logDir, analyzer{"dijkstra", 2}, args...)
	samePOP(t, raw1, raw2)
	checkPOPLogs(t, rep, &base.m)
	pop := rep.POP
	for i, s := range scenarios {
		if w := rep.WhatIf[i]; w.Scenario != s {
			t.Fatalf("what_if[%d] is %q, want the scenario asked, %q", i, w.Scenario, s)
		}
	}

	// The factors, against the test's own from the logs: whatever the
	// load; then whether the run had the design's shape.
	t.Run("factors", func(t *testing.T) {
		got := map[string]*report.POPFactors{"run": &pop.POPFactors}
		for i := range pop.Phases {
			got[fmt.Sprintf("phases[%d]", pop.Phases[i].Phase)] = &pop.Phases[i].POPFactors
		}
		for _, d := range popFactors(&base.m) {
			g := got[d.name]
			if g == nil {
				t.Fatalf("no pop.%s", d.name)
			}
			nearFactors(t, "pop."+d.name, "the logs'", g, d.lb, d.ser, d.transfer, popFactorTol)
		}
		if !base.designed {
			designMissed(t, "the machine did not run popphases.c as designed (load average %s):\n  %s", mpitest.LoadAverage(), strings.Join(base.gate, "\n  "))
		}
	})

	// A --from/--to window over a phase has that phase's factors, up to
	// what the ranks did between the phase's first and their own
	// MPI_Pcontrol (a rank the scheduler kept in the Barrier before it):
	// its computation there the logs measure, and it moves the longest
	// chain by at most its longest.
	t.Run("window", func(t *testing.T) {
		for ph := 1; ph <= popPh; ph++ {
			want := &pop.Phases[ph].POPFactors
			from, to := want.WindowNs[0], want.WindowNs[1]
			_, wrep := analyzeRaw(t, bin, base.logDir, analyzer{"dag", 0}, "--from", fmt.Sprint(from), "--to", fmt.Sprint(to))
			if wrep.POP == nil || wrep.POP.Window == nil {
				t.Fatalf("--from %d --to %d: no pop.window", from, to)
			}
			got := wrep.POP.Window
			if got.WindowNs != want.WindowNs {
				t.Errorf("phase %d: pop.window.window_ns = %v, asked %v", ph, got.WindowNs, want.WindowNs)
			}
			useful := base.m.usefulIn(from+base.m.T0, to+base.m.T0)
			var sum, most, skew float64
			for r, u := range useful {
				if r >= len(got.UsefulNs) || !oracleTol.ok(time.Duration(got.UsefulNs[r]), u) {
					t.Errorf("phase %d: pop.window.useful_ns = %v, the logs' computation in the window %v", ph, got.UsefulNs, useful)
					break
				}
				sum += float64(u)
				most = max(most, float64(u))
				skew = max(skew, float64(u)-float64(base.m.useful[ph][r]))
			}
			nearFactors(t, fmt.Sprintf("phase %d's pop.window", ph), "the phase's", got, sum/float64(len(useful))/most,
				want.SerialisationEfficiency, want.TransferEfficiency, popFactorTol+skew/float64(to-from))
		}
		if rep.POP.Window != nil {
			t.Errorf("pop.window without --from/--to: %+v", rep.POP.Window)
		}
	})

	// The reruns: what the scenarios predict, against the changed program.
	heavy := pop.UsefulNs[3]
	factor := pop.AvgUsefulNs / float64(heavy)
	reruns := []struct {
		scenario string
		knobs    popKnobs
	}{
		{scenarios[0], popKnobs{3, int(math.Round(100 * factor)), 100}},
		{scenarios[1], popKnobs{popNP, 100, 50}},
	}
	for i, rr := range reruns {
		t.Run("what-if "+rr.scenario, func(t *testing.T) {
			w := rep.WhatIf[i]
			rerun := runPop(t, lib, exe, rr.knobs)
			if !base.designed || !rerun.designed {
				designMissed(t, "the machine did not run popphases.c as designed (load average %s):\n  %s", mpitest.LoadAverage(),
					strings.Join(append(base.gate, rerun.gate...), "\n  "))
			}
			_, again := analyzeRaw(t, bin, rerun.logDir, analyzer{"dag", 0})
			// From the start of phase 1 to the end of the run: what the
			// program does by design (the window before, from MPI_Init's
			// end to the first MPI_Pcontrol, waits for the slowest MPI_Init).
			part := func(p *report.POP) int64 { return p.WindowNs[1] - p.Phases[1].WindowNs[0] }
			predicted := part(pop) - w.GainNs
			got := part(again.POP)
			t.Logf("%s (%s): predicted gain %s, the rest of the run %s; the rerun (%v) took %s",
				rr.scenario, w.Description, ms(w.GainNs), ms(predicted), rr.knobs, ms(got))
			// Two runs of the program: each may have lost time to the
			// scheduler's handoffs, which the logs measure.
			held := base.m.held() + rerun.m.held()
			if d := math.Abs(float64(predicted - got)); d > popWhatIfTol*float64(got)+float64(held) {
				t.Errorf("%s: predicted %s from phase 1 to the end, the changed program took %s: %.1f%% off, more than %.0f%% and the %s the two runs lost to held-up handoffs (load average %s)",
					rr.scenario, ms(predicted), ms(got), 100*d/float64(got), 100*popWhatIfTol, held, mpitest.LoadAverage())
			}
		})
	}
}

// nearFactors holds factors f (named what) to load balance lb,
// serialisation ser and transfer tr (named by whose), each within within.
func nearFactors(t *testing.T, what, whose string, f *report.POPFactors, lb, ser, tr, within float64) {
	t.Helper()
	t.Logf("%s: load balance %.3f (%s %.3f), serialisation %.3f (%.3f), transfer %.3f (%.3f)",
		what, f.LoadBalance, whose, lb, f.SerialisationEfficiency, ser, f.TransferEfficiency, tr)
	for _, x := range []struct {
		key       string
		got, want float64
	}{{"load_balance", f.LoadBalance, lb}, {"serialisation_efficiency", f.SerialisationEfficiency, ser},
		{"transfer_efficiency", f.TransferEfficiency, tr}} {
		if math.Abs(x.got-x.want) > within {
			t.Errorf("%s.%s = %.3f, %s %.3f ± %.3f", what, x.key, x.got, whose, x.want, within)
		}
	}
}

// samePOP: the pop and what_if keys of two reports are the same.
func samePOP(t *testing.T, a, b []byte) {
	t.Helper()
	keys := func(raw []byte) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return map[string]any{"pop": m["pop"], "what_if": m["what_if"]}
	}
	if x, y := keys(a), keys(b); !reflect.DeepEqual(x, y) {
		t.Errorf("pop and what_if differ between one analyzer rank (dag) and two (dijkstra):\n%v\n%v", x, y)
	}
}

// checkPOPLogs holds the report's pop key to what the logs say, whatever
// the machine's load: the phases and their levels, each rank's useful
// computation and the windows (as the logs measure them, up to the
// analyzer's clock corrections), the factors' identities; and each
// what-if's prediction to its gain.
func checkPOPLogs(t *testing.T, rep *report.Report, m *popMeasure) {
	t.Helper()
	pop := rep.POP
	if pop == nil {
		t.Fatal("no pop key")
	}
	if len(pop.Phases) != popPh+1 {
		t.Fatalf("pop.phases: %d, want %d (phase 0 and one per MPI_Pcontrol)", len(pop.Phases), popPh+1)
	}
	at := func(ns int64) string { return ms(ns - m.T0) }
	check := func(what string, f *report.POPFactors, useful []time.Duration, from, to int64) {
		for r, u := range useful {
			if r >= len(f.UsefulNs) || !oracleTol.ok(time.Duration(f.UsefulNs[r]), u) {
				t.Errorf("%s.useful_ns = %v, the logs measure %v", what, f.UsefulNs, useful)
				break
			}
		}
		near := func(a, b int64) bool { return time.Duration(max(a-b, b-a)) <= popClockTol }
		if !near(f.WindowNs[0], from-m.T0) || !near(f.WindowNs[1], to-m.T0) {
			t.Errorf("%s.window_ns = [%s, %s], the logs' [%s, %s]", what, ms(f.WindowNs[0]), ms(f.WindowNs[1]), at(from), at(to))
		}
		if f.RuntimeNs != f.WindowNs[1]-f.WindowNs[0] {
			t.Errorf("%s.runtime_ns = %d, not the window's length", what, f.RuntimeNs)
		}
		for _, id := range []struct {
			name      string
			got, want float64
		}{{"communication_efficiency", f.CommunicationEfficiency, f.SerialisationEfficiency * f.TransferEfficiency},
			{"parallel_efficiency", f.ParallelEfficiency, f.LoadBalance * f.CommunicationEfficiency}} {
			if math.Abs(id.got-id.want) > 1e-9 {
				t.Errorf("%s.%s = %g, want %g", what, id.name, id.got, id.want)
			}
		}
	}
	var all []time.Duration
	for r := 0; r < popNP; r++ {
		var u time.Duration
		for ph := range m.useful {
			u += m.useful[ph][r]
		}
		all = append(all, u)
	}
	check("pop", &pop.POPFactors, all, m.runFrom, m.runTo)
	for ph := range pop.Phases {
		p := &pop.Phases[ph]
		want := "none"
		if ph > 0 {
			want = fmt.Sprint(ph)
		}
		if got := fmt.Sprint(deref(p.Level)); p.Phase != ph || got != want {
			t.Errorf("pop.phases[%d]: phase %d, level %s; want %d, %s", ph, p.Phase, got, ph, want)
		}
		check(fmt.Sprintf("pop.phases[%d]", ph), &p.POPFactors, m.useful[ph], m.from[ph], m.to[ph])
	}
	fixes := 0
	for _, w := range rep.WhatIf {
		if w.RuntimeNs+w.GainNs != rep.CriticalPath.LengthNs {
			t.Errorf("what_if %s: runtime %s + gain %s is not the run's longest path %s", w.Scenario, ms(w.RuntimeNs), ms(w.GainNs), ms(rep.CriticalPath.LengthNs))
		}
		if w.Fix {
			fixes++
		}
	}
	if fixes != 3 {
		t.Errorf("%d stretches to fix among the default what-ifs, want 3", fixes)
	}
}

func deref(p *int32) any {
	if p == nil {
		return "none"
	}
	return *p
}
