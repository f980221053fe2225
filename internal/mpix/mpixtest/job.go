// Package mpixtest is an in-process job of goroutines behind mpix.Comm,
// for unit-testing the collective code paths of the graph builder and the
// algorithms with several ranks without MPI (the MPI tests run the same
// code under mpirun).
package mpixtest

import (
	"fmt"
	"sync"
	"time"

	"github.com/cpath/cpath/internal/mpix"
)

// Run runs f on every rank of an in-process job of p ranks (mpix.Single
// for one) and waits for all.
func Run(p int, f func(c mpix.Comm)) {
	if p == 1 {
		f(&mpix.Single{})
		return
	}
	h := newHub(p)
	var wg sync.WaitGroup
	for r := 0; r < p; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			f(&rank{h: h, rank: r})
		}(r)
	}
	wg.Wait()
}

// hub joins the ranks of an in-process job (goroutines), so that the
// distributed algorithms' collective code paths can be unit-tested with
// several ranks without MPI (the MPI tests run them under mpirun).
// Every collective is two barriers: contributions are posted, every rank
// reads what it needs, and nobody posts again before all have read. Ranks
// that call different collectives, or a rank that never comes, panic
// instead of hanging the test.
type hub struct {
	p     int
	mu    sync.Mutex
	count int
	ch    chan struct{}
	slots []any
	ops   []string
}

func newHub(p int) *hub {
	return &hub{p: p, ch: make(chan struct{}), slots: make([]any, p), ops: make([]string, p)}
}

func (h *hub) barrier(op string) {
	h.mu.Lock()
	ch := h.ch
	h.count++
	if h.count == h.p {
		h.count = 0
		h.ch = make(chan struct{})
		close(ch)
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		panic("in-process job: a rank never reached collective " + op)
	}
}

// rank is one rank of a hub's job.
type rank struct {
	h            *hub
	rank         int
	bytes, calls int64
}

func (c *rank) Rank() int             { return c.rank }
func (c *rank) Size() int             { return c.h.p }
func (c *rank) Stats() (int64, int64) { return c.bytes, c.calls }

func (c *rank) collective(op string, mine any, read func(all []any)) {
	h := c.h
	c.calls++
	h.slots[c.rank], h.ops[c.rank] = mine, op
	h.barrier(op)
	for p, o := range h.ops {
		if o != op {
			panic(fmt.Sprintf("in-process job: rank %d calls %s while rank %d calls %s", c.rank, op, p, o))
		}
	}
	read(h.slots)
	h.barrier(op)
}

func (c *rank) Alltoallv(send [][]byte) ([][]byte, error) {
	if len(send) != c.h.p {
		return nil, fmt.Errorf("Alltoallv with %d parts for %d ranks", len(send), c.h.p)
	}
	for p, b := range send {
		if p != c.rank {
			c.bytes += int64(len(b))
		}
	}
	recv := make([][]byte, c.h.p)
	c.collective("Alltoallv", send, func(all []any) {
		for p, a := range all {
			recv[p] = append([]byte{}, a.([][]byte)[c.rank]...)
		}
	})
	return recv, nil
}

func (c *rank) Allgatherv(b []byte) ([][]byte, error) {
	c.bytes += int64(len(b)) * int64(c.h.p-1)
	recv := make([][]byte, c.h.p)
	c.collective("Allgatherv", b, func(all []any) {
		for p, a := range all {
			recv[p] = append([]byte{}, a.([]byte)...)
		}
	})
	return recv, nil
}

func (c *rank) Gatherv(b []byte) ([][]byte, error) {
	var recv [][]byte
	if c.rank == 0 {
		recv = make([][]byte, c.h.p)
	} else {
		c.bytes += int64(len(b))
	}
	c.collective("Gatherv", b, func(all []any) {
		if c.rank != 0 {
			return
		}
		for p, a := range all {
			recv[p] = append([]byte{}, a.([]byte)...)
		}
	})
	return recv, nil
}

func (c *rank) Allreduce(x []int64, op mpix.Op) error {
	var out []int64
	c.collective(fmt.Sprintf("Allreduce(%d,%d)", len(x), op), x, func(all []any) {
		out = append([]int64{}, all[0].([]int64)...)
		for _, a := range all[1:] {
			for i, y := range a.([]int64) {
				switch op {
				case mpix.Sum:
					out[i] += y
				case mpix.Min:
					out[i] = min(out[i], y)
				default:
					out[i] = max(out[i], y)
				}
			}
		}
	})
	copy(x, out)
	return nil
}
