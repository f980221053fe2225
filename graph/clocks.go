package graph

// The clock correction: every call moved forward by the least that
// satisfies its dependencies, in rounds across the analyzer ranks.

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/par"
)

// causeStart is when dependency d's cause starts now.
func (b *builder) causeStart(d *dep) int64 {
	if b.local(d.cause) {
		lc := d.cause - b.p.CallLo
		if b.t != nil {
			return b.t.start(lc)
		}
		return b.lg.Start[lc]
	}
	return b.cache[d.slot]
}

func (b *builder) endOf(lc int32) int64 {
	if b.t != nil {
		return b.t.end(lc)
	}
	return b.lg.End[lc]
}

// correctClocks enforces the clock condition (docs/analysis.md §3) in
// rounds across the analyzer ranks (clockRounds), then drops the
// dependencies that still do not hold, and notes what it did. Every
// correction only moves times forward, by the least that satisfies a
// dependency, so the order does not change the result: the least times
// that satisfy them all.
func (b *builder) correctClocks() error {
	p := b.p
	asked, err := b.askCauseStarts()
	if err != nil {
		return err
	}
	if err := b.clockRounds(asked); err != nil {
		return err
	}
	n, err := b.dropContradictions()
	if err != nil {
		return err
	}
	if p.ClockCorrections > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("clock error: on the synchronised clocks, %d dependencies ran backwards (a call ended before something it needed started), by at most %v; those calls were moved later, with what followed them",
			p.ClockCorrections, time.Duration(p.ClockShiftMax)))
	}
	if n > 0 {
		p.Inconsistent = int(n)
		p.Notes = append(p.Notes, fmt.Sprintf("%d dependencies contradict the logs' order (inconsistent matching); left out of the graph", n))
	}
	if p.ClockViolations > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d receives ended before their send started (clock error above the message latency); corrected", p.ClockViolations))
	}
	return nil
}

// askCauseStarts asks the owners of remote causes for their starts, once;
// each round they send them in the same order (refreshCauseStarts). It
// returns, by owner, the dependencies waiting for its answers, and keeps
// in b.wanted the owned calls each rank asked for.
func (b *builder) askCauseStarts() (asked [][]int32, err error) {
	p, size := b.p, b.c.Size()
	asked = make([][]int32, size)
	req := make([][]int32, size)
	for i := range b.deps {
		d := &b.deps[i]
		if !b.local(d.cause) {
			q := p.Owner(d.cause)
			asked[q] = append(asked[q], int32(i))
			req[q] = append(req[q], d.cause)
		}
	}
	send := make([][]byte, size)
	for q := range req {
		send[q] = mpix.Bytes(req[q])
	}
	got, err := b.c.Alltoallv(send)
	if err != nil {
		return nil, err
	}
	b.wanted = make([][]int32, size)
	for q, bs := range got {
		ids, err := mpix.FromBytes[int32](bs)
		if err != nil {
			return nil, err
		}
		for k := range ids {
			ids[k] -= p.CallLo
		}
		b.wanted[q] = ids
	}
	return asked, nil
}

// refreshCauseStarts sends every rank the current starts of the owned
// calls it asked for, and puts those of the remote causes into the cache.
func (b *builder) refreshCauseStarts(asked [][]int32) error {
	out := make([][]byte, b.c.Size())
	for q, ids := range b.wanted {
		ts := make([]int64, len(ids))
		for k, lc := range ids {
			if b.t != nil {
				ts[k] = b.t.start(lc)
			} else {
				ts[k] = b.lg.Start[lc]
			}
		}
		out[q] = mpix.Bytes(ts)
	}
	got, err := b.c.Alltoallv(out)
	if err != nil {
		return err
	}
	starts, err := mpix.Answers[int64](got, func(q int) int { return len(asked[q]) }, "clock exchange")
	if err != nil {
		return err
	}
	for q, ts := range starts {
		for k, i := range asked[q] {
			b.cache[b.deps[i].slot] = ts[k]
		}
	}
	return nil
}

// maxClockRounds bounds the correction's rounds, and each round's passes.
const maxClockRounds = 50

// clockCorrection is the state of the correction's passes over the
// dependencies.
type clockCorrection struct {
	b         *builder
	asked     [][]int32 // by owner, the dependencies on its calls
	backwards []int32   // the dependencies that ran backwards at first
	byBlock   *depIndex // the dependencies by their cause's block, made at the first pass that needs it
	tick      int64     // the pass: the shifter lists the blocks it moves at each
}

// clockRounds moves calls until every dependency holds: each rank
// corrects its own calls against the causes' starts it knows until
// nothing moves, then the ranks that moved calls send the new starts to
// the ranks whose dependencies name them, until no rank moves any.
//
// Times only grow, so a dependency met stays met until its cause starts
// later: after a round's first pass, a pass checks only those whose cause
// is owned and was moved in the pass before, found through byBlock:
// scanning every dependency in each pass took 0.8 s of the 16 M-call halo
// log's analysis. A round's first pass checks every dependency, or, when
// the round before settled, only those on other ranks' causes, whose
// starts the refresh brought. The order in which the passes meet the
// dependencies does not change the result: times only grow, each raise to
// the least that meets its dependency, so the passes end in the least
// times that meet them all.
func (b *builder) clockRounds(asked [][]int32) error {
	backwards, err := b.countBackwards()
	if err != nil {
		return err
	}
	cc := &clockCorrection{b: b, asked: asked, backwards: backwards}
	settled := false // the last round's passes ended with one that moved nothing
	for round := 0; round < maxClockRounds; round++ {
		changed := false
		full := !settled // a pass over every dependency first
		settled = false
		for pass := 0; pass < maxClockRounds; pass++ {
			cc.tick++
			if !cc.pass(round, pass, full) {
				settled = true
				break
			}
			changed = true
		}
		anyMoved, err := mpix.Any(b.c, changed)
		if err != nil {
			return err
		}
		if !anyMoved {
			break
		}
		// Every round that moved a call ends with a refresh, so the cache
		// is current whichever way the loop ends.
		if err := b.refreshCauseStarts(asked); err != nil {
			return err
		}
	}
	if b.t != nil {
		b.t.flush()
		b.t = nil
	}
	return nil
}

// check raises dependency i's completion to its cause's start if it ran
// backwards, and says whether it did.
func (cc *clockCorrection) check(i int32) bool {
	b := cc.b
	d := &b.deps[i]
	need := b.causeStart(d)
	if b.endOf(d.done) >= need {
		return false
	}
	if b.t == nil {
		b.t = newShifter(b.lg)
	}
	b.t.raise(d.done, need, cc.tick)
	return true
}

// pass checks the dependencies that pass of round must (see clockRounds)
// and says whether it moved a call.
func (cc *clockCorrection) pass(round, pass int, full bool) bool {
	b := cc.b
	moved := false
	switch {
	case pass == 0 && round == 0:
		// Only a dependency that runs backwards can move a call, and one
		// that does not stays so until its cause moves, which the passes
		// after this one follow: checking the ones countBackwards found,
		// not all, is the same pass, and on logs whose clocks agree an
		// empty one.
		for _, i := range cc.backwards {
			moved = cc.check(i) || moved
		}
	case pass == 0 && full:
		for i := range b.deps {
			// A hold is read from the times, not imposed on them.
			if b.deps[i].rule.imposed() {
				moved = cc.check(int32(i)) || moved
			}
		}
	case pass == 0:
		// The round before settled every dependency on an owned cause;
		// the refresh may have moved the others' causes.
		for _, ids := range cc.asked {
			for _, i := range ids {
				if b.deps[i].rule.imposed() {
					moved = cc.check(i) || moved
				}
			}
		}
	default:
		if cc.byBlock == nil {
			cc.byBlock = b.depsByCauseBlock()
		}
		// The blocks the last pass moved; this pass's own moves are the
		// next pass's.
		blocks := slices.Clone(b.t.touchedAt(cc.tick - 1))
		for _, blk := range blocks {
			for _, i := range cc.byBlock.at(blk) {
				moved = cc.check(i) || moved
			}
		}
	}
	return moved
}

// dropContradictions marks the dependencies the corrected times still do
// not meet as dropped (and the holds whose evidence they no longer show),
// and returns how many imposed ones were, over all ranks.
func (b *builder) dropContradictions() (int64, error) {
	parts := par.Bounds(len(b.deps), 4*runtime.GOMAXPROCS(0))
	bad := make([]int64, len(parts)-1)
	par.Do(len(bad), func(k int) {
		for i := parts[k]; i < parts[k+1]; i++ {
			d := &b.deps[i]
			switch d.rule {
			case RuleProgress:
				// A hold whose evidence the corrected times no longer show
				// (strictly: the receiver's call began before the send
				// ended, which also keeps it from closing a cycle) is not
				// one.
				d.dropped = b.lg.End[d.done] <= b.causeStart(d)
				continue
			case RuleObserved:
				d.dropped = b.lg.End[d.done] < b.causeStart(d)
				continue
			}
			if b.lg.End[d.done] < b.causeStart(d) {
				d.dropped = true
				bad[k]++
			}
		}
	})
	total := int64(0)
	for _, k := range bad {
		total += k
	}
	return mpix.AllreduceOne(b.c, total, mpix.Sum)
}

// countBackwards counts, before the clock correction, the dependencies
// it imposes (all but the holds) whose completion ends before the cause
// starts on the synchronised clocks, and the largest such gap: what the
// logs' times say, the same whatever order the correction then takes and
// at any number of analyzer ranks (the causes' starts in the cache are
// still the logs'). It returns this rank's, in order: the ones the
// correction starts from.
func (b *builder) countBackwards() ([]int32, error) {
	parts := par.Bounds(len(b.deps), 4*runtime.GOMAXPROCS(0))
	found, gap := make([][]int32, len(parts)-1), make([]int64, len(parts)-1)
	par.Do(len(found), func(k int) {
		for i := parts[k]; i < parts[k+1]; i++ {
			d := &b.deps[i]
			if g := b.causeStart(d) - b.lg.End[d.done]; d.rule.imposed() && g > 0 {
				found[k] = append(found[k], int32(i))
				gap[k] = max(gap[k], g)
			}
		}
	})
	backwards := slices.Concat(found...)
	x := []int64{int64(len(backwards)), -slices.Max(append(gap, 0))}
	if err := b.c.Allreduce(x[:1], mpix.Sum); err != nil {
		return nil, err
	}
	if err := b.c.Allreduce(x[1:], mpix.Min); err != nil {
		return nil, err
	}
	b.p.ClockCorrections, b.p.ClockShiftMax = x[0], -x[1]
	return backwards, nil
}

// depIndex lists dependencies by block of calls: at(blk) are their
// indices in builder.deps.
type depIndex struct {
	start []int32 // by block, into deps; one more for the end
	deps  []int32
}

func (x *depIndex) at(blk int32) []int32 { return x.deps[x.start[blk]:x.start[blk+1]] }

// depsByCauseBlock indexes the dependencies the clock correction imposes
// (all but the holds) whose cause is owned, by the cause's block of
// calls (shifter's blocks), each block's in dependency order.
func (b *builder) depsByCauseBlock() *depIndex {
	nb := len(b.lg.Op)>>shiftBits + 1
	x := &depIndex{start: make([]int32, nb+1)}
	for i := range b.deps {
		if d := &b.deps[i]; d.rule.imposed() && b.local(d.cause) {
			x.start[(d.cause-b.p.CallLo)>>shiftBits+1]++
		}
	}
	for k := 0; k < nb; k++ {
		x.start[k+1] += x.start[k]
	}
	x.deps = make([]int32, x.start[nb])
	fill := slices.Clone(x.start[:nb])
	for i := range b.deps {
		if d := &b.deps[i]; d.rule.imposed() && b.local(d.cause) {
			blk := (d.cause - b.p.CallLo) >> shiftBits
			x.deps[fill[blk]] = int32(i)
			fill[blk]++
		}
	}
	return x
}

// wrongOrder marks the messages (by index in b.msgs) whose receiver got
// them after a message sent to it strictly earlier was received, as
// Build's wrongOrder does; nil if none.
func (b *builder) wrongOrder() bitset {
	type sent struct {
		t, recvEnd int64
		m          int32
	}
	// The messages come by key, each key's in posting order: runs of one
	// destination whose sends start in order. Runs are merged per
	// destination instead of sorting all messages.
	type run struct{ dst, lo, hi int32 }
	items := make([]sent, len(b.msgs))
	var runs []run
	for k := range b.msgs {
		m := &b.msgs[k]
		items[k] = sent{b.causeStart(&b.deps[k]), b.lg.End[m.recvDone-b.p.CallLo], int32(k)}
		dst := int32(b.lg.rank(m.recvDone - b.p.CallLo))
		if n := len(runs); n > 0 && runs[n-1].dst == dst && items[k-1].t <= items[k].t {
			runs[n-1].hi++
		} else {
			runs = append(runs, run{dst, int32(k), int32(k) + 1})
		}
	}
	slices.SortStableFunc(runs, func(x, y run) int { return cmp.Compare(x.dst, y.dst) })
	var wrong bitset
	var order []sent
	var heads []run
	for i := 0; i < len(runs); {
		j := i
		for j < len(runs) && runs[j].dst == runs[i].dst {
			j++
		}
		// This destination's messages in send start order.
		order, heads = order[:0], append(heads[:0], runs[i:j]...)
		if len(heads) > 16 {
			for _, r := range heads {
				order = append(order, items[r.lo:r.hi]...)
			}
			slices.SortFunc(order, func(x, y sent) int { return cmp.Compare(x.t, y.t) })
		} else {
			for len(heads) > 0 {
				k := 0
				for h := 1; h < len(heads); h++ {
					if items[heads[h].lo].t < items[heads[k].lo].t {
						k = h
					}
				}
				order = append(order, items[heads[k].lo])
				if heads[k].lo++; heads[k].lo == heads[k].hi {
					heads[k] = heads[len(heads)-1]
					heads = heads[:len(heads)-1]
				}
			}
		}
		i = j
		// Messages whose sends started at the same time were not sent one
		// before the other: each is compared with those sent strictly
		// earlier.
		latest := int64(-1 << 62)
		for k := 0; k < len(order); {
			t0 := order[k].t
			l := k
			groupLatest := latest
			for ; l < len(order) && order[l].t == t0; l++ {
				if latest > order[l].recvEnd {
					if wrong == nil {
						wrong = newBitset(len(b.msgs))
					}
					wrong.set(int(order[l].m))
				}
				groupLatest = max(groupLatest, order[l].recvEnd)
			}
			latest = groupLatest
			k = l
		}
	}
	return wrong
}
