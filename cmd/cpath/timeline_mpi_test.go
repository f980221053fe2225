//go:build mpi

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/timeline/timelinetest"
)

// timelines writes the timeline of dir with one analyzer process and with
// an MPI job of two, checks that the two files are the same and that the
// timeline draws what the report says (timelinetest.CheckRun), and
// returns it read back with the report.
func timelines(t *testing.T, dir string) (*timelinetest.Trace, *report.Report) {
	t.Helper()
	one, two := filepath.Join(t.TempDir(), "one.json"), filepath.Join(t.TempDir(), "two.json")
	rep := analyzeJSON(t, "--timeline", one, dir)
	if code, _, errs := mpiCPath(t, 2, "analyze", "--timeline", two, dir); code != 0 {
		t.Fatalf("mpirun -np 2 cpath --timeline: exit %d: %s", code, errs)
	}
	a, err := os.ReadFile(one)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(two)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("the timeline of mpirun -np 2 (%d bytes) differs from one process's (%d bytes)", len(b), len(a))
	}
	tr := timelinetest.CheckRun(t, a, rep)
	t.Logf("%d bytes: %d MPI slices, %d arrows, %d waits, %d critical; run %d calls, %d messages, %d segments", len(a),
		len(tr.MPI), len(tr.Starts), len(tr.Wait), len(tr.Critical), rep.Run.Calls, rep.Run.Messages, len(rep.CriticalPath.Segments))
	return tr, rep
}

// TestTimelineRecorded: the timeline of the example program (halo) and of
// a designed one (report/e2e/testdata/latesender.c), each recorded at 2
// ranks, is the same file from one analyzer process and from mpirun -np
// 2, valid trace-event JSON with the report's calls, messages and
// critical-path segments. On latesender its design shows: every one of
// rank 0's N MPI_Waitall slices receives the arrows of its M messages, from
// rank 1's sends, and holds a Late Sender wait of about M·D; the critical
// path computes on rank 1, N·M·D in all.
func TestTimelineRecorded(t *testing.T) {
	lib := needMPI(t)
	t.Run("halo", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "logs")
		mpitest.Run(t, 2, lib, dir, t.TempDir(), buildHalo(t), "20", "2000")
		timelines(t, dir)
	})
	t.Run("threads", func(t *testing.T) {
		// Threads: each (rank, thread) its own track, named, its slices
		// nested and its arrows inside its own calls (timelinetest).
		t.Setenv("OMPI_MCA_hwloc_base_binding_policy", "none")
		src := filepath.Join(mpitest.RepoRoot(t), "report", "e2e", "testdata")
		prog := mpitest.Compile(t, t.TempDir(), "mpicc", filepath.Join(src, "threads.c"), "-I", src, "-lpthread")
		dir := filepath.Join(t.TempDir(), "logs")
		out := mpitest.RunEnv(t, 2, []string{"OMPI_MCA_mpi_yield_when_idle=1"}, lib, dir, t.TempDir(), prog, "2", "3", "500", "2000")
		if strings.Contains(out, "CPATH-SKIP") {
			t.Skipf("Open MPI does not provide MPI_THREAD_MULTIPLE here: %s", out)
		}
		tr, _ := timelines(t, dir)
		tracks := map[[2]int64]bool{}
		for k := range tr.ByTrack {
			if k[0] <= 2 {
				tracks[k] = true
			}
		}
		if len(tracks) != 6 {
			t.Fatalf("%d tracks of rank slices, want 3 threads × 2 ranks: %v", len(tracks), tracks)
		}
	})
	t.Run("latesender", func(t *testing.T) {
		const n, m, d = 8, 4, 3000 // iterations, messages per iteration, µs of computation before each
		src := filepath.Join(mpitest.RepoRoot(t), "report", "e2e", "testdata")
		prog := mpitest.Compile(t, t.TempDir(), "mpicc", filepath.Join(src, "latesender.c"), "-I", src)
		var missed string
		for attempt := 1; attempt <= 3; attempt++ {
			dir := filepath.Join(t.TempDir(), "logs")
			mpitest.Run(t, 2, lib, dir, t.TempDir(), prog, fmt.Sprint(n), fmt.Sprint(m), fmt.Sprint(d))
			tr, rep := timelines(t, dir)
			checkLateSenderArrows(t, tr, rep, n, m)
			if missed = lateSenderDesign(tr, n, m, d); missed == "" {
				return
			}
			t.Logf("attempt %d: %s", attempt, missed)
		}
		mpitest.DesignMissed(t, "the loaded machine did not run latesender as designed in 3 attempts: %s", missed)
	})
}

// checkLateSenderArrows checks what latesender's timeline has exactly,
// whatever the machine's load: N·M messages, whose arrows go from rank
// 1's MPI_Send and MPI_Isend slices into rank 0's N MPI_Waitall slices,
// M into each.
func checkLateSenderArrows(t *testing.T, tr *timelinetest.Trace, rep *report.Report, n, m int) {
	t.Helper()
	if rep.Run.Messages != n*m {
		t.Fatalf("%d messages, want %d", rep.Run.Messages, n*m)
	}
	arrowsInto := map[float64]int{} // by the start of rank 0's Waitall
	var waitalls []timelinetest.Event
	for _, e := range tr.MPI {
		if e.Pid == 1 && e.Name == "MPI_Waitall" {
			waitalls = append(waitalls, e)
		}
	}
	for id, f := range tr.Ends {
		s := tr.Starts[id]
		if f.Pid != 1 || s.Pid != 2 {
			t.Fatalf("arrow %d from pid %d to pid %d, want rank 1 (pid 2) to rank 0 (pid 1)", id, s.Pid, f.Pid)
		}
		for _, w := range waitalls {
			if timelinetest.NS(w.Ts) < timelinetest.NS(f.Ts) && timelinetest.NS(f.Ts) < timelinetest.NS(w.Ts+w.Dur) {
				arrowsInto[w.Ts]++
			}
		}
		if !sliceAt(tr, s, "MPI_Send", "MPI_Isend") {
			t.Fatalf("arrow %d starts at %v µs on pid %d, in no MPI_Send or MPI_Isend", id, s.Ts, s.Pid)
		}
	}
	if len(waitalls) != n || len(arrowsInto) != n {
		t.Fatalf("%d MPI_Waitall slices on rank 0, %d of them receive arrows; want %d", len(waitalls), len(arrowsInto), n)
	}
	for ts, k := range arrowsInto {
		if k != m {
			t.Fatalf("the MPI_Waitall at %v µs receives %d arrows, want %d", ts, k, m)
		}
	}
}

// lateSenderDesign says how latesender's timeline misses its design (""
// if it does not): each of rank 0's N MPI_Waitall slices holds a Late
// Sender wait, and rank 0 waits as long as rank 1 computes on the
// critical path (within 10 %), at least N·M·D (spin_us never returns
// early; a loaded machine only stretches the computation, and the wait
// with it).
func lateSenderDesign(tr *timelinetest.Trace, n, m, d int) string {
	var waited, computed int64
	var waits int
	for _, e := range tr.Wait {
		if e.Pid == 1 && e.Name == "Late Sender" {
			waited += int64(e.Args["wait_ns"].(float64))
			waits++
		}
	}
	for _, e := range tr.Critical {
		if e.Pid == 2 && e.Cat == "compute" {
			computed += timelinetest.NS(e.Dur)
		}
	}
	want := int64(n * m * d * 1000)
	if waits != n || computed < want*9/10 || waited < computed*9/10 || waited > computed*11/10 {
		return fmt.Sprintf("rank 0 waited %d ns in %d Late Sender slices, the path computes %d ns on rank 1; designed: at least %d ns, in %d, alike",
			waited, waits, computed, want, n)
	}
	return ""
}

// sliceAt says whether an event lies inside an MPI slice of one of ops on
// its thread.
func sliceAt(tr *timelinetest.Trace, x timelinetest.Event, ops ...string) bool {
	for _, s := range tr.ByTrack[[2]int64{x.Pid, x.Tid}] {
		for _, op := range ops {
			if s.Name == op && timelinetest.NS(s.Ts) <= timelinetest.NS(x.Ts) && timelinetest.NS(x.Ts) <= timelinetest.NS(s.Ts+s.Dur) {
				return true
			}
		}
	}
	return false
}

// TestTimelineCap: on a generated run, a budget far below the whole
// timeline gives a file under it, a line on stderr and a note in the file
// saying what was left out, and the whole critical path; the same file
// from one analyzer process and from two.
func TestTimelineCap(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Write(gen.Spec{Dir: dir, Ranks: 8, CallsPerRank: 20000, Pattern: gen.Halo, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(t.TempDir(), "full.json")
	rep := analyzeJSON(t, "--timeline", full, "--timeline-max-mb=0", dir)
	st, err := os.Stat(full)
	if err != nil {
		t.Fatal(err)
	}
	budget := st.Size() / 4
	mb := fmt.Sprintf("%g", float64(budget)/1e6)
	var files [2][]byte
	for i, np := range []int{1, 2} {
		file := filepath.Join(t.TempDir(), "capped.json")
		code, _, errs := mpiCPath(t, np, "analyze", "--timeline", file, "--timeline-max-mb="+mb, dir)
		note := regexp.MustCompile(`(?m)^timeline ` + regexp.QuoteMeta(file) + `: left out (\d+) of (\d+) MPI calls .*to stay under ` +
			regexp.QuoteMeta(mb) + ` MB \(--timeline-max-mb\); the critical path is complete$`)
		if code != 0 || len(note.FindAllString(errs, -1)) != 1 {
			t.Fatalf("np=%d: exit %d, stderr %q: want one line saying what was left out", np, code, errs)
		}
		if files[i], err = os.ReadFile(file); err != nil {
			t.Fatal(err)
		}
		if int64(len(files[i])) > budget {
			t.Fatalf("np=%d: %d bytes, over the budget of %d", np, len(files[i]), budget)
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("the capped timeline of mpirun -np 2 differs from one process's")
	}
	tr := timelinetest.Parse(t, files[0])
	segs := rep.CriticalPath.Segments
	if len(tr.Critical) != len(segs) || len(tr.MPI) >= rep.Run.Calls || !strings.Contains(fmt.Sprint(tr.Meta["left_out"]), "the critical path is complete") {
		t.Fatalf("%d critical slices for %d segments, %d of %d calls drawn; the file says %q", len(tr.Critical), len(segs), len(tr.MPI),
			rep.Run.Calls, tr.Meta["left_out"])
	}
	timelinetest.CheckTrack(t, tr, segs)
	t.Logf("%d of %d bytes; %d of %d calls, %d of %d arrows", len(files[0]), st.Size(), len(tr.MPI), rep.Run.Calls, len(tr.Starts), rep.Run.Messages)
}

// TestTimelineBadInputMPI: a window outside the run, or a timeline that
// cannot be created or written, ends a 2-rank analyzer job with one line
// and a non-zero exit, without hanging.
func TestTimelineBadInputMPI(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 2)
	for _, args := range [][]string{{"--from=1h"}, {"--from=1h", "--timeline", filepath.Join(t.TempDir(), "t.json")}, {"--from=2ms", "--to=1ms"},
		{"--timeline", filepath.Join(t.TempDir(), "no", "t.json")}, {"--timeline", "/dev/full"}} {
		code, out, errs := mpiCPath(t, 2, append(append([]string{"analyze"}, args...), dir)...)
		if lines := cpathLines(errs); code == 0 || len(lines) != 1 || strings.TrimSpace(out) != "" {
			t.Fatalf("%v: exit %d, cpath lines %q, stdout %.200q", args, code, lines, out)
		}
	}
}
