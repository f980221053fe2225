//go:build mpi

package clocksync_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/trace"
)

// TestInjectedSkewRemoved runs a real MPI program under the logger with
// clocks distorted on purpose (CPATH_TEST_CLOCK_SKEW: rank r is 30·r ms ahead
// and runs 40·r ppm fast). All ranks share one machine and so one true
// clock, which makes the ideal correction known exactly: the offsets the
// sync measured at MPI_Init and MPI_Finalize, and the drift line between
// them, must undo the distortion to within 10 µs.
func TestInjectedSkewRemoved(t *testing.T) {
	if _, err := exec.LookPath("mpicc"); err != nil {
		t.Skip("mpicc not installed (make deps installs Open MPI)")
	}
	tmp := t.TempDir()
	lib := filepath.Join(tmp, "libcpathlog.so")
	run(t, "go", "build", "-tags", "mpi", "-buildmode=c-shared", "-o", lib, "../logger")
	prog := filepath.Join(tmp, "sleepy")
	run(t, "mpicc", "-O2", "-o", prog, "testdata/sleepy.c")
	const offNs, ppm = 30_000_000, 40.0
	for _, np := range []int{2, 3} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			dir := filepath.Join(tmp, fmt.Sprint("logs", np))
			run(t, "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", fmt.Sprint(np),
				"-x", "LD_PRELOAD="+lib, "-x", "CPATH_DIR="+dir,
				"-x", fmt.Sprintf("CPATH_TEST_CLOCK_SKEW=%d:%g", offNs, ppm), prog)
			for r := 0; r < np; r++ {
				l, err := trace.ReadFile(filepath.Join(dir, fmt.Sprintf("rank-%06d.cplog", r)))
				if err != nil {
					t.Fatal(err)
				}
				c := l.Header.Clock
				if r > 0 && (c.Injected == nil || c.Injected.OffsetNs != int64(r)*offNs) {
					t.Fatalf("rank %d: injected skew not recorded: %+v", r, c.Injected)
				}
				if c.Final == nil {
					t.Fatalf("rank %d: no clock measurement at MPI_Finalize", r)
				}
				first, last := l.Records[0].Start, l.Records[len(l.Records)-1].End
				for _, at := range []int64{c.Init.LocalNs, c.Final.LocalNs, first, (first + last) / 2, last} {
					got, want := c.Offset(at), ideal(c.Injected, at)
					t.Logf("rank %d at %+.3f s: offset %d ns, ideal %d ns, error %d ns", r,
						float64(at-c.Init.LocalNs)/1e9, got, want, got-want)
					if d := got - want; d > 10_000 || d < -10_000 {
						t.Errorf("rank %d: offset at local %d is %d ns, ideal %d ns: off by %d ns (> 10 µs)", r, at, got, want, d)
					}
				}
			}
		})
	}
}

// ideal is the exact correction for an injected skew: with true time T,
// local = T + off + (T-base)·ppm/1e6, and rank 0's clock is undistorted.
func ideal(s *trace.Skew, local int64) int64 {
	if s == nil {
		return 0
	}
	k := s.DriftPPM / 1e6
	tru := (float64(local) - float64(s.OffsetNs) + float64(s.BaseNs)*k) / (1 + k)
	return int64(tru) - local
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "OMPI_MCA_rmaps_base_oversubscribe=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}
