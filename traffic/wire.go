package traffic

import "github.com/cpath/cpath/internal/mpix"

// A Result crosses ranks (an analyzer rank's share, merged on rank 0) in
// mpix's framed form: each matrix as its four arrays, the histograms and
// Comms as records.

// Put puts r in e's message; ReadResult reads it back.
func (r *Result) Put(e *mpix.Encoder) {
	for _, m := range []*Pairs{&r.P2P, &r.Coll, &r.RMA} {
		mpix.PutRecords(e, m.Src)
		mpix.PutRecords(e, m.Dst)
		mpix.PutRecords(e, m.Count)
		mpix.PutRecords(e, m.Bytes)
	}
	mpix.PutRecord(e, r.P2PSizes)
	mpix.PutRecord(e, r.CollSizes)
	mpix.PutRecords(e, r.Comms)
}

// ReadResult reads back what Put put (empty arrays as nil). Errors are
// d's: a matrix whose arrays differ in length is one.
func ReadResult(d *mpix.Decoder) *Result {
	r := &Result{}
	for _, m := range []*Pairs{&r.P2P, &r.Coll, &r.RMA} {
		m.Src = mpix.ReadRecords[int32](d)
		m.Dst = mpix.ReadRecords[int32](d)
		m.Count = mpix.ReadRecords[int64](d)
		m.Bytes = mpix.ReadRecords[int64](d)
		if n := len(m.Src); len(m.Dst) != n || len(m.Count) != n || len(m.Bytes) != n {
			d.Fail("traffic: a matrix of %d sources, %d destinations, %d counts and %d byte sums", n, len(m.Dst), len(m.Count), len(m.Bytes))
		}
	}
	r.P2PSizes = mpix.ReadRecord[Histogram](d)
	r.CollSizes = mpix.ReadRecord[Histogram](d)
	r.Comms = mpix.ReadRecords[Comm](d)
	return r
}
