//go:build mpi

package mpix

/*
#cgo pkg-config: ompi
#include <mpi.h>
#include <stdlib.h>

static int wrank(void) { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
static int wsize(void) { int s; MPI_Comm_size(MPI_COMM_WORLD, &s); return s; }
static int initialized(void) { int f = 0; MPI_Initialized(&f); return f; }
static int ia2a_counts(long long *send, long long *recv, int n, MPI_Request *r) {
	return MPI_Ialltoall(send, n, MPI_LONG_LONG, recv, n, MPI_LONG_LONG, MPI_COMM_WORLD, r);
}
static int a2av(void *sb, int *sc, int *sd, void *rb, int *rc, int *rd) {
	return MPI_Alltoallv(sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
}
static int agv(void *sb, int n, void *rb, int *rc, int *rd) {
	return MPI_Allgatherv(sb, n, MPI_BYTE, rb, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
}
static int iag_counts64(long long *n, long long *recv, MPI_Request *r) {
	return MPI_Iallgather(n, 1, MPI_LONG_LONG, recv, 1, MPI_LONG_LONG, MPI_COMM_WORLD, r);
}
static int gv(void *sb, int n, void *rb, int *rc, int *rd) {
	return MPI_Gatherv(sb, n, MPI_BYTE, rb, rc, rd, MPI_BYTE, 0, MPI_COMM_WORLD);
}
static int ibarrier(MPI_Request *r) { return MPI_Ibarrier(MPI_COMM_WORLD, r); }
static int test(MPI_Request *r, int *flag) { return MPI_Test(r, flag, MPI_STATUS_IGNORE); }
static int iallreduce(long long *x, int n, int op, MPI_Request *r) {
	MPI_Op o = op == 0 ? MPI_SUM : op == 1 ? MPI_MIN : MPI_MAX;
	return MPI_Iallreduce(MPI_IN_PLACE, x, n, MPI_LONG_LONG, o, MPI_COMM_WORLD, r);
}
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"
)

// world is MPI_COMM_WORLD. MPI must have been initialised (empi's
// mpi.Init) before it is used.
type world struct {
	rank, size   int
	bytes, calls int64
}

// World returns MPI_COMM_WORLD, or Single if MPI is not initialised (a
// run outside mpirun) or the job has one rank: its exchanges then hand
// each buffer back, where MPI's would copy it twice (on the 16 M-call
// log, match's 350 MB of send ends).
func World() Comm {
	if C.initialized() == 0 || C.wsize() == 1 {
		return &Single{}
	}
	return &world{rank: int(C.wrank()), size: int(C.wsize())}
}

func (w *world) Rank() int             { return w.rank }
func (w *world) Size() int             { return w.size }
func (w *world) Stats() (int64, int64) { return w.bytes, w.calls }

func mpiErr(what string, rc C.int) error {
	if rc != 0 {
		return fmt.Errorf("mpix: %s failed (MPI error %d)", what, int(rc))
	}
	return nil
}

// ptr returns a pointer usable as an MPI buffer for b, even when b is
// empty (MPI wants a valid address).
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return unsafe.Pointer(&zero)
	}
	return unsafe.Pointer(&b[0])
}

var zero [8]byte

// Alltoallv is one MPI_Alltoall of the sizes, then one MPI_Alltoallv, or
// rounds of them past MPI's int counts (AlltoallvFlat).
func (w *world) Alltoallv(send [][]byte) ([][]byte, error) {
	if len(send) != w.size {
		return nil, fmt.Errorf("mpix: Alltoallv with %d parts for %d ranks", len(send), w.size)
	}
	rb, got, err := w.AlltoallvFlat(join(send))
	if err != nil {
		return nil, err
	}
	return cut(rb, got), nil
}

// AlltoallvFlat is Alltoallv from and into one buffer each: sb holds the
// parts for ranks 0, 1, … one after another, sizes[p] bytes for rank p;
// rb what every rank sent to this one, in rank order, got[p] bytes from
// rank p. MPI's counts and displacements are C ints, and every rank must
// take the same number of MPI calls. The sizes' exchange settles that
// without a collective of its own: each rank sends, beside each size,
// whether any of its parts is over 2 GiB / P, and every rank sees every
// rank's flag. With no flag raised one MPI_Alltoallv fits; with one (a
// rare, huge exchange) the ranks agree on the rounds in one more
// collective (alltoallvRounds).
func (w *world) AlltoallvFlat(sb []byte, sizes []int) (rb []byte, got []int, err error) {
	if len(sizes) != w.size {
		return nil, nil, fmt.Errorf("mpix: Alltoallv with %d parts for %d ranks", len(sizes), w.size)
	}
	w.calls++
	n := w.size
	counts := make([]C.longlong, 2*n) // by destination: size, large
	large := C.longlong(0)
	sendTotal := 0
	for _, k := range sizes {
		if k > roundPart(n) {
			large = 1
		}
		sendTotal += k
	}
	if sendTotal != len(sb) {
		return nil, nil, fmt.Errorf("mpix: Alltoallv of %d bytes in parts of %d in all", len(sb), sendTotal)
	}
	for p, k := range sizes {
		counts[2*p], counts[2*p+1] = C.longlong(k), large
	}
	gotc, err := w.alltoallCounts(counts) // by source: size, large
	if err != nil {
		return nil, nil, err
	}
	recvTotal, flagged := 0, false
	maxPair := 0 // the largest part this rank sends or receives
	for p := 0; p < n; p++ {
		recvTotal += int(gotc[2*p])
		flagged = flagged || gotc[2*p+1] != 0
		maxPair = max(maxPair, int(gotc[2*p]), sizes[p])
	}
	got = make([]int, n)
	for p := range got {
		got[p] = int(gotc[2*p])
	}
	for p, k := range sizes {
		if p != w.rank {
			w.bytes += int64(k)
		}
	}
	rb = make([]byte, recvTotal)
	if flagged {
		// Some part is over 2 GiB / P: every rank sees it, and they agree
		// on the rounds it takes to stay within MPI's int counts.
		largest, err := AllreduceOne(w, int64(maxPair), Max)
		if err != nil {
			return nil, nil, err
		}
		if rounds := ceilDiv(int(largest), roundPart(n)); rounds > 1 {
			return rb, got, w.alltoallvRounds(sb, sizes, rb, got, rounds)
		}
	}
	return rb, got, w.alltoallv(sb, sizes, rb, got)
}

// alltoallv is one MPI_Alltoallv of parts laid out one after another in
// sb and rb, their totals within MPI's int counts.
func (w *world) alltoallv(sb []byte, sizes []int, rb []byte, got []int) error {
	n := w.size
	sc, sd, rc, rd := make([]C.int, n), make([]C.int, n), make([]C.int, n), make([]C.int, n)
	off := 0
	for p, k := range sizes {
		sc[p], sd[p] = C.int(k), C.int(off)
		off += k
	}
	off = 0
	for p, k := range got {
		rc[p], rd[p] = C.int(k), C.int(off)
		off += k
	}
	return mpiErr("MPI_Alltoallv", C.a2av(ptr(sb), &sc[0], &sd[0], ptr(rb), &rc[0], &rd[0]))
}

// alltoallvRounds is an exchange over MPI's 2 GiB limit, in rounds of
// MPI_Alltoallv: round r carries bytes [r·L, (r+1)·L) of every part (L
// is roundPart), so that no rank sends or receives more than P·L in a
// round. The rounds go through buffers of that size: the parts'
// displacements in sb and rb may be beyond a C int themselves.
func (w *world) alltoallvRounds(sb []byte, sizes []int, rb []byte, got []int, rounds int) error {
	n := w.size
	L := roundPart(n)
	soff, roff := Offsets(sizes), Offsets(got)
	stage, rstage := make([]byte, 0, min(n*L, len(sb))), make([]byte, min(n*L, len(rb)))
	rs, rg := make([]int, n), make([]int, n)
	for r := 0; r < rounds; r++ {
		stage = stage[:0]
		for p, k := range sizes {
			lo, hi := min(k, r*L), min(k, (r+1)*L)
			stage = append(stage, sb[soff[p]+lo:soff[p]+hi]...)
			rs[p] = hi - lo
		}
		for p, k := range got {
			rg[p] = min(k, (r+1)*L) - min(k, r*L)
		}
		if err := w.alltoallv(stage, rs, rstage, rg); err != nil {
			return err
		}
		at := 0
		for p, k := range got {
			at += copy(rb[roff[p]+min(k, r*L):roff[p]+min(k, (r+1)*L)], rstage[at:at+rg[p]])
		}
	}
	return nil
}

// roundLimit bounds what a rank sends or receives in one MPI call: MPI's
// counts are C ints. A variable, so that the checks of the rounds
// (exchcheck) can lower it: exchanges over 2 GiB would need GiBs of
// memory to check.
var roundLimit = maxPart

// SetRoundLimit sets the bytes a rank sends or receives in one MPI call
// of an exchange (MPI's 2 GiB by default); for the checks of exchanges
// in rounds only.
func SetRoundLimit(n int) { roundLimit = max(1, min(n, maxPart)) }

// roundPart is the bytes of one part carried by a round with n ranks:
// a round ships at most n of them from, and to, each rank.
func roundPart(n int) int { return max(1, roundLimit/n) }

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Allgatherv is one MPI_Allgather of the sizes, then one MPI_Allgatherv,
// or, when every rank would receive more than MPI's int counts allow,
// rounds of them (every rank sees every size: they agree without more).
func (w *world) Allgatherv(b []byte) ([][]byte, error) {
	w.calls++
	sizes, total, err := w.sizesOfAll(len(b))
	if err != nil {
		return nil, err
	}
	w.bytes += int64(len(b)) * int64(w.size-1)
	rb := make([]byte, total)
	err = w.gatherRounds("MPI_Allgatherv", b, sizes, rb, total, func(sb []byte, rb []byte, rc, rd []C.int) C.int {
		return C.agv(ptr(sb), C.int(len(sb)), ptr(rb), &rc[0], &rd[0])
	})
	if err != nil {
		return nil, err
	}
	return cut(rb, sizes), nil
}

// sizesOfAll gives every rank every rank's n (one MPI_Allgather), and
// their total: what a gather needs first, so that every rank takes the
// same rounds (gatherRounds).
func (w *world) sizesOfAll(n int) (sizes []int, total int, err error) {
	counts, err := w.allgatherCount(n)
	if err != nil {
		return nil, 0, err
	}
	sizes = make([]int, w.size)
	for p, k := range counts {
		sizes[p] = int(k)
		total += int(k)
	}
	return sizes, total, nil
}

// gatherRounds gathers the parts of sizes (this rank's is b) into rb, in
// rank order, with call (an MPI_Allgatherv or MPI_Gatherv of sb into
// its receive buffer): in one call when total fits MPI's int counts,
// otherwise in rounds, round r carrying bytes [r·L, (r+1)·L) of every
// part through a buffer of P·L bytes. rb is nil where nothing is
// received (a Gatherv's other ranks).
func (w *world) gatherRounds(name string, b []byte, sizes []int, rb []byte, total int,
	call func(sb, rb []byte, rc, rd []C.int) C.int) error {
	n := w.size
	rc, rd := make([]C.int, n), make([]C.int, n)
	if total <= roundLimit {
		off := 0
		for p, k := range sizes {
			rc[p], rd[p] = C.int(k), C.int(off)
			off += k
		}
		return mpiErr(name, call(b, rb, rc, rd))
	}
	L := roundPart(n)
	largest := 0
	for _, k := range sizes {
		largest = max(largest, k)
	}
	roff := Offsets(sizes)
	var stage []byte
	if rb != nil {
		stage = make([]byte, min(n*L, total))
	}
	for r := 0; r < ceilDiv(largest, L); r++ {
		off := 0
		for p, k := range sizes {
			c := min(k, (r+1)*L) - min(k, r*L)
			rc[p], rd[p] = C.int(c), C.int(off)
			off += c
		}
		if err := mpiErr(name, call(b[min(len(b), r*L):min(len(b), (r+1)*L)], stage, rc, rd)); err != nil {
			return err
		}
		if rb != nil {
			for p, k := range sizes {
				copy(rb[roff[p]+min(k, r*L):roff[p]+min(k, (r+1)*L)], stage[rd[p]:int(rd[p])+int(rc[p])])
			}
		}
	}
	return nil
}

// Gatherv gathers every rank's b on rank 0 (GatherWhole).
func (w *world) Gatherv(b []byte) ([][]byte, error) {
	rb, sizes, err := w.GatherWhole(b)
	if err != nil || w.rank != 0 {
		return nil, err
	}
	return cut(rb, sizes), nil
}

// GatherWhole is Gatherv returning, on rank 0, the buffer MPI gathered
// into (every rank's b in rank order) and the sizes of the parts. Every
// rank learns every size first (one MPI_Allgather), so that all of them
// take the same rounds when rank 0 would receive more than MPI's int
// counts allow (gatherRounds).
func (w *world) GatherWhole(b []byte) ([]byte, []int, error) {
	w.calls++
	sizes, total, err := w.sizesOfAll(len(b))
	if err != nil {
		return nil, nil, err
	}
	w.calls++
	var rb []byte
	if w.rank == 0 {
		rb = make([]byte, total)
	} else {
		w.bytes += int64(len(b))
	}
	err = w.gatherRounds("MPI_Gatherv", b, sizes, rb, total, func(sb []byte, rb []byte, rc, rd []C.int) C.int {
		if w.rank != 0 {
			return C.gv(ptr(sb), C.int(len(sb)), nil, nil, nil)
		}
		return C.gv(ptr(sb), C.int(len(sb)), ptr(rb), &rc[0], &rd[0])
	})
	if err != nil || w.rank != 0 {
		return nil, nil, err
	}
	return rb, sizes, nil
}

func (w *world) Allreduce(x []int64, op Op) error {
	if len(x) == 0 {
		return nil
	}
	w.calls++
	buf := cBuffer(len(x))
	defer C.free(unsafe.Pointer(&buf[0]))
	for i, v := range x {
		buf[i] = C.longlong(v)
	}
	var req C.MPI_Request
	if err := mpiErr("MPI_Iallreduce", C.iallreduce(&buf[0], C.int(len(x)), C.int(op), &req)); err != nil {
		return err
	}
	if err := waitFor(&req); err != nil {
		return err
	}
	for i := range x {
		x[i] = int64(buf[i])
	}
	return nil
}

// The collectives where a rank meets the others (an exchange's sizes, a
// gather's, a reduction) are non-blocking ones completed by waitFor:
// where the ranks come to an exchange at different times (one did more
// work in a round), the first there then waits without taking a core from
// the others, as MPI's busy polling would (with two ranks on two cores it
// slowed the other by the time it polled, and counted as CPU time of the
// analysis). Their buffers are C memory: MPI keeps them until the call
// completes, after the cgo call has returned.

// cBuffer is n long longs of C memory (free it with C.free of its first
// element's address).
func cBuffer(n int) []C.longlong {
	p := C.malloc(C.size_t(8 * max(1, n)))
	return unsafe.Slice((*C.longlong)(p), max(1, n))
}

// waitFor completes req: testing it, first in a busy loop for a short
// while (a partner about to arrive is met without delay), then with
// growing sleeps up to 1 ms.
func waitFor(req *C.MPI_Request) error {
	spin := time.Now().Add(50 * time.Microsecond)
	sleep := 10 * time.Microsecond
	for {
		var done C.int
		if err := mpiErr("MPI_Test", C.test(req, &done)); err != nil {
			return err
		}
		if done != 0 {
			return nil
		}
		if time.Now().Before(spin) {
			continue
		}
		time.Sleep(sleep)
		sleep = min(2*sleep, time.Millisecond)
	}
}

// alltoallCounts exchanges counts, two by destination rank (MPI_Ialltoall),
// and returns what each rank sent this one, two by source.
func (w *world) alltoallCounts(counts []C.longlong) ([]C.longlong, error) {
	n := len(counts)
	sb, rb := cBuffer(n), cBuffer(n)
	defer C.free(unsafe.Pointer(&sb[0]))
	defer C.free(unsafe.Pointer(&rb[0]))
	copy(sb, counts)
	var req C.MPI_Request
	if err := mpiErr("MPI_Ialltoall", C.ia2a_counts(&sb[0], &rb[0], C.int(n/w.size), &req)); err != nil {
		return nil, err
	}
	if err := waitFor(&req); err != nil {
		return nil, err
	}
	return append([]C.longlong(nil), rb[:n]...), nil
}

// allgatherCount gives every rank every rank's n (MPI_Iallgather).
func (w *world) allgatherCount(n int) ([]C.longlong, error) {
	sb, rb := cBuffer(1), cBuffer(w.size)
	defer C.free(unsafe.Pointer(&sb[0]))
	defer C.free(unsafe.Pointer(&rb[0]))
	sb[0] = C.longlong(n)
	var req C.MPI_Request
	if err := mpiErr("MPI_Iallgather", C.iag_counts64(&sb[0], &rb[0], &req)); err != nil {
		return nil, err
	}
	if err := waitFor(&req); err != nil {
		return nil, err
	}
	return append([]C.longlong(nil), rb[:w.size]...), nil
}

// Idle is a barrier that leaves the core to others while it waits: an
// MPI_Ibarrier tested with growing sleeps (up to 1 ms) instead of MPI's
// busy polling, for ranks waiting while one rank works alone with every
// core of its node.
func (w *world) Idle() error {
	w.calls++
	var req C.MPI_Request
	if err := mpiErr("MPI_Ibarrier", C.ibarrier(&req)); err != nil {
		return err
	}
	return waitFor(&req)
}
