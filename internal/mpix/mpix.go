// Package mpix is the collective communication the distributed analyzer
// needs and github.com/emer/empi lacks (Alltoallv, Allgatherv, Gatherv), behind
// one interface, Comm, so that the graph and algorithm packages never
// import MPI. World is MPI_COMM_WORLD with the mpi build tag; Single is a
// job of one process, what World is without the tag or outside mpirun.
//
// The exchanges move bytes, in one wire encoding, with no reflection and
// no type names on the wire. Flat arrays of fixed-size records go as
// their memory (Bytes, FromBytes, Ship, ShipFlat: no encoding, which is
// also what lets topo-shuffle compress them). What is structured (a
// header and an array behind it, strings, lists of lists, maps) goes in
// the framed form built on them (wire.go): an Encoder puts records,
// counted arrays of records, strings, bytes and lists one after another,
// a Decoder reads them back in the same order and checks every count
// against the bytes left; a map goes as a list or array of key and
// value records in ascending key order, so that equal values make equal
// bytes. Gather gathers such messages on rank 0. Each type that crosses
// the wire has its form in its own package (imbalance.Result's Put and
// ReadResult, say), with a round trip of a value with every field set
// and a fuzz target (mpixtest.Fill, RoundTrip, Redecode). A record that
// crosses the wire holds no pointers and no padding the compiler put in
// (explicit blank fields instead): each package's tests hold its records
// to their sizes with mpixtest.CheckRecords.
package mpix

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Op is a reduction.
type Op int

const (
	Sum Op = iota
	Min
	Max
)

// Comm is a group of processes that take part in every call together, in
// the same order.
type Comm interface {
	Rank() int
	Size() int
	// Alltoallv sends send[p] to rank p and returns recv, recv[p] being
	// what rank p sent to this one. len(send) must be Size().
	Alltoallv(send [][]byte) ([][]byte, error)
	// Allgatherv returns every rank's b, by rank.
	Allgatherv(b []byte) ([][]byte, error)
	// Gatherv returns every rank's b, by rank, on rank 0; the other ranks
	// get nil.
	Gatherv(b []byte) ([][]byte, error)
	// Allreduce combines x element by element over all ranks, in place.
	Allreduce(x []int64, op Op) error
	// Stats returns the bytes this rank has sent to other ranks so far
	// (its own share excluded) and the number of collective calls.
	Stats() (bytes, calls int64)
}

// Single is a Comm of one process.
type Single struct{ calls int64 }

func (s *Single) Rank() int { return 0 }
func (s *Single) Size() int { return 1 }
func (s *Single) Alltoallv(send [][]byte) ([][]byte, error) {
	if len(send) != 1 {
		return nil, fmt.Errorf("mpix: Alltoallv with %d parts for 1 rank", len(send))
	}
	s.calls++
	return [][]byte{send[0]}, nil
}
func (s *Single) Allgatherv(b []byte) ([][]byte, error) { s.calls++; return [][]byte{b}, nil }
func (s *Single) Gatherv(b []byte) ([][]byte, error)    { s.calls++; return [][]byte{b}, nil }
func (s *Single) Allreduce(x []int64, op Op) error      { s.calls++; return nil }
func (s *Single) Stats() (int64, int64)                 { return 0, s.calls }

// Idle waits until every rank has called it, as a barrier, leaving the
// core to others while it waits where the Comm can (MPI_COMM_WORLD:
// an MPI barrier polls busily). Ranks that wait while rank 0 works alone
// call it, and so does rank 0 when it is done, so that rank 0 may use
// every core of a node it shares with them.
func Idle(c Comm) error {
	if i, ok := c.(interface{ Idle() error }); ok {
		return i.Idle()
	}
	return c.Allreduce([]int64{0}, Sum)
}

// GatherWhole is Gatherv giving rank 0 every rank's b as one buffer, in
// rank order, with the sizes of the parts; the other ranks get nil. Where
// the Comm gathers into one buffer anyway (MPI, one process) it is that
// buffer, not a copy: gathering a whole graph on rank 0 then costs no
// second copy of it.
func GatherWhole(c Comm, b []byte) ([]byte, []int, error) {
	if g, ok := c.(interface {
		GatherWhole([]byte) ([]byte, []int, error)
	}); ok {
		return g.GatherWhole(b)
	}
	parts, err := c.Gatherv(b)
	if err != nil || parts == nil {
		return nil, nil, err
	}
	whole, sizes := join(parts)
	return whole, sizes, nil
}

// GatherWhole is Gatherv's one part.
func (s *Single) GatherWhole(b []byte) ([]byte, []int, error) {
	s.calls++
	return b, []int{len(b)}, nil
}

// AllreduceOne reduces one value.
func AllreduceOne(c Comm, v int64, op Op) (int64, error) {
	x := []int64{v}
	err := c.Allreduce(x, op)
	return x[0], err
}

// Any reports whether b holds on any rank.
func Any(c Comm, b bool) (bool, error) {
	v := int64(0)
	if b {
		v = 1
	}
	v, err := AllreduceOne(c, v, Max)
	return v != 0, err
}

// maxPart is the most one rank may send or receive in one MPI call: MPI
// counts are C ints. Larger exchanges go in rounds.
const maxPart = math.MaxInt32

// join lays parts out one after another in one buffer, and gives their
// sizes: the form the flat exchanges take.
func join(parts [][]byte) ([]byte, []int) {
	sizes := make([]int, len(parts))
	total := 0
	for p, b := range parts {
		sizes[p] = len(b)
		total += len(b)
	}
	whole := make([]byte, 0, total)
	for _, b := range parts {
		whole = append(whole, b...)
	}
	return whole, sizes
}

// cut is join undone: the parts of whole, sizes[p] bytes for rank p, each
// capped at its end so that appending to one cannot overwrite the next.
func cut(whole []byte, sizes []int) [][]byte {
	parts := make([][]byte, len(sizes))
	off := 0
	for p, k := range sizes {
		parts[p] = whole[off : off+k : off+k]
		off += k
	}
	return parts
}

// Bytes views a slice of fixed-size plain values (no pointers) as bytes,
// without copying, for shipping; FromBytes is the inverse. Both ends run the same binary on the same
// kind of machine, so the layout is the same.
func Bytes[T any](xs []T) []byte {
	if len(xs) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&xs[0])), len(xs)*int(unsafe.Sizeof(z)))
}

// Ship sends out[p], flat arrays of T, to rank p (Alltoallv of their
// bytes) and returns what each rank sent to this one, as bytes for
// FromBytes or Concat.
func Ship[T any](c Comm, out [][]T) ([][]byte, error) {
	send := make([][]byte, len(out))
	for q := range out {
		send[q] = Bytes(out[q])
	}
	return c.Alltoallv(send)
}

// ShipFlat is Ship for parts laid out one after another in one array:
// flat holds the values for rank 0, then those for rank 1, …, counts[p]
// of them for rank p. It returns what every rank sent to this one as one
// array, in rank order, and how many values came from each rank. Where
// the Comm exchanges from and into one buffer (MPI, one process) nothing
// is copied but by the exchange itself: no packing of the parts before
// it, no joining of what came after (on the 16 M-call log at P = 2 the
// matching's sends were copied three times so).
func ShipFlat[T any](c Comm, flat []T, counts []int) ([]T, []int, error) {
	if len(counts) != c.Size() {
		return nil, nil, fmt.Errorf("mpix: ShipFlat with %d parts for %d ranks", len(counts), c.Size())
	}
	var z T
	sz := int(unsafe.Sizeof(z))
	sizes := make([]int, len(counts))
	total := 0
	for p, k := range counts {
		sizes[p] = k * sz
		total += k
	}
	if total != len(flat) {
		return nil, nil, fmt.Errorf("mpix: ShipFlat of %d values in parts of %d in all", len(flat), total)
	}
	var rb []byte
	var got []int
	if f, ok := c.(interface {
		AlltoallvFlat(sb []byte, sizes []int) ([]byte, []int, error)
	}); ok {
		var err error
		if rb, got, err = f.AlltoallvFlat(Bytes(flat), sizes); err != nil {
			return nil, nil, err
		}
	} else {
		parts, err := c.Alltoallv(cut(Bytes(flat), sizes))
		if err != nil {
			return nil, nil, err
		}
		rb, got = join(parts)
	}
	for p := range got {
		if got[p]%sz != 0 {
			return nil, nil, fmt.Errorf("mpix: rank %d sent %d bytes, not a whole number of %d-byte values", p, got[p], sz)
		}
		got[p] /= sz
	}
	out, err := FromBytes[T](rb)
	return out, got, err
}

// AlltoallvFlat is the exchange of one process: sb itself.
func (s *Single) AlltoallvFlat(sb []byte, sizes []int) ([]byte, []int, error) {
	if len(sizes) != 1 || sizes[0] != len(sb) {
		return nil, nil, fmt.Errorf("mpix: Alltoallv of %d bytes as %v for 1 rank", len(sb), sizes)
	}
	s.calls++
	return sb, []int{len(sb)}, nil
}

// FromBytes returns b as a []T: b itself when it is aligned for T (the
// buffers the exchanges return are), else a copy. len(b) must be a
// multiple of T's size. The result shares b's memory in the first case.
func FromBytes[T any](b []byte) ([]T, error) {
	var z T
	sz := int(unsafe.Sizeof(z))
	if len(b)%sz != 0 {
		return nil, fmt.Errorf("mpix: %d bytes is not a whole number of %d-byte values", len(b), sz)
	}
	if len(b) == 0 {
		return nil, nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%unsafe.Alignof(z) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/sz), nil
	}
	xs := make([]T, len(b)/sz)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&xs[0])), len(b)), b)
	return xs, nil
}

// Agree makes every rank return the same error: the first (by rank) of the
// errors the ranks met, or nil, so that one failing rank ends the whole job
// with its message instead of leaving the others waiting in a collective.
// Every rank must call it at the same point.
func Agree(c Comm, err error) error {
	var msg []byte
	if err != nil {
		msg = []byte(err.Error())
		if len(msg) == 0 {
			msg = []byte("error")
		}
	}
	all, xerr := c.Allgatherv(msg)
	if xerr != nil {
		return xerr
	}
	for p, m := range all {
		if len(m) > 0 {
			if p == c.Rank() {
				return err // this rank's own: keep its type for errors.As
			}
			return errors.New(string(m))
		}
	}
	return nil
}

// Concat returns the parts an exchange returned as one []T, in rank order
// (a single part in place).
func Concat[T any](parts [][]byte) ([]T, error) {
	if len(parts) == 1 {
		return FromBytes[T](parts[0])
	}
	total := 0
	for _, b := range parts {
		total += len(b)
	}
	var z T
	out := make([]T, 0, total/int(unsafe.Sizeof(z)))
	for _, b := range parts {
		xs, err := FromBytes[T](b)
		if err != nil {
			return nil, err
		}
		out = append(out, xs...)
	}
	return out, nil
}

// Split returns the parts an exchange returned as []T each, by rank.
func Split[T any](parts [][]byte) ([][]T, error) {
	out := make([][]T, len(parts))
	for p, b := range parts {
		xs, err := FromBytes[T](b)
		if err != nil {
			return nil, err
		}
		out[p] = xs
	}
	return out, nil
}

// Answers decodes the answers of an exchange in which rank q was asked
// for want(q) values each, checking that each sent as many.
func Answers[T any](got [][]byte, want func(q int) int, what string) ([][]T, error) {
	out, err := Split[T](got)
	if err != nil {
		return nil, err
	}
	for q, xs := range out {
		if len(xs) != want(q) {
			return nil, fmt.Errorf("mpix: %s: rank %d sent %d values for %d asked", what, q, len(xs), want(q))
		}
	}
	return out, nil
}
