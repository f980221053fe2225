//go:build mpi

package e2e

import (
	"fmt"
	"time"

	"github.com/cpath/cpath/trace"
)

// Wait-state kinds, named as the JSON report names them.
const (
	lateSender    = "late_sender"
	lateReceiver  = "late_receiver"
	wrongOrder    = "wrong_order"
	waitAtBarrier = "wait_at_barrier"
	waitAtNxN     = "wait_at_nxn"
	lateBroadcast = "late_broadcast"
	earlyReduce   = "early_reduce"
)

var waitKinds = []string{lateSender, lateReceiver, wrongOrder, waitAtBarrier, waitAtNxN, lateBroadcast, earlyReduce}

// waits is designed wait-state time by kind; a kind left out is designed
// to be zero.
type waits map[string]time.Duration

// collDesign is what the report's calls[] must say about the instances of
// one collective operation on one communicator: after the first skip
// instances (by seq), n instances of members ranks, where lastRank(i) (if
// not nil) arrives last at the i-th, and the others wait waitBefore in all.
type collDesign struct {
	op, comm   string
	skip, n    int
	members    int
	lastRank   func(i int) int
	waitBefore time.Duration
}

// design is a test program with its arguments and everything its
// construction fixes. The designed part of a run starts after the program's
// first align calls after MPI_Init, which synchronise the ranks (Barriers,
// a Comm_split); what comes before (MPI_Init, the launch skew, the first
// Barrier) is measured in the logs, not designed.
type design struct {
	name  string
	src   string
	np    int
	args  []string
	align int
	tol   tolerance

	// What the logs must show for the run to count as one that followed
	// its design (else the test runs it again): this computation per rank
	// in the designed part, besides the designed waits, path computation
	// and collective instances below.
	compute []time.Duration

	// What the analyzer must report.
	pathCompute []time.Duration // per rank: computation on the critical path in the designed part
	// onPath says whether the computation on rank r that ends at its
	// k-th call of the designed part, an op, is on the critical path by
	// design (the measured counterpart of pathCompute).
	onPath      func(r, k int, op trace.Op) bool
	order       []int         // the ranks whose computation the path runs through, in time order
	stretch     time.Duration // the shortest designed stretch of computation on the path
	minWait     time.Duration // the shortest designed wait in one call
	waits       waits         // wait states in all
	waitsByRank []waits
	waitsByOp   map[string]waits
	waitsByComm map[string]waits
	colls       []collDesign
}

func (d *design) init() {
	d.compute = make([]time.Duration, d.np)
	d.pathCompute = make([]time.Duration, d.np)
	d.waitsByRank = make([]waits, d.np)
	for r := 0; r < d.np; r++ {
		d.waitsByRank[r] = waits{}
	}
	d.waits = waits{}
	d.waitsByOp = map[string]waits{}
	d.waitsByComm = map[string]waits{}
	if d.np <= 2 {
		// Abs: a few ms, more than a scheduler tick (4 ms) that a rank
		// descheduled once may lose.
		d.tol = tolerance{Rel: 0.15, Abs: 5 * time.Millisecond}
	} else {
		// More ranks than cores: the pollers and the computing ranks share them.
		d.tol = tolerance{Rel: 0.25, Abs: 8 * time.Millisecond}
	}
}

// addWait books a designed wait of rank r in op on comm.
func (d *design) addWait(r int, kind, op, comm string, w time.Duration) {
	if w == 0 {
		return
	}
	d.waits[kind] += w
	d.waitsByRank[r][kind] += w
	addWaits(d.waitsByOp, op, kind, w)
	addWaits(d.waitsByComm, comm, kind, w)
}

const world = "W0.0"

// slowAllreduce: n iterations of base (+extra on rank slow), Allreduce.
func slowAllreduce(np, n int, base, extra time.Duration, slow int) design {
	d := design{name: fmt.Sprintf("slowallreduce/np%d", np), src: "slowallreduce.c", np: np,
		args: []string{fmt.Sprint(n), us(base), us(extra), fmt.Sprint(slow)}, align: 1}
	d.init()
	N := time.Duration(n)
	for r := 0; r < np; r++ {
		d.compute[r] = N * base
		if r == slow {
			d.compute[r] += N * extra
			continue
		}
		d.addWait(r, waitAtNxN, "MPI_Allreduce", world, N*extra)
	}
	d.pathCompute[slow] = N * (base + extra)
	d.onPath = func(r, k int, c trace.Op) bool { return r == slow && c == trace.OpAllreduce }
	d.order = []int{slow}
	d.stretch, d.minWait = base+extra, extra
	d.colls = []collDesign{
		{op: "MPI_Allreduce", comm: world, n: n, members: np, lastRank: func(int) int { return slow },
			waitBefore: time.Duration(np-1) * extra},
		{op: "MPI_Barrier", comm: world, skip: 1, n: 1, members: np}, // the last one: no wait
	}
	return d
}

// tokenRing: rounds rounds of the token around the ring, rank k computing
// c[k] before it forwards it.
func tokenRing(rounds int, c ...time.Duration) design {
	np := len(c)
	d := design{name: fmt.Sprintf("tokenring/np%d", np), src: "tokenring.c", np: np,
		args: []string{fmt.Sprint(rounds)}, align: 1}
	for _, ck := range c {
		d.args = append(d.args, us(ck))
	}
	d.init()
	R := time.Duration(rounds)
	var cycle time.Duration
	d.stretch = c[0]
	for _, ck := range c {
		cycle += ck
		d.stretch = min(d.stretch, ck)
	}
	d.minWait = d.stretch
	var before, barrierWait time.Duration // Σ c[j] for j < k
	for k := 0; k < np; k++ {
		d.compute[k] = R * c[k]
		d.pathCompute[k] = R * c[k]
		// Rank 0 waits for the token to come back each round; rank k > 0
		// waits for it to come from rank 0 first, then once around.
		recvWait := R * (cycle - c[0])
		var bw time.Duration // the final Barrier: rank k waits for the ranks after it
		if k > 0 {
			recvWait = before + (R-1)*(cycle-c[k])
			bw = cycle - before - c[k]
		}
		d.addWait(k, lateSender, "MPI_Recv", world, recvWait)
		if bw > 0 {
			d.addWait(k, waitAtBarrier, "MPI_Barrier", world, bw)
			barrierWait += bw
		}
		before += c[k]
	}
	d.onPath = func(r, k int, c trace.Op) bool { return c == trace.OpSend }
	for r := 0; r < rounds; r++ {
		for k := 0; k < np; k++ {
			d.order = append(d.order, k)
		}
	}
	d.colls = []collDesign{{op: "MPI_Barrier", comm: world, skip: 1, n: 1, members: np, waitBefore: barrierWait}}
	return d
}

// tokenRingFreed is tokenRing with the even rounds' sends made by
// MPI_Isend and MPI_Request_free (tokenring.c -f): a freed send still takes
// its place in the messages' order, so each receive matches its own
// round's send.
func tokenRingFreed(rounds int, c ...time.Duration) design {
	d := tokenRing(rounds, c...)
	d.name = fmt.Sprintf("tokenring-freed/np%d", d.np)
	d.args = append([]string{"-f"}, d.args...)
	d.onPath = func(r, k int, c trace.Op) bool { return c == trace.OpSend || c == trace.OpIsend }
	return d
}

// lateBarrier: n iterations of base (+late on rank i%np), Barrier.
func lateBarrier(np, n int, base, late time.Duration) design {
	d := design{name: fmt.Sprintf("latebarrier/np%d", np), src: "latebarrier.c", np: np,
		args: []string{fmt.Sprint(n), us(base), us(late)}, align: 1}
	d.init()
	if n%np != 0 {
		panic("latebarrier: n must be a multiple of np")
	}
	N, per := time.Duration(n), time.Duration(n/np)
	for r := 0; r < np; r++ {
		d.compute[r] = N*base + per*late
		d.pathCompute[r] = per * (base + late)
		d.addWait(r, waitAtBarrier, "MPI_Barrier", world, (N-per)*late)
	}
	for i := 0; i < n; i++ {
		d.order = append(d.order, i%np)
	}
	d.onPath = func(r, k int, c trace.Op) bool { return k < n && k%np == r }
	d.stretch, d.minWait = base+late, late
	d.colls = []collDesign{{op: "MPI_Barrier", comm: world, skip: 1, n: n, members: np,
		lastRank: func(i int) int { return i % np }, waitBefore: time.Duration(np-1) * late}}
	return d
}

// lateSender: n iterations of m messages from rank 1, each after dd of
// computation, into Irecvs rank 0 posted at once and completes with Waitall.
func lateSenderDesign(n, m int, dd time.Duration) design {
	d := design{name: "latesender/np2", src: "latesender.c", np: 2,
		args: []string{fmt.Sprint(n), fmt.Sprint(m), us(dd)}, align: 1}
	d.init()
	all := time.Duration(n*m) * dd
	d.compute[1] = all
	d.pathCompute[1] = all
	d.onPath = func(r, k int, c trace.Op) bool { return r == 1 && (c == trace.OpSend || c == trace.OpIsend) }
	d.addWait(0, lateSender, "MPI_Waitall", world, all)
	d.order = []int{1}
	d.stretch, d.minWait = dd, dd
	d.colls = []collDesign{{op: "MPI_Barrier", comm: world, skip: 1, n: 1, members: 2}}
	return d
}

// lateReceiver: n Ssends from rank 0, each received by rank 1 after dd of
// computation.
func lateReceiverDesign(n int, dd time.Duration) design {
	d := design{name: "latereceiver/np2", src: "latereceiver.c", np: 2,
		args: []string{fmt.Sprint(n), us(dd)}, align: 1}
	d.init()
	all := time.Duration(n) * dd
	d.compute[1] = all
	d.pathCompute[1] = all
	d.onPath = func(r, k int, c trace.Op) bool { return r == 1 && c == trace.OpRecv }
	d.addWait(0, lateReceiver, "MPI_Ssend", world, all)
	d.order = []int{1}
	d.stretch, d.minWait = dd, dd
	d.colls = []collDesign{{op: "MPI_Barrier", comm: world, skip: 1, n: 1, members: 2}}
	return d
}

// subComm: world split in halves; n iterations of base (+extra on rank
// slow), Allreduce on the half, Barrier on world.
func subComm(np, n int, base, extra time.Duration, slow int) design {
	d := design{name: fmt.Sprintf("subcomm/np%d", np), src: "subcomm.c", np: np,
		args: []string{fmt.Sprint(n), us(base), us(extra), fmt.Sprint(slow)}, align: 3}
	d.init()
	h := np / 2
	slowHalf := slow / h
	// Comm_split names: 'S', the world rank of local rank 0, its creation
	// counter (the first communicator it leads).
	name := func(half int) string { return fmt.Sprintf("S%d.1", half*h) }
	N := time.Duration(n)
	for r := 0; r < np; r++ {
		d.compute[r] = N * base
		switch {
		case r == slow:
			d.compute[r] += N * extra
		case r/h == slowHalf:
			d.addWait(r, waitAtNxN, "MPI_Allreduce", name(slowHalf), N*extra)
		default:
			d.addWait(r, waitAtBarrier, "MPI_Barrier", world, N*extra)
		}
	}
	other := 1 - slowHalf
	d.waitsByComm[name(other)] = waits{} // reported or not, nothing waits there
	d.pathCompute[slow] = N * (base + extra)
	d.onPath = func(r, k int, c trace.Op) bool { return r == slow && c == trace.OpAllreduce }
	d.order = []int{slow}
	d.stretch, d.minWait = base+extra, extra
	d.colls = []collDesign{
		{op: "MPI_Allreduce", comm: name(slowHalf), n: n, members: h, lastRank: func(int) int { return slow },
			waitBefore: time.Duration(h-1) * extra},
		{op: "MPI_Allreduce", comm: name(other), n: n, members: h},
		{op: "MPI_Barrier", comm: world, skip: 2, n: n, members: np, waitBefore: time.Duration(h) * extra},
	}
	return d
}

// designs is the table of runs, sized to keep the package near a minute on
// a two-core machine: every designed stretch of computation and every
// designed wait is 10-25 ms, a run's designed part 90-200 ms.
func designs() []design {
	const ms = time.Millisecond
	return []design{
		slowAllreduce(2, 5, 10*ms, 20*ms, 1),
		tokenRing(3, 10*ms, 15*ms, 20*ms),
		tokenRingFreed(4, 10*ms, 15*ms, 20*ms),
		lateBarrier(2, 6, 5*ms, 20*ms),
		lateBarrier(4, 8, 0, 25*ms),
		lateSenderDesign(3, 4, 10*ms),
		lateReceiverDesign(6, 15*ms),
		subComm(4, 5, 0, 20*ms, 1),
	}
}
