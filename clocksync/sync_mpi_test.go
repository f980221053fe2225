//go:build mpi

package clocksync_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// TestInjectedSkewRemoved runs a real MPI program under the logger with
// clocks distorted on purpose (CPATH_TEST_CLOCK_SKEW: rank r is 30·r ms ahead
// and runs 40·r ppm fast). All ranks share one machine and so one true
// clock, which makes the ideal correction known exactly: the offsets the
// sync measured at MPI_Init and MPI_Finalize, and the drift line between
// them, must undo the distortion to within 10 µs.
func TestInjectedSkewRemoved(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	tmp := t.TempDir()
	prog := mpitest.Compile(t, tmp, "mpicc", "sleepy.c", "-O2")
	const offNs, ppm = 30_000_000, 40.0
	for _, np := range []int{2, 3} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			dir := filepath.Join(tmp, fmt.Sprint("logs", np))
			skew := fmt.Sprintf("CPATH_TEST_CLOCK_SKEW=%d:%g", offNs, ppm)
			mpitest.RunEnv(t, np, []string{skew}, lib, dir, tmp, prog)
			for r, l := range mpitest.ReadLogs(t, dir, np) {
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
					// The target is 10 µs with a core per rank. Oversubscribed
					// (np > cores), a rank may be descheduled mid round trip; the
					// sync then reports a larger error bound, which must hold.
					limit := int64(10_000)
					if np > runtime.NumCPU() {
						limit = max(limit, 2*max(c.Init.ErrNs, errNs(c.Final)))
					}
					if d := got - want; d > limit || d < -limit {
						t.Errorf("rank %d: offset at local %d is %d ns, ideal %d ns: off by %d ns (limit %d ns)", r, at, got, want, d, limit)
					}
				}
			}
		})
	}
}

func errNs(p *trace.SyncPoint) int64 {
	if p == nil {
		return 0
	}
	return p.ErrNs
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
