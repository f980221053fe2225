package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

func newInfoCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info LOGDIR",
		Short: "Summarise the logs of a recorded run",
		Long: `Summarise the logs in LOGDIR (one rank-NNNNNN.cplog file per rank): per rank
its host, pid, MPI calls, bytes sent point to point, records, file size and
bytes per call on disk, time inside MPI and how the rank ended; the calls per
MPI operation; the clock-synchronisation parameters of each rank; and whether
the set is complete.

cpath info fails (exit status 1, one line on stderr) when LOGDIR holds no
logs, a file that is not an intact cpath log of this format version, logs of
two different runs, or no log at all for some rank (the summary of the other
ranks is still printed). A log cut short or from a rank that did not reach
MPI_Finalize is reported as incomplete but is not an error: the analyzer can
use what it holds.

LOGDIR may also be an OTF2 archive (its anchor file traces.otf2 or the
directory holding it): the summary then lists what cpath did not take of
it (docs/otf2.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := graph.ReadLogSet(args[0])
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				err = enc.Encode(s)
			} else {
				err = writeInfo(w, s)
			}
			if err != nil {
				return err
			}
			return s.MissingError()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	return cmd
}

// writeInfo prints the text summary.
func writeInfo(out io.Writer, s *graph.LogSet) error {
	var b strings.Builder
	p := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }

	p("logs:       %s\n", s.Dir)
	p("run id:     %s\n", s.RunID)
	p("ranks:      %d logs of %d ranks\n", len(s.Ranks), s.Size)
	if s.Complete {
		p("complete:   yes (every rank finalized, every log intact)\n")
	} else {
		p("complete:   NO (%s; see below)\n", plural(len(s.Problems)+len(s.MissingRanks), "problem"))
	}
	p("program:    %s\n", strings.Join(s.Exe, ", "))
	lib, _, _ := strings.Cut(s.MPILibrary, ",") // "Open MPI v4.1.4, package: …"
	p("MPI:        %s, thread level %s\n", orUnknown(lib), threadLevel(s.ThreadLevel))
	p("logger:     %s\n", orUnknown(strings.Join(s.Logger, ", ")))
	if len(s.EagerLimits) > 0 {
		// What the MPI says of when sends may return before their receive:
		// it explains Late Receiver, the timing decides (docs/analysis.md).
		var ls []string
		for _, e := range s.EagerLimits {
			l := fmt.Sprintf("%s=%d", e.Name, e.Value)
			if e.Ranks < len(s.Ranks) {
				l += fmt.Sprintf(" (%s)", plural(e.Ranks, "rank"))
			}
			ls = append(ls, l)
		}
		p("eager:      %s\n", strings.Join(ls, ", "))
	}
	if s.CallDepth > 0 {
		// CPATH_CALLDEPTH: the records carry return addresses above their
		// call sites (trace.Record.Path).
		p("call paths: up to %d frames per call, %s in the logs\n", s.CallDepth, plural(s.CallPaths, "distinct path"))
	}
	if s.StartUnixNs != 0 {
		p("started:    %s\n", time.Unix(0, s.StartUnixNs).UTC().Format("2006-01-02 15:04:05 UTC"))
	}

	p("\n")
	tb := newTable("RANK", "HOST", "PID", "CALLS", "SENT", "RECORDS", "FILE", "B/CALL", "IN MPI", "SPAN", "END").
		alignRight(0, 2, 3, 4, 5, 6, 7, 8, 9)
	for _, r := range s.Ranks {
		tb.add(fmt.Sprint(r.Rank), r.Host, fmt.Sprint(r.PID), fmt.Sprint(r.Calls), fmtBytes(r.BytesSent),
			fmt.Sprint(r.Records), fmtBytes(uint64(r.FileBytes)), fmtPerCall(r.BytesPerCall),
			fmtDur(r.MPITimeNs), fmtDur(r.SpanNs), endText(r))
	}
	t := s.Totals
	tb.add("total", "", "", fmt.Sprint(t.Calls), fmtBytes(t.BytesSent), fmt.Sprint(t.Records),
		fmtBytes(uint64(t.FileBytes)), fmtPerCall(t.BytesPerCall), fmtDur(t.MPITimeNs), "", "")
	if err := tb.write(&b); err != nil {
		return err
	}
	if t.CollBytes > 0 {
		p("(SENT is point-to-point payload; the collectives' buffers held %s in all)\n", fmtBytes(t.CollBytes))
	}
	if t.IOBytes > 0 {
		p("(MPI-IO calls asked to read or write %s in all)\n", fmtBytes(t.IOBytes))
	}

	if len(s.Ops) > 0 {
		p("\n")
		tb = newTable("OPERATION", "CALLS", "TIME", "BYTES").alignRight(1, 2, 3)
		for _, o := range s.Ops {
			bytes := "-"
			if o.Bytes > 0 {
				bytes = fmtBytes(o.Bytes)
			}
			tb.add(o.Op, fmt.Sprint(o.Calls), fmtDur(o.TimeNs), bytes)
		}
		if err := tb.write(&b); err != nil {
			return err
		}
	}

	if n := graph.UnwrappedNote(s.UnwrappedCalls); n != "" {
		p("\n%s\n", n)
	}
	if n := graph.NotMappedNote(s.NotMapped); n != "" {
		p("\n%s\n", n)
	}

	p("\nclock: global = local + offset(t), offset(t) the line of least drift within both sync points' errors\n")
	methods := map[string]bool{}
	injected := false
	for _, r := range s.Ranks {
		methods[r.Clock.Method] = true
		injected = injected || r.Clock.Injected != nil
	}
	perRankMethod := len(methods) > 1
	if !perRankMethod {
		p("method: %s\n", orUnknown(s.Ranks[0].Clock.Method))
	}
	hdr := []string{"RANK", "ALLREDUCE OFFSET", "INIT OFFSET", "±ERR", "FINAL OFFSET", "±ERR", "DRIFT"}
	if perRankMethod {
		hdr = append(hdr, "METHOD")
	}
	if injected {
		hdr = append(hdr, "INJECTED (test only)")
	}
	tb = newTable(hdr...).alignRight(0, 1, 2, 3, 4, 5, 6)
	for _, r := range s.Ranks {
		c := r.Clock
		final, ferr, drift := "-", "-", "-"
		if c.Final != nil {
			final, ferr = fmtOffset(c.Final.OffsetNs), fmtDur(c.Final.ErrNs)
		}
		if r.DriftPPM != nil {
			drift = fmt.Sprintf("%+.3f ppm", *r.DriftPPM)
		}
		row := []string{fmt.Sprint(r.Rank), fmtOffset(c.AllreduceOffsetNs),
			fmtOffset(c.Init.OffsetNs), fmtDur(c.Init.ErrNs), final, ferr, drift}
		if perRankMethod {
			row = append(row, orUnknown(c.Method))
		}
		if injected {
			if c.Injected != nil {
				row = append(row, fmt.Sprintf("%s, %+.1f ppm", fmtOffset(c.Injected.OffsetNs), c.Injected.DriftPPM))
			} else {
				row = append(row, "-")
			}
		}
		tb.add(row...)
	}
	if err := tb.write(&b); err != nil {
		return err
	}

	if !s.Complete {
		p("\nincomplete:\n")
		if len(s.MissingRanks) > 0 {
			p("  no log for %s %s\n", pluralWord(len(s.MissingRanks), "rank"), graph.RankList(s.MissingRanks))
		}
		for _, pr := range s.Problems {
			p("  %s\n", pr)
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func endText(r *graph.RankLog) string {
	switch {
	case r.Truncated != "":
		return "truncated"
	case r.Status == trace.EndMissing:
		return "no trailer"
	case r.Status == trace.EndSignal:
		return fmt.Sprintf("signal %d", r.EndInfo)
	case r.Status == trace.EndNoFinalize:
		return "no MPI_Finalize"
	}
	return r.End
}

func threadLevel(l int) string {
	// Open MPI's values of MPI_THREAD_SINGLE … MPI_THREAD_MULTIPLE.
	names := []string{"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"}
	if l >= 0 && l < len(names) {
		return names[l]
	}
	return fmt.Sprint(l)
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

func plural(n int, w string) string { return fmt.Sprintf("%d %s", n, pluralWord(n, w)) }

func pluralWord(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// fmtBytes prints a byte count with binary units.
func fmtBytes(n uint64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		v /= 1024
		if v < 1024 || u == "TiB" {
			return fmt.Sprintf("%.1f %s", v, u)
		}
	}
	panic("unreachable")
}

func fmtPerCall(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

// fmtDur prints nanoseconds with a unit that keeps 3-4 significant digits.
func fmtDur(ns int64) string {
	a := math.Abs(float64(ns))
	switch {
	case ns == 0:
		return "0"
	case a < 1e3:
		return fmt.Sprintf("%d ns", ns)
	case a < 1e6:
		return fmt.Sprintf("%.2f µs", float64(ns)/1e3)
	case a < 1e9:
		return fmt.Sprintf("%.2f ms", float64(ns)/1e6)
	default:
		return fmt.Sprintf("%.3f s", float64(ns)/1e9)
	}
}

// fmtOffset is fmtDur with an explicit sign.
func fmtOffset(ns int64) string {
	if ns > 0 {
		return "+" + fmtDur(ns)
	}
	return fmtDur(ns)
}
