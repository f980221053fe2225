//go:build mpi

package e2e

import (
	"fmt"
	"time"

	"github.com/cpath/cpath/trace"
)

// popIdeal is the test's own ideal run of popphases.c, by the POP
// definitions and the program's known structure, independent of the
// analyzer's graph and replay: every rank runs its logged stretches of
// computation (the time between two of its MPI calls) with MPI calls that
// take no time, and a call ends when what it waits for has arrived: an
// MPI_Allreduce or MPI_Barrier when every rank has arrived at the same
// instance, an MPI_Sendrecv when its partner has arrived at theirs, an
// MPI_Recv when the matching MPI_Send has started (an ideal network
// delivers a message as soon as it is sent); an MPI_Send and every other
// call at once.
//
// It replays calls from[r] to to[r] of each rank r (each rank starting at
// the end of its call from[r], all at time 0) and returns when the last
// rank reaches the start of its call to[r]. The factors computed from it
// follow the run the machine gave, so that they hold whatever the load:
// a stretch the scheduler made longer is longer in the ideal run too.
func popIdeal(tl [][]call, from, to []int) (time.Duration, error) {
	type key struct{ r, i int }
	// The instances: the k-th collective of the window on every rank;
	// the k-th message from s to d.
	var colls [][]key
	msgs := map[[2]int][]key{} // (s, d) -> the sends from s to d: MPI_Send, MPI_Sendrecv
	recvs := map[[2]int]int{}  // (s, d) -> how many receives on d from s so far
	partOf := map[key]int{}    // a collective call -> its instance
	nth := map[key]int{}       // a receive -> which message from its source
	for r := range tl {
		k := 0
		for i := from[r] + 1; i < to[r]; i++ {
			c, at := tl[r][i], key{r, i}
			p := int(c.Peer)
			switch c.Op {
			case trace.OpAllreduce, trace.OpBarrier:
				if k == len(colls) {
					colls = append(colls, nil)
				}
				colls[k] = append(colls[k], at)
				partOf[at] = k
				k++
			case trace.OpSend:
				nth[at] = len(msgs[[2]int{r, p}])
				msgs[[2]int{r, p}] = append(msgs[[2]int{r, p}], at)
			case trace.OpRecv:
				nth[at] = recvs[[2]int{p, r}]
				recvs[[2]int{p, r}]++
			case trace.OpSendrecv: // a send to p, and a receive from p
				msgs[[2]int{r, p}] = append(msgs[[2]int{r, p}], at)
				nth[at] = recvs[[2]int{p, r}]
				recvs[[2]int{p, r}]++
			}
		}
	}
	for k, inst := range colls {
		if len(inst) != len(tl) {
			return 0, fmt.Errorf("collective %d of the window: %d ranks of %d took part", k, len(inst), len(tl))
		}
	}

	// arrive and end, memoised: each call's ideal start and end.
	ends := map[key]time.Duration{}
	var arrive, end func(r, i int) (time.Duration, error)
	arrive = func(r, i int) (time.Duration, error) {
		if i == from[r] {
			return 0, nil
		}
		t, err := end(r, i-1)
		return t + time.Duration(tl[r][i].Start-tl[r][i-1].End), err
	}
	end = func(r, i int) (time.Duration, error) {
		at := key{r, i}
		if i == from[r] {
			return 0, nil
		}
		if t, ok := ends[at]; ok {
			return t, nil
		}
		t, err := arrive(r, i)
		if err != nil {
			return 0, err
		}
		var waitsFor []key
		p := int(tl[r][i].Peer)
		switch tl[r][i].Op {
		case trace.OpAllreduce, trace.OpBarrier:
			waitsFor = colls[partOf[at]]
		case trace.OpRecv, trace.OpSendrecv:
			sends := msgs[[2]int{p, r}]
			if nth[at] >= len(sends) {
				return 0, fmt.Errorf("rank %d: %s %d from rank %d has no send in the window", r, tl[r][i].Op, nth[at], p)
			}
			waitsFor = []key{sends[nth[at]]}
		}
		for _, w := range waitsFor {
			if w == at {
				continue
			}
			u, err := arrive(w.r, w.i)
			if err != nil {
				return 0, err
			}
			t = max(t, u)
		}
		ends[at] = t
		return t, nil
	}
	var last time.Duration
	for r := range tl {
		t, err := arrive(r, to[r])
		if err != nil {
			return 0, err
		}
		last = max(last, t)
	}
	return last, nil
}
