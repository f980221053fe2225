//go:build mpi

package e2e

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/cpath/cpath/report"
)

// checkDesign holds a report of a run that followed its design to the
// design: the ranks the critical path computes on, in order, and how long;
// every wait state in all, per rank, per operation and per communicator;
// the designed collective instances.
func checkDesign(t *testing.T, d *design, rn *run, rep *report.Report) {
	t.Helper()
	p := rn.prof
	segs := globalSegments(rep, p)

	// The ranks the path computes on, in order: the designed stretches (at
	// least half the shortest designed one) after the aligning calls.
	var order []int
	loopCompute := make([]time.Duration, d.np)
	var preCompute time.Duration
	for _, s := range segs {
		if s.Kind != "compute" || s.Rank < 0 || s.Rank >= d.np {
			continue
		}
		l := time.Duration(s.EndNs - s.StartNs)
		if s.StartNs < p.LoopStart {
			preCompute += l
			continue
		}
		loopCompute[s.Rank] += l
		if l >= d.stretch/2 && (len(order) == 0 || order[len(order)-1] != s.Rank) {
			order = append(order, s.Rank)
		}
	}
	if !reflect.DeepEqual(order, collapse(d.order)) {
		t.Errorf("the critical path computes on ranks %v in turn, designed %v", order, collapse(d.order))
	}

	// The computation on the path per rank: as designed, and as the logs
	// measured the stretches the design puts on it.
	for r := 0; r < d.np; r++ {
		measured := measuredOnPath(d, rn, r)
		want := d.pathCompute[r]
		t.Logf("rank %d: computation on the critical path after the aligning calls %s, designed %v, measured %s",
			r, ms(int64(loopCompute[r])), want, ms(int64(measured)))
		if !d.tol.ok(loopCompute[r], want) {
			t.Errorf("computation on the critical path on rank %d (after the aligning calls) = %s, designed %v ± %v",
				r, ms(int64(loopCompute[r])), want, d.tol.of(want))
		}
		if pt := (tolerance{Rel: 0.02, Abs: time.Millisecond}); !pt.ok(loopCompute[r], measured) {
			t.Errorf("computation on the critical path on rank %d (after the aligning calls) = %s, the logs measure %s for the designed stretches ± %v",
				r, ms(int64(loopCompute[r])), ms(int64(measured)), pt.of(measured))
		}
	}
	if lim := p.PreMax + time.Millisecond; preCompute > lim {
		t.Errorf("computation on the critical path before the aligning calls = %v, but no rank computed more than %v there", preCompute, p.PreMax)
	}

	checkDesignWaits(t, d, rn, &rep.Waitstates)
	checkDesignColls(t, d, rep.Calls)
}

// checkDesignWaits checks the wait states against the design. Waits in
// MPI_Init (a barrier: how unevenly the ranks were launched) and in the
// aligning Barriers (how unevenly they left MPI_Init) are measured in the
// logs and added to it.
func checkDesignWaits(t *testing.T, d *design, rn *run, ws *report.Waitstates) {
	t.Helper()
	total := copyWaits(d.waits)
	byRank := make([]waits, d.np)
	byOp, byComm := map[string]waits{}, map[string]waits{}
	for k, v := range d.waitsByOp {
		byOp[k] = copyWaits(v)
	}
	for k, v := range d.waitsByComm {
		byComm[k] = copyWaits(v)
	}
	for r := 0; r < d.np; r++ {
		byRank[r] = copyWaits(d.waitsByRank[r])
		for _, c := range rn.tl[r][:min(d.align+1, len(rn.tl[r]))] {
			w := rn.orc.wait[[2]int{r, c.Idx}]
			if w.ns == 0 {
				continue
			}
			v, op := time.Duration(w.ns), c.Op.String()
			total[w.kind] += v
			byRank[r][w.kind] += v
			addWaits(byOp, op, w.kind, v)
			addWaits(byComm, w.comm, w.kind, v)
		}
	}
	designed := func(what string, got map[string]int64, want waits) {
		for _, k := range waitKinds {
			if g, w := time.Duration(got[k]), want[k]; !d.tol.ok(g, w) {
				t.Errorf("waitstates%s.%s_ns = %s, designed %v ± %v", what, k, ms(got[k]), w, d.tol.of(w))
			}
		}
	}
	designed("", kindsOfTotals(ws), total)
	repRank := breakdowns(t, ws.ByRank)
	for r := 0; r < d.np; r++ {
		designed(fmt.Sprintf(".by_rank[%d]", r), repRank[strconv.Itoa(r)], byRank[r])
	}
	for _, part := range []struct {
		name string
		got  map[string]map[string]int64
		want map[string]waits
	}{{"by_op", breakdowns(t, ws.ByOp), byOp}, {"by_comm", breakdowns(t, ws.ByComm), byComm}} {
		keys := map[string]bool{}
		for k := range part.got {
			keys[k] = true
		}
		for k, w := range part.want {
			keys[k] = true
			var all time.Duration
			for _, v := range w {
				all += v
			}
			if _, ok := part.got[k]; !ok && all > d.tol.Abs {
				t.Errorf("waitstates.%s has no key %q (designed %s)", part.name, k, fmtWaits(w))
			}
		}
		for _, k := range sortedKeys(keys) {
			designed(fmt.Sprintf(".%s[%s]", part.name, k), part.got[k], part.want[k])
		}
	}
}

// checkDesignColls checks the designed collective instances in calls[].
func checkDesignColls(t *testing.T, d *design, calls []report.Collective) {
	t.Helper()
	lim := &limiter{t: t, max: 3}
	defer lim.flush()
	tol := instanceTol(d)
	for _, cd := range d.colls {
		var inst []report.Collective
		for _, c := range calls {
			if c.Op == cd.op && c.Comm == cd.comm {
				inst = append(inst, c)
			}
		}
		sort.Slice(inst, func(i, j int) bool { return inst[i].Seq < inst[j].Seq })
		if len(inst) != cd.skip+cd.n {
			t.Errorf("calls: %d instances of %s on %s, want %d", len(inst), cd.op, cd.comm, cd.skip+cd.n)
			if len(inst) < cd.skip+cd.n {
				continue
			}
		}
		for i, c := range inst[cd.skip : cd.skip+cd.n] {
			what := fmt.Sprintf("calls[%s on %s, seq %d]", cd.op, cd.comm, c.Seq)
			if c.Members != cd.members {
				lim.errorf("members", "%s.members = %d, designed %d", what, c.Members, cd.members)
			}
			if cd.lastRank != nil && c.LastRank != cd.lastRank(i) {
				lim.errorf("last_rank", "%s.last_rank = %d, designed %d", what, c.LastRank, cd.lastRank(i))
			}
			if got := time.Duration(c.WaitBeforeNs); !tol.ok(got, cd.waitBefore) {
				lim.errorf("wait_before", "%s.wait_before_ns = %s, designed %v ± %v", what, ms(c.WaitBeforeNs), cd.waitBefore, tol.of(cd.waitBefore))
			}
		}
		if len(inst) > cd.skip {
			c := inst[cd.skip]
			t.Logf("%s on %s: %d instances; first designed one: seq %d, last rank %d, wait before %s, after %s, execution %s",
				cd.op, cd.comm, len(inst), c.Seq, c.LastRank, ms(c.WaitBeforeNs), ms(c.WaitAfterNs), ms(c.ExecutionNs))
		}
	}
}
