//go:build mpi

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/timeline/timelinetest"
	"github.com/cpath/cpath/trace"
)

const (
	ioCompute = 20 * time.Millisecond  // every rank's computation before and after the write
	ioSlow    = 150 * time.Millisecond // the slow rank's write, inside the MPI-IO call
	ioSlowR   = 1                      // the slow rank
)

var spunLine = regexp.MustCompile(`ioslow: spun (\d+) in (\S+)`)

// TestIOPath runs ioslow.c, where one rank's write is slow inside the
// MPI-IO call by construction: its part of a collective write
// (MPI_File_write_at_all), or an independent write (MPI_File_write_at)
// that binds the run. The critical path must run through that write as
// I/O ("io"), not computation, and the other rank must wait for it.
func TestIOPath(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "ioslow.c", "-Wall", "-rdynamic", "-ldl")
	bin := cpathBin(t)
	for _, mode := range []struct {
		name string
		op   trace.Op
	}{{"coll", trace.OpFileWriteAtAll}, {"indep", trace.OpFileWriteAt}} {
		t.Run(mode.name, func(t *testing.T) {
			logDir, gate := runIOSlow(t, lib, exe, mode.name, mode.op)
			if gate != "" {
				designMissed(t, "ioslow.c %s did not run as designed in 3 runs (machine load): %s", mode.name, gate)
			}
			for _, a := range []analyzer{{"dag", 0}, {"delta", 2}} {
				t.Run(a.String(), func(t *testing.T) {
					// The timeline draws the io segments as the report has them.
					tlFile := filepath.Join(t.TempDir(), "timeline.json")
					_, rep := analyzeRaw(t, bin, logDir, a, "--timeline", tlFile)
					checkIOPath(t, rep, mode.op)
					b, err := os.ReadFile(tlFile)
					if err != nil {
						t.Fatal(err)
					}
					timelinetest.CheckRun(t, b, rep)
				})
			}
		})
	}
}

// runIOSlow runs ioslow.c until a run follows its design (retryUntilDesigned),
// and returns the last run's logs and, if none did, how it strayed.
func runIOSlow(t *testing.T, lib, exe, mode string, op trace.Op) (string, string) {
	t.Helper()
	tol := tolerance{Rel: 0.15, Abs: 5 * time.Millisecond}
	return retryUntilDesigned(t, func(logDir string) (gate string) {
		out := mpitest.RunEnv(t, 2, []string{"OMPI_MCA_fcoll=individual"}, lib, logDir, filepath.Dir(exe), exe,
			mode, us(ioCompute), us(ioSlow), fmt.Sprint(ioSlowR), filepath.Join(t.TempDir(), "io.dat"))
		m := spunLine.FindStringSubmatch(out)
		if m == nil || m[2] != op.String() {
			t.Fatalf("ioslow.c did not report its slow write in %v; output:\n%s", op, out)
		}
		spun, _ := strconv.ParseInt(m[1], 10, 64)
		if spun < int64(ioSlow) {
			t.Fatalf("ioslow.c spun %v in the write, designed %v", time.Duration(spun), ioSlow)
		}
		tl := timelines(mpitest.ReadLogs(t, logDir, 2))
		for r, calls := range tl {
			// Between the two Barriers: 2C of computation, and on the
			// slow rank the write of S.
			var bar []call
			var compute, write time.Duration
			for i, c := range calls {
				if len(bar) == 1 { // after the first Barrier, up to the second
					compute += time.Duration(c.Start - calls[i-1].End)
				}
				if c.Op == trace.OpBarrier {
					bar = append(bar, c)
				}
				if c.Op == op {
					write += c.dur()
				}
			}
			if len(bar) != 2 {
				t.Fatalf("rank %d logged %d Barriers, ioslow.c makes 2", r, len(bar))
			}
			if !tol.ok(compute, 2*ioCompute) {
				gate = fmt.Sprintf("rank %d computed %v between the Barriers, designed %v", r, compute, 2*ioCompute)
			}
			if r == ioSlowR && !tol.ok(write, ioSlow) {
				gate = fmt.Sprintf("the slow write took %v, designed %v", write, ioSlow)
			}
		}
		return gate
	})
}

// checkIOPath checks the report of an ioslow.c run.
func checkIOPath(t *testing.T, rep *report.Report, op trace.Op) {
	t.Helper()
	tol := tolerance{Rel: 0.15, Abs: 5 * time.Millisecond}
	cp := &rep.CriticalPath
	// The slow write is on the path, as I/O on the slow rank.
	var ioSeg time.Duration
	for _, s := range cp.Segments {
		d := time.Duration(s.EndNs - s.StartNs)
		if s.Kind == "io" && s.Op == op.String() && s.Rank == ioSlowR {
			ioSeg += d
		}
		if s.Kind == "compute" && d > ioCompute+tol.of(ioCompute) {
			t.Errorf("a stretch of computation of %v on rank %d (before %s) is on the path: longer than any designed (%v); the write's time read as computation?",
				d, s.Rank, s.Op, ioCompute)
		}
		if o, ok := trace.OpByName(s.Op); s.Kind == "io" && !(ok && (o.IsIO() || o.Class() == trace.ClassComplete)) {
			t.Errorf("segment %+v: kind io, not an MPI-IO call nor a completion of one", s)
		}
	}
	if !tol.ok(ioSeg, ioSlow) {
		t.Errorf("the path holds %v of %v on rank %d as io, designed %v; segments %+v", ioSeg, op, ioSlowR, ioSlow, cp.Segments)
	}
	// by_rank: the I/O time is in io_ns, not mpi_ns; by_op names the write.
	var slow report.RankShare
	for _, b := range cp.ByRank {
		if b.Rank == ioSlowR {
			slow = b
		}
	}
	if slow.IONs < ioSeg.Nanoseconds() || slow.IONs > ioSeg.Nanoseconds()+tol.of(ioSlow).Nanoseconds() {
		t.Errorf("by_rank[%d].io_ns = %v, want the write's %v and at most a few file calls more", ioSlowR, time.Duration(slow.IONs), ioSeg)
	}
	if slow.MPINs-pathInit(cp, ioSlowR) > int64(ioSlow)/2 {
		t.Errorf("by_rank[%d].mpi_ns = %v besides MPI_Init: the write's time counted as communication", ioSlowR, time.Duration(slow.MPINs))
	}
	found := false
	for _, o := range cp.ByOp {
		found = found || o.Op == op.String() && tol.ok(time.Duration(o.Ns), ioSlow)
	}
	if !found {
		t.Errorf("by_op has no %v of about %v: %+v", op, ioSlow, cp.ByOp)
	}
	// The other rank waits for the slow write, in the collective write
	// or the Barrier after it.
	other := 1 - ioSlowR
	var waited int64
	for _, w := range rep.Waitstates.ByRank {
		if w.Key == strconv.Itoa(other) {
			waited = w.WaitAtBarrierNs + w.WaitAtNxNNs
		}
	}
	if time.Duration(waited) < ioSlow-tol.of(ioSlow) {
		t.Errorf("rank %d waits %v for the slow write, designed %v", other, time.Duration(waited), ioSlow)
	}
	// A collective write is a collective instance of the file's communicator.
	if op.Class() == trace.ClassCollective {
		n := 0
		for _, c := range rep.Calls {
			if c.Op == op.String() && c.Comm == world {
				n++
			}
		}
		if n != 1 {
			t.Errorf("calls[] has %d instances of %v on %s, want 1", n, op, world)
		}
	}
}

// pathInit is the time of MPI_Init on rank r's part of the path (the
// launch of the job, not designed).
func pathInit(cp *report.CriticalPath, r int) int64 {
	var ns int64
	for _, s := range cp.Segments {
		if s.Rank == r && s.Kind == "mpi" && (s.Op == trace.OpInit.String() || s.Op == trace.OpInitThread.String()) {
			ns += s.EndNs - s.StartNs
		}
	}
	return ns
}
