package analysis

import (
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/imbalance"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/traffic"
)

// put puts the share in e's message (mpix's framed form): its imbalance,
// its collective instances as records, its traffic.
func (s *share) put(e *mpix.Encoder) {
	s.Imbalance.Put(e)
	mpix.PutRecords(e, s.Colls)
	s.Traffic.Put(e)
}

// readShare reads back what put put, for a run of ranks ranks and comms
// communicators. Errors are d's: a share that does not fit the run (a
// process or communicator more or fewer, an instance of a collective it
// does not hold) is one, so that merging the shares cannot index out of
// range.
func readShare(d *mpix.Decoder, ranks, comms int) share {
	s := share{Imbalance: imbalance.ReadResult(d), Colls: mpix.ReadRecords[graph.Collective](d), Traffic: traffic.ReadResult(d)}
	if d.Err() != nil {
		return s
	}
	im, tr := s.Imbalance, s.Traffic
	if len(im.Processes) != ranks || len(tr.Comms) != comms {
		d.Fail("a share of %d processes and %d communicators in a run of %d and %d", len(im.Processes), len(tr.Comms), ranks, comms)
		return s
	}
	for _, in := range im.Instances {
		if in.Coll < 0 || int(in.Coll) >= len(s.Colls) {
			d.Fail("the imbalance of collective instance %d of %d", in.Coll, len(s.Colls))
			return s
		}
	}
	for _, c := range s.Colls {
		if c.Comm < 0 || int(c.Comm) >= comms {
			d.Fail("a collective instance on communicator %d of %d", c.Comm, comms)
			return s
		}
	}
	for c := range im.ByComm {
		if c < -1 || int(c) >= comms {
			d.Fail("wait states on communicator %d of %d", c, comms)
			return s
		}
	}
	for _, m := range []*traffic.Pairs{&tr.P2P, &tr.Coll} {
		for i := range m.Src {
			if m.Src[i] < 0 || int(m.Src[i]) >= ranks || m.Dst[i] < 0 || int(m.Dst[i]) >= ranks {
				d.Fail("traffic from rank %d to rank %d in a run of %d", m.Src[i], m.Dst[i], ranks)
				return s
			}
		}
	}
	return s
}
