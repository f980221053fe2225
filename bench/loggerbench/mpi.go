package main

import (
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cpath/cpath/internal/openmpi"
)

// mpiImpl is an MPI the benchmark programs are built and run with: its
// compiler and launcher (named explicitly, Debian's alternatives may point
// the plain names at either MPI), its logger library, and how its
// launcher is told what the benchmarks need.
type mpiImpl struct {
	Key  string // "openmpi", "mpich": -mpi's names
	Name string // "Open MPI", "MPICH"
	lib  string // the repository's logger for it, under lib/
	cc   func() string
	cxx  func() string
	run  func() string
	// hydra: MPICH's launcher (Hydra), whose options differ from Open
	// MPI's mpirun.
	hydra bool
}

var mpiImpls = []*mpiImpl{
	{Key: "openmpi", Name: "Open MPI", lib: "libcpathlog.so",
		cc: func() string { return openmpi.Tool("mpicc") }, cxx: func() string { return openmpi.Tool("mpicxx") },
		run: func() string { return openmpi.Tool("mpirun") }},
	{Key: "mpich", Name: "MPICH", lib: "libcpathlog-mpich.so", hydra: true,
		cc: func() string { return tool("mpicc.mpich") }, cxx: func() string { return tool("mpicxx.mpich") },
		run: func() string { return tool("mpirun.mpich") }},
}

// tool returns name's path, or name itself (the error comes when it runs).
func tool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return name
}

// parseMPIs reads -mpi: a comma-separated list of mpiImpls' keys.
func parseMPIs(s string) ([]*mpiImpl, error) {
	var out []*mpiImpl
	for _, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		found := false
		for _, m := range mpiImpls {
			if m.Key == k {
				out = append(out, m)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("-mpi: unknown MPI %q (openmpi, mpich)", k)
		}
	}
	return out, nil
}

// jobArgs are the launcher's arguments for an np-rank job on this
// machine, as root; oversubscribe allows more ranks than cores, unbound
// says the ranks must not be bound to cores (threaded runs need both).
func (m *mpiImpl) jobArgs(np int, oversubscribe, unbound bool) []string {
	if m.hydra {
		// Hydra runs as root, oversubscribes and leaves ranks unbound
		// without being asked.
		return []string{"-np", strconv.Itoa(np)}
	}
	a := []string{"--allow-run-as-root"}
	if oversubscribe {
		a = append(a, "--oversubscribe")
	}
	a = append(a, "-np", strconv.Itoa(np))
	if unbound {
		a = append(a, "--bind-to", "none")
	}
	return a
}

// env is the launcher's arguments that give every rank KEY=VALUE e.
func (m *mpiImpl) env(e string) []string {
	if m.hydra {
		k, v, _ := strings.Cut(e, "=")
		return []string{"-genv", k, v}
	}
	return []string{"-x", e}
}

// outputArgs send each rank's stdout to a file of its own under dir:
// the launcher's own stdout interleaves the ranks' lines mid-line.
func (m *mpiImpl) outputArgs(dir string) []string {
	if m.hydra {
		return []string{"-outfile-pattern", filepath.Join(dir, "rank.%r.stdout")}
	}
	return []string{"--output-filename", dir}
}

// rankFiles lists the rank output files outputArgs made under dir, in
// rank order.
func (m *mpiImpl) rankFiles(dir string) []string {
	pattern := filepath.Join(dir, "*", "rank.*", "stdout") // Open MPI: DIR/1/rank.N/stdout
	if m.hydra {
		pattern = filepath.Join(dir, "rank.*.stdout")
	}
	files, _ := filepath.Glob(pattern)
	sort.Slice(files, func(i, j int) bool { return rankOfFile(files[i]) < rankOfFile(files[j]) })
	return files
}

// rankOfFile is the rank number in an output file's path ("rank.12").
func rankOfFile(path string) int {
	for _, part := range strings.Split(path, string(filepath.Separator)) {
		if f := strings.Split(part, "."); len(f) >= 2 && f[0] == "rank" {
			if n, err := strconv.Atoi(f[1]); err == nil {
				return n
			}
		}
	}
	return -1
}

// printComparison puts the main figures of reports (one per MPI, the same
// sections) side by side: what the logger adds under each.
func printComparison(w io.Writer, reps []*Report) {
	type row struct {
		name string
		cell func(r *Report) string
	}
	var rows []row
	ns := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	for k, kind := range mpiKinds {
		k, kind := k, kind
		rows = append(rows, row{"tight loop " + kind + ": added ns/call (median; mean)", func(r *Report) string {
			if k >= len(r.PerCall) || r.PerCall[k].Kind != kind {
				return "-"
			}
			p := r.PerCall[k]
			return ns(p.AddedNs) + "; " + ns(p.AddedMeanNs)
		}})
	}
	names := map[string]bool{}
	for _, r := range reps {
		if r.Micro == nil {
			continue
		}
		for _, mc := range r.Micro.Cases {
			if names[mc.Name] {
				continue
			}
			names[mc.Name] = true
			name := mc.Name
			rows = append(rows, row{"micro " + name + ": added ns/call (wall; cpu)", func(r *Report) string {
				if r.Micro == nil {
					return "-"
				}
				for _, c := range r.Micro.Cases {
					if c.Name == name && len(c.AddedNs) > 1 {
						return ns(c.AddedNs[1]) + "; " + ns(c.AddedCPUNs[1])
					}
				}
				return "-"
			}})
		}
	}
	rows = append(rows,
		row{"halo: slowdown % (CI)", func(r *Report) string {
			if r.Halo.Pairs == 0 {
				return "-"
			}
			t := r.Halo.Total
			return fmt.Sprintf("%.2f (%.1f … %.1f)", t.Pct, t.CILoPct, t.CIHiPct)
		}},
		row{"comm-bound halo: added ns/call", func(r *Report) string {
			if len(r.CommBound) == 0 {
				return "-"
			}
			var v []string
			for _, cb := range r.CommBound {
				v = append(v, ns(cb.AddedNsPerCall))
			}
			return strings.Join(v, ", ")
		}},
		row{"memory: added MiB (max)", func(r *Report) string {
			if len(r.Memory) == 0 {
				return "-"
			}
			m := 0.0
			for _, x := range r.Memory {
				m = max(m, x.AddedMiB)
			}
			return fmt.Sprintf("%.1f", m)
		}},
		row{"disk: B/call", func(r *Report) string {
			if len(r.Disk) == 0 {
				return "-"
			}
			var v []string
			for _, d := range r.Disk {
				v = append(v, fmt.Sprintf("%.2f", d.BytesPerCall))
			}
			return strings.Join(v, ", ")
		}},
	)
	fmt.Fprintf(w, "What the logger adds, by MPI (same machine, same run)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  \t")
	for _, r := range reps {
		fmt.Fprintf(tw, "%s\t", r.MPI)
	}
	fmt.Fprintln(tw)
	for _, rw := range rows {
		var cells []string
		empty := true
		for _, r := range reps {
			c := rw.cell(r)
			empty = empty && c == "-"
			cells = append(cells, c)
		}
		if empty {
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\t\n", rw.name, strings.Join(cells, "\t"))
	}
	tw.Flush()
}
