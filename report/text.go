package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText writes the report for people: where the critical path runs,
// what is lost to imbalance and waiting, and the per-process table. Tables
// show at most top rows.
func WriteText(w io.Writer, r *Report, top int) {
	if top <= 0 {
		top = 10
	}
	writeHead(w, r)
	writePathTables(w, &r.CriticalPath, r.Run.CallPaths, top)
	if r.Run.NoGraph {
		fmt.Fprintf(w, "\n%s.\n", NoGraphNote)
	} else {
		writeReplay(w, r, top)
		writeWaitstates(w, &r.Waitstates, top)
		writeCollectives(w, r, top)
		writeTraffic(w, r, top)
		writeProcesses(w, r, top)
	}
	if r.Run.ClockViolations > 0 || r.Run.Unmatched > 0 || len(r.Run.Skipped) > 0 {
		fmt.Fprintln(w, "\nNotes:")
		for _, s := range r.Run.Skipped {
			fmt.Fprintf(w, "  - %s\n", s)
		}
	}
}

// writeHead writes what was analysed, the path's length and how the
// analysis ran.
func writeHead(w io.Writer, r *Report) {
	cp := &r.CriticalPath
	callCount := fmt.Sprintf("%d MPI calls", r.Run.Calls)
	if p := r.Run.CoalescedPolls; p > 0 {
		// The count cpath info gives, and the calls the analysis took.
		callCount = fmt.Sprintf("%d MPI calls (taken as %d: each run of unproductive polls as one)", int64(r.Run.Calls)+p, r.Run.Calls)
	}
	messages := fmt.Sprintf("%d messages", r.Run.Messages)
	if r.Run.NoGraph {
		messages = "messages not matched"
	}
	fmt.Fprintf(w, "run %s: %d ranks, %s, %s, run time %s\n", r.Run.LogDir, r.Run.Ranks, callCount, messages, ns(r.RuntimeNs))
	fmt.Fprintf(w, "critical path (%s): %s, %d segments; run time %s; difference %s (clock error)\n",
		cp.Algo, ns(cp.LengthNs), len(cp.Segments), ns(r.RuntimeNs), ns(cp.DiffNs))
	if win := cp.WindowNs; len(win) == 2 {
		var in int64
		for _, s := range cp.Segments {
			in += s.EndNs - s.StartNs
		}
		fmt.Fprintf(w, "window %s to %s (--from/--to): the critical path's tables cover its %d segments in it (%s), clipped to it\n",
			ns(win[0]), ns(win[1]), len(cp.Segments), ns(in))
	}
	writeUnclassified(w, cp)
	if a := cp.Analyzer; a != nil {
		fmt.Fprintf(w, "analyzer: %d ranks, %d exchange rounds, %d bytes shipped by the algorithm", a.Ranks, a.Rounds, a.BytesSent)
		if a.RawBytes > 0 {
			fmt.Fprintf(w, " (%d before compression)", a.RawBytes)
		}
		if a.Splits > 0 {
			fmt.Fprintf(w, ", %d splits", a.Splits)
		}
		if r.Run.NoGraph {
			fmt.Fprintf(w, "; %d bytes to read the calls", a.BuildBytes)
		} else {
			fmt.Fprintf(w, "; %d bytes to build the graph", a.BuildBytes)
		}
		if a.Edges > 0 {
			fmt.Fprintf(w, "; %.2f relaxations per edge", a.RelaxationsPerEdge)
		}
		if a.Frames {
			fmt.Fprint(w, "; swept by frame")
		}
		fmt.Fprintln(w)
	}
	if cp.Agreement != nil {
		fmt.Fprintf(w, "agreement with the exact path (%s): %s of its time on the same rank and segment\n", cp.Analyzer.ExactAlgo, pct(*cp.Agreement))
	}
	fmt.Fprintln(w)

}

// writePathTables writes where the critical path runs: by rank, by
// operation and, for its computation, by call site.
func writePathTables(w io.Writer, cp *CriticalPath, callPaths bool, top int) {
	fmt.Fprintln(w, "Where the critical path runs, by rank:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// The I/O column only where the path has I/O: runs without MPI-IO keep
	// their table.
	io := slices.ContainsFunc(cp.ByRank, func(b RankShare) bool { return b.IONs > 0 })
	ioHead, ioCell := "", func(RankShare) string { return "" }
	if io {
		ioHead, ioCell = "I/O\t", func(b RankShare) string { return ns(b.IONs) + "\t" }
	}
	fmt.Fprintln(tw, "rank\tlaunch\tcomputation\tin MPI\t"+ioHead+"transfers\tshare\t")
	ranks := slices.Clone(cp.ByRank)
	slices.SortFunc(ranks, func(a, b RankShare) int { return cmpF(b.Share, a.Share) })
	for i, b := range ranks {
		if i == top {
			fmt.Fprintf(tw, "(%d more)\t\t\t\t\t\t\n", len(ranks)-top)
			break
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s%s\t%s\t\n", b.Rank, ns(b.LaunchNs), ns(b.ComputeNs), ns(b.MPINs), ioCell(b), ns(b.TransferNs), pct(b.Share))
	}
	tw.Flush()

	fmt.Fprintln(w, "\nBy operation (computation is time between MPI calls, launch before a rank's first):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "operation\ttime\tshare\tsegments\t")
	for i, o := range cp.ByOp {
		if i == top {
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t\n", o.Op, ns(o.Ns), pct(o.Share), o.Count)
	}
	tw.Flush()

	// The longest stretches of computation on the path, by call site.
	if len(cp.ByCallsite) > 0 {
		fmt.Fprintln(w, "\nComputation on the critical path, by rank and the call that ends it:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "rank\tbefore the call at\tends in\ttime\tshare\tstretches\t")
		for i, s := range cp.ByCallsite {
			if i == top {
				break
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t\n", s.Rank, callsiteRow(s), strings.Join(s.Ops, ", "),
				ns(s.Ns), pct(s.Share), s.Stretches)
		}
		tw.Flush()
		if !callPaths {
			fmt.Fprintln(w, "\n(the sites of the MPI calls themselves: if the program calls MPI through a layer of its own,\n"+
				" record with CPATH_CALLDEPTH=4 and this table names the callers behind it, see --wrapper)")
		}
	}

}

// writeWaitstates writes the wait states and the ranks that waited most.
func writeWaitstates(w io.Writer, ws *Waitstates, top int) {
	const partLS, partLR = "  of which partitioned: for the last MPI_Pready", "  of which partitioned: receive started late"
	const lp, ew, lc = "Late Post", "Early Wait", "  of which Late Complete (after the last transfer)"
	const fl = "In MPI_Win_flush… (one-sided operations completing)"
	fmt.Fprintln(w, "\nWait states (time ranks spent waiting for each other):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, x := range []struct {
		name string
		v    int64
	}{{"Late Sender", ws.LateSenderNs}, {"  of which messages in wrong order", ws.WrongOrderNs},
		{partLS, ws.PartitionedLateSenderNs}, {"Late Receiver", ws.LateReceiverNs},
		{"  synchronous or rendezvous send (or MPI_Buffer_detach), receive posted late", ws.LateReceiverSynchronousNs},
		{"  send held until the receiver entered MPI (progress)", ws.LateReceiverProgressNs},
		{partLR, ws.PartitionedLateReceiverNs},
		{"Wait at Barrier", ws.WaitAtBarrierNs}, {"Wait at N x N", ws.WaitAtNxNNs}, {"Late Broadcast", ws.LateBroadcastNs}, {"Early Reduce", ws.EarlyReduceNs},
		{"Wait at Fence", ws.WaitAtFenceNs}, {lp, ws.LatePostNs}, {ew, ws.EarlyWaitNs}, {lc, ws.LateCompleteNs}, {fl, ws.RMAFlushNs}} {
		if x.v == 0 && (x.name == "Wait at Fence" || x.name == partLS || x.name == partLR || x.name == lp || x.name == ew || x.name == lc || x.name == fl) {
			continue // runs without one-sided synchronisation or partitioned communication keep their table
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", x.name, ns(x.v))
	}
	tw.Flush()
	byRank := slices.Clone(ws.ByRank)
	slices.SortFunc(byRank, func(a, b WaitBreakdown) int { return cmpI(waitSum(b), waitSum(a)) })
	if len(byRank) > 0 && waitSum(byRank[0]) > 0 {
		fmt.Fprintln(w, "\nRanks that waited most:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		// The fence column only where a rank waited in MPI_Win_fence.
		fenceHead, fenceCell := "", func(WaitBreakdown) string { return "" }
		if ws.WaitAtFenceNs > 0 {
			fenceHead, fenceCell = "fence\t", func(b WaitBreakdown) string { return ns(b.WaitAtFenceNs) + "\t" }
		}
		// The flush column only where a rank flushed.
		flushHead, flushCell := "", func(WaitBreakdown) string { return "" }
		if ws.RMAFlushNs > 0 {
			flushHead, flushCell = "flush\t", func(b WaitBreakdown) string { return ns(b.RMAFlushNs) + "\t" }
		}
		// The post/start/complete/wait columns only where a rank waited in them.
		pscwHead, pscwCell := "", func(WaitBreakdown) string { return "" }
		if ws.LatePostNs > 0 || ws.EarlyWaitNs > 0 {
			pscwHead, pscwCell = "late post\tearly wait\t", func(b WaitBreakdown) string { return ns(b.LatePostNs) + "\t" + ns(b.EarlyWaitNs) + "\t" }
		}
		fmt.Fprintln(tw, "rank\ttotal\tlate sender\tlate receiver\tbarrier\tN x N\tbroadcast\treduce\t"+fenceHead+pscwHead+flushHead)
		for i, b := range byRank {
			if i == top || waitSum(b) == 0 {
				break
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s%s\n", b.Key, ns(waitSum(b)), ns(b.LateSenderNs), ns(b.LateReceiverNs),
				ns(b.WaitAtBarrierNs), ns(b.WaitAtNxNNs), ns(b.LateBroadcastNs), ns(b.EarlyReduceNs), fenceCell(b), pscwCell(b), flushCell(b))
		}
		tw.Flush()
	}

}

// writeCollectives writes the collective calls members waited in most.
func writeCollectives(w io.Writer, r *Report, top int) {
	// Ranked by waiting; a call no member waited in is balanced, not a
	// row of this table, and so is one that moves data from a root or to
	// one (not Synchronising) where no member waited by its data flow,
	// however late some arrived (LAMMPS's MPI_Bcasts: 12 ms of "wait
	// before", 0 % waiting).
	var calls []Collective
	for _, c := range r.Calls {
		if c.WaitBeforeNs+c.WaitAfterNs > 0 && (c.Synchronising || c.BoundedImbalance > 0) {
			calls = append(calls, c)
		}
	}
	slices.SortFunc(calls, func(a, b Collective) int { return cmpI(b.WaitBeforeNs+b.WaitAfterNs, a.WaitBeforeNs+a.WaitAfterNs) })
	if len(calls) == 0 && len(r.Calls) > 0 {
		fmt.Fprintf(w, "\nMost imbalanced collective calls: none (no member waited in any of the run's %d)\n", len(r.Calls))
	}
	if len(calls) > 0 {
		fmt.Fprintln(w, "\nMost imbalanced collective calls (waits summed over members):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "operation\tcomm\tseq\twait before\twait after\texecution\timbalance\twaiting share\tlast to arrive\t")
		for i, c := range calls {
			if i == top {
				break
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%.2f\t%s\trank %d\t\n", c.Op, c.Comm, c.Seq, ns(c.WaitBeforeNs), ns(c.WaitAfterNs), ns(c.ExecutionNs), c.Imbalance, boundedText(&c), c.LastRank)
		}
		tw.Flush()
	}

}

// writeProcesses writes the paper's per-process table (§5.3).
func writeProcesses(w io.Writer, r *Report, top int) {
	fmt.Fprintln(w, "\nPer-process statistics (paper §5.3; times in seconds):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\tprogram_time\tgraph_time\ttotal_time\ttotal_execution_time\ttotal_wait_time\timbalance\tnum_calls\tnum_nodes\tnum_edges\t")
	for i, p := range r.Processes {
		if i == top && len(r.Processes) > top+1 {
			fmt.Fprintf(tw, "(%d more)\t\t\t\t\t\t\t\t\t\t\n", len(r.Processes)-top)
			break
		}
		fmt.Fprintf(tw, "%d\t%.9f\t%.9f\t%.9f\t%.9f\t%.9f\t%.9f\t%d\t%d\t%d\t\n", p.Rank, sec(p.ProgramTimeNs), sec(p.GraphTimeNs), sec(p.TotalTimeNs),
			sec(p.TotalExecutionNs), sec(p.TotalWaitNs), p.Imbalance, p.NumCalls, p.NumNodes, p.NumEdges)
	}
	t := r.Totals
	fmt.Fprintf(tw, "total\t%.9f\t%.9f\t%.9f\t%.9f\t%.9f\t%.9f\t%d\t%d\t%d\t\n", sec(t.ProgramTimeNs), sec(t.GraphTimeNs), sec(t.TotalTimeNs),
		sec(t.TotalExecutionNs), sec(t.TotalWaitNs), t.Imbalance, t.NumCalls, t.NumNodes, t.NumEdges)
	tw.Flush()

}

func waitSum(b WaitBreakdown) int64 {
	return b.LateSenderNs + b.LateReceiverNs + b.WaitAtBarrierNs + b.WaitAtNxNNs + b.LateBroadcastNs + b.EarlyReduceNs + b.WaitAtFenceNs +
		b.LatePostNs + b.EarlyWaitNs + b.RMAFlushNs
}

func ns(v int64) string {
	d := time.Duration(v)
	switch {
	case v == 0:
		return "0"
	case d < time.Microsecond && d > -time.Microsecond:
		return fmt.Sprintf("%d ns", v)
	case d < time.Millisecond && d > -time.Millisecond:
		return fmt.Sprintf("%.1f µs", float64(v)/1e3)
	case d < time.Second && d > -time.Second:
		return fmt.Sprintf("%.2f ms", float64(v)/1e6)
	}
	return fmt.Sprintf("%.3f s", float64(v)/1e9)
}

func sec(v int64) float64   { return float64(v) / 1e9 }
func pct(f float64) string  { return fmt.Sprintf("%.1f%%", 100*f) }
func cmpI(a, b int64) int   { return cmp.Compare(a, b) }
func cmpF(a, b float64) int { return cmp.Compare(a, b) }
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// boundedText is a collective instance's bounded imbalance, marked when
// the operation does not synchronise (its waits follow the data flow).
func boundedText(c *Collective) string {
	if c.Synchronising {
		return pct(c.BoundedImbalance)
	}
	return pct(c.BoundedImbalance) + " (data flow)"
}

// callsiteRow is how the text report names a row of by_callsite: where
// the stretches end, and the wrapper functions the calls went through.
func callsiteRow(s CallsiteShare) string {
	l := orDash(SiteLabel(s.Callsite, s.Function))
	if len(s.Via) > 0 {
		l += " → " + strings.Join(s.Via, " → ")
	}
	if s.DepthReached {
		l += " (the call depth recorded ends in the wrapper layer)"
	}
	return l
}
