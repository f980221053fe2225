//go:build mpi

package e2e

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/timeline/timelinetest"
	"github.com/cpath/cpath/trace"
)

// TestWrapperLayer runs wraplayer.c and wraplayer.f90, whose ranks call
// MPI only through a two-level wrapper layer of their own, built with and
// without frame pointers, under Open MPI and MPICH, with call paths of 4
// frames. Rank 1's solve_heavy computes 20 ms before each of its 20 calls
// of the layer, everything else 2 ms or less: the top row of the critical
// path's computation by call site names solve_heavy through the layer's
// two functions, ending in MPI_Allreduce, with a stretch for each of
// those calls rank 1 reached last (by design all; the logs say which),
// for every build and at one and two analyzer ranks, and so do its critical slices in the timeline
// (args.ends_at). --wrapper=none names the layer's call of MPI, and
// a regular expression of the inner level the outer one.
func TestWrapperLayer(t *testing.T) {
	const steps, heavyNs = 20, 20e6
	progs := []struct {
		src, heavy, inner, outer string
		fortran                  bool
	}{
		{"wraplayer.c", "solve_heavy", "layer_allreduce", "app_allreduce", false},
		{"wraplayer.f90", "wraplayer_solver::solve_heavy", "wraplayer_mp::layer_sum", "wraplayer_mp::app_sum", true},
	}
	builds := []struct {
		name  string
		flags []string
	}{
		{"fp", []string{"-g", "-O2", "-fno-omit-frame-pointer"}},
		{"nofp", []string{"-g", "-O2", "-fomit-frame-pointer"}},
	}
	for _, m := range mpitest.Impls {
		for _, p := range progs {
			for _, b := range builds {
				t.Run(m.Key+"/"+p.src+"/"+b.name, func(t *testing.T) {
					cc, flags := m.CC(t), b.flags
					if p.fortran {
						cc, flags = m.FC(t), append(flags, "-fno-inline")
					}
					exe := mpitest.Compile(t, t.TempDir(), cc, p.src, flags...)
					logDir := filepath.Join(t.TempDir(), "logs")
					m.RunEnv(t, 2, []string{"CPATH_CALLDEPTH=4"}, m.LoggerLib(t), logDir, filepath.Dir(exe), exe)
					want := []string{p.outer, p.inner}
					last, near := heavyLast(t, logDir, steps)
					if last+near < steps/2 {
						t.Fatalf("the run did not follow its design: rank 1 reached only %d of the %d heavy MPI_Allreduce last (rank 0 was descheduled, load average %s)",
							last+near, steps, mpitest.LoadAverage())
					}
					for _, a := range []analyzer{{"dag", 0}, {"dag", 2}} {
						tl := filepath.Join(t.TempDir(), "timeline.json")
						_, rep := analyzeRaw(t, cpathBin(t), logDir, a, "--timeline", tl)
						checkEndsAt(t, tl, p.heavy+" (", " → "+p.outer+" → "+p.inner, last)
						top := topCallsite(t, rep, a.String())
						if top.Rank != 1 || top.Function != p.heavy || !reflect.DeepEqual(top.Via, want) ||
							!reflect.DeepEqual(top.Ops, []string{"MPI_Allreduce"}) || top.Stretches < last || top.Stretches > last+near ||
							float64(top.Ns) < 0.9*float64(top.Stretches)*heavyNs {
							t.Errorf("%s: top row %+v, want rank 1's %s via %q, %d-%d stretches (the heavy MPI_Allreduce rank 1 reached last) before MPI_Allreduce of %.0f ms each or more",
								a, top, p.heavy, want, last, last+near, 0.9*heavyNs/1e6)
						}
					}
					_, rep := analyzeRaw(t, cpathBin(t), logDir, analyzer{"dag", 0}, "--wrapper=none")
					if top := topCallsite(t, rep, "--wrapper=none"); top.Function != p.inner || len(top.Via) != 0 {
						t.Errorf("--wrapper=none: top row %+v, want %s's call of MPI_Allreduce", top, p.inner)
					}
					const inner = "--wrapper=(^|::)layer_" // Fortran's names are module::function
					_, rep = analyzeRaw(t, cpathBin(t), logDir, analyzer{"dag", 0}, inner)
					if top := topCallsite(t, rep, inner); top.Function != p.outer || !reflect.DeepEqual(top.Via, want[1:]) {
						t.Errorf("%s: top row %+v, want %s via %s", inner, top, p.outer, p.inner)
					}
				})
			}
		}
	}
}

// heavyLast reads from wraplayer's logs how many of its steps' heavy
// MPI_Allreduce (each step's first of two) rank 1 reached last by more
// than a millisecond, and how many within a millisecond of rank 0: by
// design all, but a rank 0 descheduled for the 18 ms rank 1 computes more
// reaches it later, and that step's critical stretch is its own.
func heavyLast(t *testing.T, logDir string, steps int) (last, near int) {
	t.Helper()
	logs := mpitest.ReadLogs(t, logDir, 2)
	var starts [2][]int64
	for r, l := range logs {
		for _, rec := range l.Records {
			if rec.Op == trace.OpAllreduce {
				starts[r] = append(starts[r], rec.Start)
			}
		}
	}
	if len(starts[0]) != 2*steps || len(starts[1]) != 2*steps {
		t.Fatalf("the logs hold %d and %d MPI_Allreduce, want %d each", len(starts[0]), len(starts[1]), 2*steps)
	}
	for s := 0; s < steps; s++ {
		switch d := starts[1][2*s] - starts[0][2*s]; {
		case d > 1e6:
			last++
		case d > -1e6:
			near++
		}
	}
	return last, near
}

// checkEndsAt checks that at least n critical stretches of computation
// in the timeline file name where they end, args.ends_at, as starting
// with prefix and ending with suffix.
func checkEndsAt(t *testing.T, file, prefix, suffix string, n int) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tr := timelinetest.Parse(t, b)
	got := 0
	for _, e := range tr.Critical {
		if s, _ := e.Args["ends_at"].(string); strings.HasPrefix(s, prefix) && strings.HasSuffix(s, suffix) {
			got++
		}
	}
	if got < n {
		var some []any
		for _, e := range tr.Critical {
			if len(some) < 5 && e.Args["ends_at"] != nil {
				some = append(some, e.Args["ends_at"])
			}
		}
		t.Errorf("timeline: %d critical stretches end at %q…%q, want %d or more; some ends_at: %q", got, prefix, suffix, n, some)
	}
}

// topCallsite is the report's first row of computation by call site.
func topCallsite(t *testing.T, rep *report.Report, what string) report.CallsiteShare {
	t.Helper()
	if len(rep.CriticalPath.ByCallsite) == 0 {
		t.Fatalf("%s: no computation by call site in the report", what)
	}
	return rep.CriticalPath.ByCallsite[0]
}
