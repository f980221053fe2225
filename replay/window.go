package replay

import "github.com/cpath/cpath/internal/mpix"

// The window (Options.Window, the report's --from/--to) is a stretch of
// the run whose POP factors are wanted as well as the run's and the
// phases'. Its useful computation is each rank's time outside MPI inside
// both the window and the rank's own MPI_Init to MPI_Finalize; its ideal
// run is the longest path of that computation among the events inside
// the window. A stretch of computation that crosses the window's edge
// counts with its part inside, in both.

// windowInfo is what a part knows of one of its ranks in the window.
type windowInfo struct {
	Useful int64
	// Entries are the stretches of computation into S(Call) inside the
	// window from E of a call before it, exits those from E(Call) inside
	// it to S of a call after it: their parts inside the window.
	Entries, Exits []clipped
	// Span is the part inside of a stretch over the whole window.
	Span int64
}

// clipped is a stretch of computation's part inside the window.
type clipped struct {
	Call int32
	Ns   int64
}

// clip adds the program edge of weight wt from E(a) at tE into S(c) at tS
// to the rank's window info: the window [from, to] (global ns), the
// rank's own [lo, hi] within it. It returns the edge's part inside.
func (wi *windowInfo) clip(a, c int32, tE, tS, wt, from, to, lo, hi int64) int64 {
	in := min(tS, hi) - max(tE, lo)
	if in <= 0 {
		return 0
	}
	in = min(in, wt)
	wi.Useful += in
	srcIn, dstIn := tE >= from && tE <= to, tS >= from && tS <= to
	switch {
	case !srcIn && dstIn:
		wi.Entries = append(wi.Entries, clipped{c, in})
	case srcIn && !dstIn:
		wi.Exits = append(wi.Exits, clipped{a, in})
	case !srcIn && !dstIn:
		wi.Span = max(wi.Span, in)
	}
	return in
}

// windowRun is a part's window: its ranks' stretches across its edges
// (which of its calls start and end in it are the calls' attributes).
type windowRun struct {
	from, to       int64 // global ns
	entries, exits map[int32]int64
	span           int64
}

// newWindowRun takes in the part's ranks' stretches across the window's
// edges.
func newWindowRun(from, to int64, infos []rankInfo) *windowRun {
	wr := &windowRun{from: from, to: to, entries: map[int32]int64{}, exits: map[int32]int64{}}
	for _, ri := range infos {
		wi := ri.win
		if wi == nil {
			continue
		}
		for _, x := range wi.Entries {
			wr.entries[x.Call] = max(wr.entries[x.Call], x.Ns)
		}
		for _, x := range wi.Exits {
			wr.exits[x.Call] = max(wr.exits[x.Call], x.Ns)
		}
		wr.span = max(wr.span, wi.Span)
	}
	return wr
}

// solveWindow is the ideal run inside the window: the longest path under
// rule r (the POP ideal) over the vertices inside it, starting afresh at
// the window's start (with the part inside of the stretches entering it)
// and ending at its end (with the part inside of those leaving it). A hub
// is inside with its first member. The same on every rank.
func (w *sweeper) solveWindow(r *rule, wr *windowRun) (int64, error) {
	rows := w.rows
	in, exitIn, err := w.attribute(func(pos int32) int64 {
		flag := uint8(attrEndIn)
		if w.rows.Vertex(pos)&1 == 0 {
			flag = attrStartIn
		}
		return b2i(w.attr(pos).Flags&flag != 0)
	}, 0)
	if err != nil {
		return 0, err
	}
	vals, err := w.restartSweep(r, func(k, l, e, i int32) bool {
		if i < 0 {
			return exitIn[k-1] != 0
		}
		return in[i] != 0
	}, func(l int32) int64 {
		if in[l] == 0 {
			return none
		}
		if v := rows.Vertex(l); v < 2*w.calls && v&1 == 0 {
			return wr.entries[v>>1] // 0 if none
		}
		return 0
	})
	if err != nil {
		return 0, err
	}
	off, err := w.compose(vals)
	if err != nil {
		return 0, err
	}
	longest := []int64{wr.span}
	w.eachFrame(func(k, l int32) {
		if in[l] == 0 {
			return
		}
		d := join(off[k], vals[2*l], vals[2*l+1])
		longest[0] = max(longest[0], d)
		if v := rows.Vertex(l); v < 2*w.calls && v&1 == 1 {
			if x, ok := wr.exits[v>>1]; ok {
				longest[0] = max(longest[0], d+x)
			}
		}
	})
	err = w.c.Allreduce(longest, mpix.Max)
	return longest[0], err
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
