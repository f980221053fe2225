package otf2

// #include <stdlib.h>
// #include "cotf2.h"
import "C"

import (
	"fmt"
	"io"
	"strings"

	"github.com/cpath/cpath/trace"
)

// batchEvents is how many events the C side reads into a location's
// buffer at a time.
const batchEvents = 8192

// siteBase is where the call sites of an imported rank start: the
// addresses of its regions module (trace.Module.Funcs), far from any
// real code's.
const siteBase = 1 << 48

// rankReader reads one rank's locations and hands out its records
// (graph.RankReader): each location's calls in its order, the
// locations' merged by when the calls ended, as a cpath reader hands
// out a threaded log's.
type rankReader struct {
	a    *Archive
	rank int
	hdr  trace.Header
	locs []*locReader
	out  []trace.Record
	// The rank's call sites, by region and source location: Funcs of
	// its regions module.
	sites    map[siteKey]uint64
	lastSite struct {
		key siteKey
		pc  uint64
	}
	funcs []trace.Func
	// What the rank held that cpath does not take, by what.
	notMapped map[string]uint64
	nmOrder   []string
	unwrapped map[string]int // index in hdr.Unwrapped
	// seq counts the collectives on each communicator (by the rank's
	// index) of an archive cpath did not write, whose calls carry no
	// sequence numbers.
	seq       map[uint32]uint32
	wins      map[uint32]int32 // window number by window definition, in creation order
	nwins     int32
	trailer   trace.Trailer
	finalized bool
	done      bool
}

type siteKey struct {
	region, scl uint32
	offset      uint64
}

func (a *Archive) openRank(r int) (*rankReader, error) {
	if r < 0 || r >= len(a.ranks) {
		return nil, fmt.Errorf("%s: no rank %d (the archive has %d)", a.Anchor, r, len(a.ranks))
	}
	srcs := make([]eventSource, 0, len(a.ranks[r]))
	var offs []clockOffset
	var nOffs uint64
	for t, loc := range a.ranks[r] {
		s, o, n, err := openSource(a, loc)
		if err != nil {
			for _, s := range srcs {
				s.close()
			}
			return nil, err
		}
		if t == 0 {
			offs, nOffs = o, n
		}
		srcs = append(srcs, s)
	}
	return newRankReader(a, r, srcs, offs, nOffs), nil
}

// newRankReader reads rank r from its locations' event sources (thread
// t's is srcs[t]); offs are its clock offsets (of nOffs in all).
func newRankReader(a *Archive, r int, srcs []eventSource, offs []clockOffset, nOffs uint64) *rankReader {
	rr := &rankReader{a: a, rank: r, hdr: a.header(r), sites: map[siteKey]uint64{}, notMapped: map[string]uint64{},
		unwrapped: map[string]int{}, seq: map[uint32]uint32{}, wins: map[uint32]int32{}}
	for t, s := range srcs {
		loc := a.ranks[r][t]
		rr.locs = append(rr.locs, &locReader{rr: rr, loc: loc, thread: uint16(t), src: s, open: map[uint64]int32{}, sends: map[uint64]sendEnd{}})
		rr.unwrappedProps(loc)
	}
	rr.clock(offs, nOffs)
	return rr
}

// unwrappedProps takes the counts of unwrapped calls an archive cpath
// wrote keeps as location properties (cpath::unwrapped::NAME::calls and
// ::ns): calls the logger counted but did not record.
func (rr *rankReader) unwrappedProps(loc uint64) {
	props := rr.a.d.locProps[loc]
	for _, k := range sortedKeys(props) {
		name, ok := strings.CutPrefix(k, "cpath::unwrapped::")
		if !ok || !strings.HasSuffix(name, "::calls") {
			continue
		}
		name = strings.TrimSuffix(name, "::calls")
		rr.addUnwrapped(name, props[k], int64(props[unwrappedProp(name, "ns")]))
	}
}

// addUnwrapped counts calls of an MPI function cpath has no operation
// for, as the logger counts the calls it does not record.
func (rr *rankReader) addUnwrapped(name string, calls uint64, ns int64) {
	i, ok := rr.unwrapped[name]
	if !ok {
		i = len(rr.hdr.Unwrapped)
		rr.unwrapped[name] = i
		rr.hdr.Unwrapped = append(rr.hdr.Unwrapped, trace.UnwrappedCall{Name: name})
	}
	rr.hdr.Unwrapped[i].Calls += calls
	rr.hdr.Unwrapped[i].Ns += ns
}

// clock puts the clock offsets of the rank's first location in the
// clock model: the first at Init, the last at Final (trace.Clock).
func (rr *rankReader) clock(offs []clockOffset, all uint64) {
	if len(offs) == 0 {
		return
	}
	point := func(o clockOffset) trace.SyncPoint {
		return trace.SyncPoint{LocalNs: rr.a.ns(o.time), OffsetNs: rr.a.nsDelta(float64(o.offset)), ErrNs: rr.a.nsDelta(o.stddev)}
	}
	rr.hdr.Clock.Init = point(offs[0])
	if len(offs) > 1 {
		f := point(offs[len(offs)-1])
		rr.hdr.Clock.Final = &f
	}
	if all > 2 {
		rr.count("clock offsets between the first and the last (cpath's clock model takes those two)", all-2)
	}
}

func (rr *rankReader) count(what string, n uint64) {
	if _, ok := rr.notMapped[what]; !ok {
		rr.nmOrder = append(rr.nmOrder, what)
	}
	rr.notMapped[what] += n
}

// site is the call site of an MPI call made in region (the innermost
// non-MPI region open around it, undef32 for none) at source location
// scl (undef32: unknown) or offset off in the region's function (an
// archive cpath wrote, for a site without a source line): an address in
// the rank's regions module.
func (rr *rankReader) site(region, scl uint32, off uint64) uint64 {
	if region == undef32 && scl == undef32 {
		return 0
	}
	k := siteKey{region, scl, off}
	if k == rr.lastSite.key && rr.lastSite.pc != 0 {
		return rr.lastSite.pc // calls come from a few sites, often the same in a row
	}
	if pc, ok := rr.sites[k]; ok {
		rr.lastSite.key, rr.lastSite.pc = k, pc
		return pc
	}
	d := rr.a.d
	var f trace.Func
	if int(region) < len(d.regions) {
		f.Name = d.str(d.regions[region].name)
		if rr.a.fromCPath && d.regions[region].role == C.OTF2_REGION_ROLE_CODE {
			f.Name, f.Module = "", f.Name // a module's code no symbol named (export.go)
		}
	}
	if int(scl) < len(d.scls) && d.scls[scl].defined {
		f.File, f.Line = d.str(d.scls[scl].file), int(d.scls[scl].line)
	}
	f.Offset = off
	pc := uint64(siteBase + len(rr.funcs))
	rr.funcs = append(rr.funcs, f)
	rr.sites[k] = pc
	// A module of its own for each rank: the ranks number their call
	// sites apart, and names are cached by module and offset. It grows
	// as the calls are read, as a log's module chunks come before the
	// calls that need them.
	rr.hdr.Modules = []trace.Module{{Path: fmt.Sprintf("%s (regions of rank %d)", rr.a.Anchor, rr.rank), Base: siteBase, Start: siteBase,
		End: siteBase + uint64(len(rr.funcs)), Funcs: rr.funcs}}
	return pc
}

func (rr *rankReader) Header() *trace.Header  { return &rr.hdr }
func (rr *rankReader) Trailer() trace.Trailer { return rr.trailer }
func (rr *rankReader) Paths() [][]uint64      { return [][]uint64{nil} }
func (rr *rankReader) Incomplete() error      { return nil }

// Batch hands out the next records: the calls of the rank's threads
// merged by end time (each with its sub-records), io.EOF after the last.
func (rr *rankReader) Batch() ([]trace.Record, error) {
	if rr.done {
		return nil, io.EOF
	}
	if len(rr.locs) == 1 {
		return rr.single()
	}
	rr.out = rr.out[:0]
	for len(rr.out) < batchEvents {
		// Every location with calls to come has one ready, so that the
		// earliest-ending can be taken.
		best := -1
		var bestEnd int64
		for i, l := range rr.locs {
			if err := l.fill(); err != nil {
				return nil, err
			}
			if g, ok := l.peek(); ok && (best < 0 || g < bestEnd) {
				best, bestEnd = i, g
			}
		}
		if best < 0 {
			rr.finish()
			if len(rr.out) == 0 {
				return nil, io.EOF
			}
			break
		}
		rr.out = rr.locs[best].take(rr.out, rr)
	}
	return rr.out, nil
}

// single is Batch for a rank of one thread: the calls ready, in place
// (they stay valid until the next Batch).
func (rr *rankReader) single() ([]trace.Record, error) {
	l := rr.locs[0]
	l.compact()
	if err := l.fill(); err != nil {
		return nil, err
	}
	if l.head == l.ready {
		rr.finish()
		return nil, io.EOF
	}
	lo, _ := l.callRange(l.head)
	hi, _ := l.callRange(l.ready)
	out := l.recs[lo:hi]
	for i := range out {
		rr.emit(&out[i])
	}
	l.head = l.ready
	return out, nil
}

// emit counts a call handed out and numbers its collective on its
// communicator where the archive does not (seq).
func (rr *rankReader) emit(rec *trace.Record) {
	if rec.Op.IsSub() {
		rr.trailer.Records++
		return
	}
	rr.trailer.Records++
	rr.trailer.Calls++
	if rec.Op == trace.OpFinalize {
		rr.finalized = true
	}
	if rr.a.fromCPath || rec.Seq != 0 || rec.Comm == trace.CommNone {
		return
	}
	switch rec.Op.Class() {
	case trace.ClassCollective, trace.ClassIcollective:
	case trace.ClassCommCreate:
		if rec.Op == trace.OpCommCreateGroup || rec.Op == trace.OpCommGetParent {
			return // not collective over the parent
		}
	default:
		return
	}
	rr.seq[rec.Comm]++
	rec.Seq = rr.seq[rec.Comm]
}

// finish completes the header and trailer once every record is out.
func (rr *rankReader) finish() {
	rr.done = true
	for _, l := range rr.locs {
		for k, n := range l.src.skipped() {
			if n > 0 {
				rr.count(skipNames[k], n)
			}
		}
		if l.inVisit {
			rr.count("MPI calls the trace left open at its end", 1)
		}
	}
	rr.hdr.NotMapped = nil
	for _, w := range rr.nmOrder {
		rr.hdr.NotMapped = append(rr.hdr.NotMapped, trace.NotMapped{What: w, Count: rr.notMapped[w]})
	}
	rr.trailer.Status = trace.EndNoFinalize
	if rr.finalized {
		rr.trailer.Status = trace.EndFinalized
	}
}

// skipNames name the events the C side counts (cotf2.h CP_SKIP_*).
var skipNames = [nSkip]string{
	skipBufferFlush:      "BufferFlush events",
	skipMeasurementOnOff: "MeasurementOnOff events",
	skipMetric:           "Metric events",
	skipParameter:        "Parameter events",
	skipProgramEnd:       "ProgramEnd events",
	skipThread:           "thread events (fork, join, create, locks, tasks)",
	skipOmp:              "OpenMP events",
	skipCallingContext:   "calling-context (sampling) events",
	skipIO:               "I/O events",
	skipRmaOther:         "RMA lock requests, waits and tests",
	skipUnknown:          "events of kinds this OTF2 library does not know",
}

// Skim reads the rest, counting the calls (graph.RankReader).
func (rr *rankReader) Skim(want func(trace.Op) bool, fn func(*trace.Record)) (int, error) {
	n, wanted := 0, false
	for {
		recs, err := rr.Batch()
		for i := range recs {
			// As trace.Reader.Skim: the calls want selects, with their
			// sub-records.
			if !recs[i].Op.IsSub() {
				n++
				wanted = fn != nil && want(recs[i].Op)
			}
			if wanted {
				fn(&recs[i])
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// Close releases the OTF2 readers.
func (rr *rankReader) Close() error {
	for _, l := range rr.locs {
		l.close()
	}
	rr.locs = nil
	return nil
}
