package imbalance

import (
	"cmp"
	"maps"
	"slices"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/trace"
)

// A Result crosses ranks (an analyzer rank's share, merged on rank 0) in
// mpix's framed form: its arrays as records (Instance, Process, Waits,
// graph.PartitionWait), its maps as records of key and value in
// ascending key order, so that equal results make equal bytes.

// opWaits is an entry of Result.ByOp on the wire.
type opWaits struct {
	Op    trace.Op
	_     [7]byte
	Waits Waits
}

// commWaits is an entry of Result.ByComm on the wire.
type commWaits struct {
	Comm  int32
	_     int32
	Waits Waits
}

// Put puts r in e's message; ReadResult reads it back.
func (r *Result) Put(e *mpix.Encoder) {
	mpix.PutRecords(e, r.Instances)
	mpix.PutRecords(e, r.Processes)
	mpix.PutRecord(e, r.Program)
	mpix.PutRecord(e, r.Waits)
	mpix.PutRecords(e, r.ByRank)
	mpix.PutRecords(e, entries(r.ByOp, func(op trace.Op, w *Waits) opWaits { return opWaits{Op: op, Waits: *w} }))
	mpix.PutRecords(e, entries(r.ByComm, func(c int32, w *Waits) commWaits { return commWaits{Comm: c, Waits: *w} }))
	mpix.PutRecords(e, r.Partitions)
}

// entries is m's entries as records, by ascending key.
func entries[K cmp.Ordered, E any](m map[K]*Waits, entry func(K, *Waits) E) []E {
	out := make([]E, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, entry(k, m[k]))
	}
	return out
}

// ReadResult reads back what Put put (the maps never nil). Errors are d's:
// a result whose waits by rank are not one per process, or whose map
// entries are not in ascending key order, is one.
func ReadResult(d *mpix.Decoder) *Result {
	r := &Result{
		Instances: mpix.ReadRecords[Instance](d),
		Processes: mpix.ReadRecords[Process](d),
		Program:   mpix.ReadRecord[Process](d),
		Waits:     mpix.ReadRecord[Waits](d),
		ByRank:    mpix.ReadRecords[Waits](d),
	}
	if len(r.ByRank) != len(r.Processes) {
		d.Fail("imbalance: waits of %d ranks for %d processes", len(r.ByRank), len(r.Processes))
	}
	r.ByOp = readMap(d, "operation", func(x opWaits) (trace.Op, Waits) { return x.Op, x.Waits })
	r.ByComm = readMap(d, "communicator", func(x commWaits) (int32, Waits) { return x.Comm, x.Waits })
	r.Partitions = mpix.ReadRecords[graph.PartitionWait](d)
	return r
}

// readMap reads the entries entries put back into a map.
func readMap[K cmp.Ordered, E any](d *mpix.Decoder, by string, entry func(E) (K, Waits)) map[K]*Waits {
	es := mpix.ReadRecords[E](d)
	m := make(map[K]*Waits, len(es))
	var last K
	for i, x := range es {
		k, w := entry(x)
		if i > 0 && k <= last {
			d.Fail("imbalance: wait states by %s: key %v after %v", by, k, last)
			return m
		}
		m[k], last = &w, k
	}
	return m
}
