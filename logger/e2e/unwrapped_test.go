//go:build mpi

package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

// TestUnwrapped runs testdata/unwrapped.c (see there) under each MPI: the
// calls the logger counts but does not record are in each rank's log
// with their exact counts and a time, nothing MPI does inside them is
// recorded (the recorded calls are exactly the program's others), and
// cpath info and the report name them ("unwrapped MPI calls: …"). The
// report's critical path says how much of it the analysis could not
// classify: MPI_Init and MPI_Finalize, the MPI_Waits of requests the logs
// do not hold (MPI 4's persistent collectives and MPI_Isendrecv), and, in
// the designed run, rank 0's wait in the unrecorded MPI_Allreduce_c, which
// the logs show as computation on the path, within the bound it gives.
func TestUnwrapped(t *testing.T) {
	const np, lateMs = 2, 200
	for _, m := range mpitest.Impls {
		t.Run(m.Key, func(t *testing.T) {
			lib := m.LoggerLib(t)
			dir := t.TempDir()
			exe := mpitest.Compile(t, dir, m.CC(t), "unwrapped.c", "-Wall")
			var logDir, out string
			var logs []*trace.Log
			missed := retryDesign(t, func() string {
				logDir = filepath.Join(t.TempDir(), "logs")
				out = m.Run(t, np, lib, logDir, dir, exe, dir, fmt.Sprint(lateMs))
				logs = mpitest.ReadLogs(t, logDir, np)
				if w := unwrappedNs(logs[0], "MPI_Allreduce_c"); strings.Contains(out, "mpi4 1") && w < lateMs*1e6/2 {
					return fmt.Sprintf("rank 0 waited %v in MPI_Allreduce_c, designed %d ms", time.Duration(w), lateMs)
				}
				return ""
			})
			mm := regexp.MustCompile(`mpi4 ([01])`).FindStringSubmatch(out)
			if mm == nil {
				t.Fatalf("no \"mpi4\" line in the output:\n%s", out)
			}
			mpi4 := mm[1] == "1"
			if m == mpitest.MPICH && !mpi4 {
				t.Fatal("MPICH 4 compiled the program without MPI 4")
			}

			// The counts, exact, and the recorded calls, exact.
			for r, l := range logs {
				want := map[string]uint64{"MPI_Comm_set_info": 2, "MPI_File_set_size": 1,
					"MPI_File_preallocate": 1, "MPI_File_set_atomicity": 1, "MPI_File_seek_shared": 1, "MPI_File_set_info": 1,
					"MPI_Win_set_info": 1}
				rec := map[trace.Op]int{trace.OpInit: 1, trace.OpBufferDetach: r + 1, trace.OpFileOpen: 1, trace.OpFileClose: 1, trace.OpBarrier: 1,
					trace.OpWinCreate: 1, trace.OpWinFree: 1, trace.OpFinalize: 1}
				if mpi4 {
					want["MPI_Allreduce_init"], want["MPI_Barrier_init"], want["MPI_Isendrecv"], want["MPI_Allreduce_c"] = 1, 1, 1, 1
					want[[]string{"MPI_Send_c", "MPI_Recv_c"}[r]] = 2
					rec[trace.OpStart], rec[trace.OpWait], rec[trace.OpRequestFree] = 4, 5, 2
				}
				got := map[string]uint64{}
				for _, u := range l.Header.Unwrapped {
					got[u.Name] += u.Calls
					if u.Ns <= 0 {
						t.Errorf("rank %d: %s took %d ns", r, u.Name, u.Ns)
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("rank %d: unwrapped calls %v, want %v", r, got, want)
				}
				ops := map[trace.Op]int{}
				for _, x := range l.Records {
					if !x.Op.IsSub() {
						ops[x.Op]++
					}
				}
				if !reflect.DeepEqual(ops, rec) {
					t.Errorf("rank %d: recorded calls %v, want %v", r, ops, rec)
				}
			}
			var byRank [][]trace.UnwrappedCall
			for _, l := range logs {
				byRank = append(byRank, l.Header.Unwrapped)
			}
			want := graph.MergeUnwrapped(byRank)
			note := graph.UnwrappedNote(want)
			if !strings.Contains(note, "MPI_Comm_set_info ×4 on ranks 0-1") || mpi4 && !strings.Contains(note, "MPI_Send_c ×2 on rank 0") {
				t.Errorf("note %q", note)
			}

			// cpath info: the note, and the counts in its JSON.
			bin := mpitest.CPathBin(t)
			info, err := exec.Command(bin, "info", logDir).CombinedOutput()
			if err != nil || !strings.Contains(string(info), note) {
				t.Errorf("cpath info (%v) lacks %q:\n%s", err, note, info)
			}
			js, err := exec.Command(bin, "info", "--json", logDir).Output()
			var set graph.LogSet
			if err == nil {
				err = json.Unmarshal(js, &set)
			}
			if err != nil || !reflect.DeepEqual(set.UnwrappedCalls, want) {
				t.Errorf("cpath info --json (%v): unwrapped_calls %+v, want %+v", err, set.UnwrappedCalls, want)
			}

			// The report, as one process and as a 2-rank job: the same
			// counts and unclassified time.
			text, err := exec.Command(bin, logDir).CombinedOutput()
			if err != nil || !strings.Contains(string(text), "  - "+note) || !strings.Contains(string(text), "unclassified: ") {
				t.Errorf("text report (%v) lacks the note %q or the unclassified line:\n%s", err, note, text)
			}
			one := analyzeJSON(t, exec.Command(bin, "--json", "-", "--json-segments", logDir))
			mpirun := mpitest.OpenMPI.Mpirun(t)
			two := analyzeJSON(t, exec.Command(mpirun, append(mpitest.OpenMPI.JobArgs(2, nil), bin, "--json", "-", "--json-segments", logDir)...))
			for _, rep := range []*report.Report{one, two} {
				if !reflect.DeepEqual(rep.Run.UnwrappedCalls, want) {
					t.Errorf("report: unwrapped_calls %+v, want %+v", rep.Run.UnwrappedCalls, want)
				}
				if !slices.Contains(rep.Run.Skipped, note) {
					t.Errorf("report: notes %q lack %q", rep.Run.Skipped, note)
				}
			}
			cp, cp2 := &one.CriticalPath, &two.CriticalPath
			if cp.UnclassifiedNs != cp2.UnclassifiedNs || cp.UnwrappedBoundNs != cp2.UnwrappedBoundNs {
				t.Errorf("unclassified %d, bound %d ns at 1 analyzer rank; %d, %d at 2", cp.UnclassifiedNs, cp.UnwrappedBoundNs,
					cp2.UnclassifiedNs, cp2.UnwrappedBoundNs)
			}
			checkUnclassified(t, one, logs, mpi4, missed)
		})
	}
}

// checkUnclassified checks the path's unclassified time: its sum, the
// calls it comes from (MPI_Init and MPI_Finalize once each; with MPI 4 the
// five MPI_Waits rank 0 makes after the last recorded collective, where
// the path runs on rank 0 by design), and the bound of the time in
// unwrapped calls, which holds rank 0's wait in MPI_Allreduce_c (missed:
// why the runs did not follow the design, retryDesign).
func checkUnclassified(t *testing.T, rep *report.Report, logs []*trace.Log, mpi4 bool, missed string) {
	t.Helper()
	cp := &rep.CriticalPath
	counts := map[string]int{}
	var sum int64
	for _, o := range cp.UnclassifiedByOp {
		counts[o.Op] = o.Count
		sum += o.Ns
	}
	want := map[string]int{"MPI_Finalize": 1} // MPI_Init is a barrier: classified
	if mpi4 {
		want["MPI_Wait"] = 5
	}
	if sum != cp.UnclassifiedNs || !reflect.DeepEqual(counts, want) {
		t.Errorf("unclassified %d ns, by operation %+v (segments %v), want the sum and %v", cp.UnclassifiedNs, cp.UnclassifiedByOp, counts, want)
	}
	var compute int64
	for _, b := range cp.ByRank {
		compute += b.ComputeNs
	}
	var unwrapped int64
	for _, u := range rep.Run.UnwrappedCalls {
		unwrapped += u.Ns
	}
	if cp.UnwrappedBoundNs < 0 || cp.UnwrappedBoundNs > min(compute, unwrapped) {
		t.Errorf("unwrapped bound %d ns: more than the path's computation %d or the unwrapped calls' time %d", cp.UnwrappedBoundNs, compute, unwrapped)
	}
	if !mpi4 {
		return
	}
	wait := unwrappedNs(logs[0], "MPI_Allreduce_c") // rank 0's time in it
	if missed != "" {
		mpitest.DesignMissed(t, "the machine did not run unwrapped.c as designed %s", missed)
	}
	if cp.UnwrappedBoundNs < wait {
		t.Errorf("unwrapped bound %v, less than rank 0's wait in MPI_Allreduce_c (%v), computation on the path", time.Duration(cp.UnwrappedBoundNs), time.Duration(wait))
	}
}

// TestUnwrappedFortran: the counting wrappers catch Fortran's calls too
// (testdata/funwrapped.f90), under each MPI, with exact counts; the calls
// are not recorded.
func TestUnwrappedFortran(t *testing.T) {
	const np = 2
	for _, m := range mpitest.Impls {
		t.Run(m.Key, func(t *testing.T) {
			lib := m.LoggerLib(t)
			dir := t.TempDir()
			exe := mpitest.Compile(t, dir, m.FC(t), "funwrapped.f90")
			logDir := filepath.Join(t.TempDir(), "logs")
			m.Run(t, np, lib, logDir, dir, exe, filepath.Join(dir, "f.dat"))
			for r, l := range mpitest.ReadLogs(t, logDir, np) {
				got := map[string]uint64{}
				for _, u := range l.Header.Unwrapped {
					got[u.Name] += u.Calls
				}
				want := map[string]uint64{"MPI_Comm_set_info": 2, "MPI_File_set_size": 1, "MPI_File_preallocate": 1}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("rank %d: unwrapped calls %v, want %v", r, got, want)
				}
				ops := map[trace.Op]int{}
				for _, x := range l.Records {
					if !x.Op.IsSub() {
						ops[x.Op]++
					}
				}
				if rec := map[trace.Op]int{trace.OpInit: 1, trace.OpBufferDetach: r + 1, trace.OpFileOpen: 1, trace.OpFileClose: 1, trace.OpFinalize: 1}; !reflect.DeepEqual(ops, rec) {
					t.Errorf("rank %d: recorded calls %v, want %v", r, ops, rec)
				}
			}
		})
	}
}

// unwrappedNs is the time a log's rank spent in the unwrapped calls of
// name.
func unwrappedNs(l *trace.Log, name string) int64 {
	var ns int64
	for _, u := range l.Header.Unwrapped {
		if u.Name == name {
			ns += u.Ns
		}
	}
	return ns
}
