package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// writeReplay writes the POP factors, the what-if predictions and the
// most valuable stretches to fix, if the run was replayed.
func writeReplay(w io.Writer, r *Report, top int) {
	p := r.POP
	if p == nil {
		return
	}
	fmt.Fprintln(w, "\nPOP efficiency factors (useful computation: outside MPI from MPI_Init to MPI_Finalize;")
	fmt.Fprintln(w, "ideal run: the longest path with only it weighing, on an ideal network):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\twindow\tparallel\tload balance\tcommunication\tserialisation\ttransfer\t")
	row := func(name string, f *POPFactors) {
		fmt.Fprintf(tw, "%s\t%s - %s\t%s\t%s\t%s\t%s\t%s\t\n", name, ns(f.WindowNs[0]), ns(f.WindowNs[1]),
			pct(f.ParallelEfficiency), pct(f.LoadBalance), pct(f.CommunicationEfficiency),
			pct(f.SerialisationEfficiency), pct(f.TransferEfficiency))
	}
	row("run", &p.POPFactors)
	for i := range p.Phases {
		ph := &p.Phases[i]
		if i == top {
			fmt.Fprintf(tw, "(%d more phases)\t\t\t\t\t\t\t\n", len(p.Phases)-top)
			break
		}
		name := fmt.Sprintf("phase %d", ph.Phase)
		switch {
		case ph.Level == nil:
			name += " (before MPI_Pcontrol)"
		case *ph.Level == 0:
			name += " (paused)"
		default:
			name += fmt.Sprintf(" (level %d)", *ph.Level)
		}
		row(name, &ph.POPFactors)
	}
	if p.Window != nil && p.Window.RuntimeNs > 0 {
		row("--from/--to window", p.Window)
	}
	tw.Flush()
	if p.Window != nil && p.Window.RuntimeNs == 0 {
		fmt.Fprintln(w, "(the --from/--to window has no factors: none of it lies between MPI_Init and MPI_Finalize)")
	}

	if len(r.WhatIf) == 0 {
		return
	}
	base := r.WhatIf[0].RuntimeNs + r.WhatIf[0].GainNs // the longest path as the run was
	fmt.Fprintf(w, "\nWhat-if (the longest path re-solved with changed weights; as run: %s):\n", ns(base))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tpredicted\tgain\tnew critical path mostly\twhat it changes\t")
	for _, x := range r.WhatIf {
		if x.Fix {
			continue // below
		}
		fmt.Fprintf(tw, "%s\t%s\t%s (%s)\t%s\t%s\t\n", x.Scenario, ns(x.RuntimeNs), ns(x.GainNs), pct(x.Gain), pathSummary(&x), x.Description)
	}
	tw.Flush()

	var fixes []WhatIf
	for _, x := range r.WhatIf {
		if x.Fix {
			fixes = append(fixes, x)
		}
	}
	if len(fixes) == 0 {
		return
	}
	slices.SortStableFunc(fixes, func(a, b WhatIf) int { return cmpI(b.GainNs, a.GainNs) })
	fmt.Fprintln(w, "\nMost valuable stretches to fix (the computation before the calls at the site halved, re-solved):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "before the call at\ton the critical path\tpredicted\tgain\tnew critical path mostly\t")
	for _, x := range fixes {
		site := strings.TrimSuffix(strings.TrimPrefix(x.Scenario, "callsite:"), "=0.5")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s (%s)\t%s\t\n", site, ns(x.OnPathNs), ns(x.RuntimeNs), ns(x.GainNs), pct(x.Gain), pathSummary(&x))
	}
	tw.Flush()
}

// pathSummary says where a predicted critical path mostly runs: its top
// rank and operation with their shares.
func pathSummary(x *WhatIf) string {
	var total int64
	for _, o := range x.PathOps {
		total += o.Ns
	}
	if x.RuntimeNs > 0 {
		total = x.RuntimeNs
	}
	var parts []string
	if len(x.PathRanks) > 0 && total > 0 {
		parts = append(parts, fmt.Sprintf("rank %d %s", x.PathRanks[0].Rank, pct(float64(x.PathRanks[0].Ns)/float64(total))))
	}
	if len(x.PathOps) > 0 && total > 0 {
		parts = append(parts, fmt.Sprintf("%s %s", x.PathOps[0].Op, pct(float64(x.PathOps[0].Ns)/float64(total))))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
