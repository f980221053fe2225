// Package clocksync estimates how each rank's clock relates to rank 0's, so
// that the analyzer can put all ranks' events on one timeline.
//
// Two estimators, both run by the logger inside MPI_Init (and the second
// again inside MPI_Finalize):
//
//   - Allreduce: the paper's method. After a barrier every rank reads its
//     clock, an Allreduce takes the maximum, and the offset is that maximum
//     minus the local read. Cheap, but only as good as the barrier's skew.
//   - PingPong: Cristian's method, as Score-P does it. Rank 0 answers a
//     series of timed round trips from every other rank; the round trip
//     with the smallest latency gives the offset, to within half of it.
//
// Measuring PingPong at Init and at Finalize gives two points of a linear
// drift model (trace.Clock.Offset), which the analyzer applies.
package clocksync

import (
	"fmt"
	"math"

	"github.com/cpath/cpath/trace"
)

// Comm is the little MPI the estimators need. The logger implements it with
// empi on MPI_COMM_WORLD.
type Comm interface {
	Rank() int
	Size() int
	Barrier() error
	// AllreduceMax returns the maximum of v over all ranks.
	AllreduceMax(v int64) (int64, error)
	Send(to, tag int, v []int64) error
	Recv(from, tag int, v []int64) error
}

// Clock reads the local clock in ns.
type Clock func() int64

// Allreduce returns this rank's offset by the paper's method.
func Allreduce(c Comm, now Clock) (int64, error) {
	if err := c.Barrier(); err != nil {
		return 0, err
	}
	t := now()
	m, err := c.AllreduceMax(t)
	if err != nil {
		return 0, err
	}
	return m - t, nil
}

// Tag used by the ping-pong messages; the logger's own traffic is not logged.
const tag = 0x6370 // "cp"

// PingPong returns this rank's offset from rank 0 measured with rounds round
// trips. Rank 0 gets a zero offset. Every rank must call it.
func PingPong(c Comm, now Clock, rounds int) (trace.SyncPoint, error) {
	if rounds < 1 {
		rounds = 1
	}
	rank, size := c.Rank(), c.Size()
	buf := make([]int64, 1)
	if rank == 0 {
		for r := 1; r < size; r++ {
			for i := 0; i < rounds; i++ {
				if err := c.Recv(r, tag, buf); err != nil {
					return trace.SyncPoint{}, err
				}
				buf[0] = now()
				if err := c.Send(r, tag, buf); err != nil {
					return trace.SyncPoint{}, err
				}
			}
		}
		return trace.SyncPoint{LocalNs: now()}, nil
	}
	best := trace.SyncPoint{ErrNs: math.MaxInt64}
	for i := 0; i < rounds; i++ {
		t1 := now()
		buf[0] = t1
		if err := c.Send(0, tag, buf); err != nil {
			return trace.SyncPoint{}, err
		}
		if err := c.Recv(0, tag, buf); err != nil {
			return trace.SyncPoint{}, err
		}
		t2 := now()
		if t2 < t1 {
			return trace.SyncPoint{}, fmt.Errorf("clocksync: local clock went backwards (%d -> %d)", t1, t2)
		}
		mid := t1 + (t2-t1)/2
		if half := (t2 - t1 + 1) / 2; half < best.ErrNs {
			best = trace.SyncPoint{LocalNs: mid, OffsetNs: buf[0] - mid, ErrNs: half}
		}
	}
	return best, nil
}
