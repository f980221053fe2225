//go:build mpi

package e2e

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
	"github.com/cpath/cpath/trace/symbol"
)

// TestCallPaths runs callpath (main → f → g → MPI_Send/MPI_Recv and main
// → h → g → …, built with frame pointers) with CPATH_CALLDEPTH unset, 2, 4
// and out of range. With a depth, every send and receive carries its call
// path, which resolves through the modules the log lists to f (or h),
// then main, as many frames as the depth allows; every address of every
// path lies in a logged module; cpath info says the log has call paths.
// Unset or out of range (which rank 0 reports once), there are none.
func TestCallPaths(t *testing.T) {
	const np = 2
	lib := mpitest.LoggerLib(t)
	dir := t.TempDir()
	exe := mpitest.Compile(t, dir, "mpicc", "callpath.c", "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls", "-fno-inline")
	tab := symbol.NewTable()
	for _, tc := range []struct {
		name, env string
		depth     int
		warn      bool
	}{
		{"off", "", 0, false},
		{"2", "2", 2, false},
		{"4", "4", 4, false},
		{"too deep", "9", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logDir := filepath.Join(t.TempDir(), "logs")
			var env []string
			if tc.env != "" {
				env = []string{"CPATH_CALLDEPTH=" + tc.env}
			}
			out := mpitest.RunEnv(t, np, env, lib, logDir, dir, exe)
			if n := strings.Count(out, "CPATH_CALLDEPTH"); n != map[bool]int{false: 0, true: 1}[tc.warn] {
				t.Errorf("CPATH_CALLDEPTH named %d times in the output, want a warning %v:\n%s", n, tc.warn, out)
			}
			logs := mpitest.ReadLogs(t, logDir, np)
			for rank, l := range logs {
				if l.Header.CallDepth != tc.depth {
					t.Errorf("rank %d: header call depth %d, want %d", rank, l.Header.CallDepth, tc.depth)
				}
				checkPaths(t, tab, rank, l, tc.depth)
			}
			info, err := exec.Command(mpitest.CPathBin(t), "info", logDir).CombinedOutput()
			has := strings.Contains(string(info), "call paths:")
			if err != nil || has != (tc.depth > 0) {
				t.Errorf("cpath info: %v, a call paths line %v, want %v:\n%s", err, has, tc.depth > 0, info)
			}
		})
	}
}

// checkPaths checks the call paths of one rank's callpath log.
func checkPaths(t *testing.T, tab *symbol.Table, rank int, l *trace.Log, depth int) {
	t.Helper()
	name := func(a uint64) string {
		s, err := tab.Resolve(&l.Header, a)
		if err != nil {
			return err.Error()
		}
		return s.Func
	}
	seen := map[string]int{}
	for i := range l.Records {
		r := &l.Records[i]
		path := l.CallPath(r)
		if depth == 0 || r.Op.IsSub() {
			if len(path) != 0 {
				t.Fatalf("rank %d: record %d (%v) has call path %x, want none", rank, i, r.Op, path)
			}
			continue
		}
		if len(path) > depth {
			t.Fatalf("rank %d: record %d (%v) has %d return addresses, more than %d", rank, i, r.Op, len(path), depth)
		}
		for _, a := range path {
			if m, _ := l.Header.ModuleOf(a); m == nil {
				t.Errorf("rank %d: record %d (%v): return address %#x in no module of the log", rank, i, r.Op, a)
			}
		}
		if r.Op != trace.OpSend && r.Op != trace.OpRecv {
			continue
		}
		want := []string{"f", "main"}
		if r.Tag == 2 {
			want[0] = "h"
		}
		want = want[:min(depth, 2)]
		var got []string
		for _, a := range path {
			got = append(got, name(a))
		}
		if site := name(r.CallSite); site != "g" || len(got) < len(want) || strings.Join(got[:len(want)], " ") != strings.Join(want, " ") {
			t.Fatalf("rank %d: %v tag %d called from %s by %v, want g by %v", rank, r.Op, r.Tag, site, got, want)
		}
		seen[strings.Join(got, " ")]++
	}
	if depth > 0 && len(seen) != 2 {
		t.Errorf("rank %d: the sends and receives have the call paths %v, want two", rank, seen)
	}
	t.Logf("rank %d: %d distinct paths in the log; sends and receives: %v", rank, len(l.Paths)-1, seen)
}

// TestCallPathsNoFramePointers runs nofp (built with
// -fomit-frame-pointer), whose calls come from a function that holds a
// chain of fake frames in the frame-pointer register, their "return
// addresses" no code and new on every call, at CPATH_CALLDEPTH=4. No
// path may hold an address outside the modules' code: the walk ends
// there (and does not list the modules again for each, which made a C++
// solver 3× slower); the log stays a few paths. The walk follows the
// code's call frame information, not the register: each send's path
// names main, call's caller.
func TestCallPathsNoFramePointers(t *testing.T) {
	const np = 2
	if runtime.GOARCH != "amd64" {
		t.Skip("nofp.c sets the amd64 frame-pointer register")
	}
	lib := mpitest.LoggerLib(t)
	dir := t.TempDir()
	exe := mpitest.Compile(t, dir, "mpicc", "nofp.c", "-O2", "-fomit-frame-pointer")
	logDir := filepath.Join(t.TempDir(), "logs")
	mpitest.RunEnv(t, np, []string{"CPATH_CALLDEPTH=4"}, lib, logDir, dir, exe)
	const noCode, iters = 0x10000000, 2000
	tab := symbol.NewTable()
	for rank, l := range mpitest.ReadLogs(t, logDir, np) {
		sends := 0
		for i := range l.Records {
			r := &l.Records[i]
			if r.Op == trace.OpSend {
				sends++
				// The walk steps by the code's call frame information,
				// not the fake frames: call's caller is main.
				if p := l.CallPath(r); len(p) == 0 {
					t.Fatalf("rank %d: send %d has no call path, want main's call of call()", rank, sends)
				} else if s, err := tab.Resolve(&l.Header, p[0]); err != nil || s.Func != "main" {
					t.Fatalf("rank %d: send %d's caller is %v (%v), want main", rank, sends, s, err)
				}
			}
			for _, a := range l.CallPath(r) {
				if a >= noCode && a < noCode+iters*4096+16 {
					t.Fatalf("rank %d: record %d (%v) has call path %x: the fake frames' return addresses", rank, i, r.Op, l.CallPath(r))
				}
				if m, _ := l.Header.ModuleOf(a); m == nil {
					t.Fatalf("rank %d: record %d (%v): return address %#x in no module of the log", rank, i, r.Op, a)
				}
			}
		}
		if sends != iters {
			t.Errorf("rank %d: %d sends logged, want %d", rank, sends, iters)
		}
		if n := len(l.Paths) - 1; n > 10 {
			t.Errorf("rank %d: %d distinct call paths for %d sends and receives from one function", rank, n, 2*iters)
		}
		t.Logf("rank %d: %d distinct paths", rank, len(l.Paths)-1)
	}
}
