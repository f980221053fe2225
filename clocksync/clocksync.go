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

// PingPong returns this rank's offset from rank 0 measured with at least
// rounds round trips, and up to MaxRoundsFactor times as many while the
// best round trip is still slower than GoodErrNs·2: on a loaded machine
// a rank or rank 0 may be descheduled in every one of the first rounds,
// and an offset good to ± milliseconds puts the whole run's events that
// far off. Rank 0 gets a zero offset. Every rank must call it.
//
// Each round is the rank's time sent to rank 0 with a flag to go on, and
// rank 0's time sent back; a flag of 0 ends the rank's turn.
func PingPong(c Comm, now Clock, rounds int) (trace.SyncPoint, error) {
	if rounds < 1 {
		rounds = 1
	}
	rank, size := c.Rank(), c.Size()
	msg, reply := make([]int64, 2), make([]int64, 1)
	if rank == 0 {
		for r := 1; r < size; r++ {
			for {
				if err := c.Recv(r, tag, msg); err != nil {
					return trace.SyncPoint{}, err
				}
				if msg[1] == 0 {
					break
				}
				reply[0] = now()
				if err := c.Send(r, tag, reply); err != nil {
					return trace.SyncPoint{}, err
				}
			}
		}
		return trace.SyncPoint{LocalNs: now()}, nil
	}
	best := trace.SyncPoint{ErrNs: math.MaxInt64}
	for i := 0; i < rounds || best.ErrNs > GoodErrNs && i < MaxRoundsFactor*rounds; i++ {
		t1 := now()
		msg[0], msg[1] = t1, 1
		if err := c.Send(0, tag, msg); err != nil {
			return trace.SyncPoint{}, err
		}
		if err := c.Recv(0, tag, reply); err != nil {
			return trace.SyncPoint{}, err
		}
		t2 := now()
		if t2 < t1 {
			return trace.SyncPoint{}, fmt.Errorf("clocksync: local clock went backwards (%d -> %d)", t1, t2)
		}
		mid := t1 + (t2-t1)/2
		if half := (t2 - t1 + 1) / 2; half < best.ErrNs {
			best = trace.SyncPoint{LocalNs: mid, OffsetNs: reply[0] - mid, ErrNs: half}
		}
	}
	msg[0], msg[1] = 0, 0
	if err := c.Send(0, tag, msg); err != nil {
		return trace.SyncPoint{}, err
	}
	return best, nil
}

// GoodErrNs is the error (half the best round trip) at which PingPong
// stops after its first rounds; a round trip in shared memory takes about
// a microsecond, one across a network a few. MaxRoundsFactor bounds the
// rounds it adds to reach it.
const (
	GoodErrNs       = 20_000
	MaxRoundsFactor = 8
)
