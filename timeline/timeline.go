// Package timeline writes a run as trace-event JSON (the Trace Event
// Format's JSON Object Format), which ui.perfetto.dev and chrome://tracing
// open: a process per logged rank, a track per thread, every MPI call a
// slice (category mpi) with its wait state nested inside it (wait), the
// computation between calls (compute), an arrow per matched message
// (message, ph s at the send, f at the completion of the receive), and the
// critical path marked (args.critical on its slices) and drawn on a track
// of its own (category critical: which rank it runs on when).
//
// Each analyzer rank writes its part's events (its logged ranks, in call
// order) and rank 0 puts them into one file in rank order, streamed in
// batches of bounded size: no rank holds more than its own part's calls
// and a few batches. The file is the same at any number of analyzer ranks.
//
// A budget (Options.MaxBytes) keeps the file openable: the bytes of every
// slice are counted first (by the code that writes them), and when the
// whole run does not fit, the shortest calls and stretches of computation
// are left out, with their waits and arrows, down to the duration at
// which the rest fits; the critical path is always drawn whole.
package timeline

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

// Options say what the timeline shows.
type Options struct {
	Window   graph.Window // ns since the run's start; slices are kept by Window.Holds and clipped to it
	MaxBytes int64        // the file's budget, 0 for none
	// EndsAt, on rank 0, names where a critical stretch of computation
	// ends (report.Report.EndsAt): its slice's args.ends_at. Nil: none.
	EndsAt func(*report.Segment) string
}

// Summary is what the timeline holds, the same on every analyzer rank.
// Counts are of what lies in the window; "Drawn" of what the file has.
type Summary struct {
	Bytes                     int64 // the file's size (rank 0)
	Calls, CallsDrawn         int64 // MPI calls
	Stretches, StretchesDrawn int64 // stretches of computation (of positive length) between calls
	Messages, MessagesDrawn   int64 // matched messages with both ends in the window, and arrows drawn
	Segments, SegmentsDrawn   int64 // critical-path segments: slices with args.critical
	MinCriticalNs             int64 // the shortest of those drawn on the ranks' tracks, when the budget left some out (0: all)
	// CriticalCallsLeftOut and CriticalStretchesLeftOut are the calls and
	// stretches among Calls - CallsDrawn and Stretches - StretchesDrawn
	// that are on the critical path (MinCriticalNs).
	CriticalCallsLeftOut, CriticalStretchesLeftOut int64
	MinNs                                          int64 // the shortest call or stretch off the critical path drawn (0: all, MaxInt64: none)
	Track                                          bool  // the critical path's own track is drawn
	OverBudget                                     bool  // not even the file with nothing drawn fits the budget
	MaxBytes                                       int64
}

// Capped says whether the budget left anything out.
func (s *Summary) Capped() bool { return s.MinNs > 0 || !s.Track || s.MinCriticalNs > 0 }

// Note says what the budget left out, for people ("" if nothing).
func (s *Summary) Note() string {
	if !s.Capped() {
		return ""
	}
	mb := float64(s.MaxBytes) / 1e6
	var n string
	if s.MinNs > 0 {
		which := "shorter than " + report.Duration(s.MinNs)
		if s.MinNs == math.MaxInt64 {
			which = "(all)"
		}
		n = fmt.Sprintf("left out %d of %d MPI calls and %d of %d stretches of computation off the critical path %s, "+
			"with their waits and %d of %d message arrows, to stay under %g MB (--timeline-max-mb)",
			s.Calls-s.CallsDrawn-s.CriticalCallsLeftOut, s.Calls, s.Stretches-s.StretchesDrawn-s.CriticalStretchesLeftOut, s.Stretches, which,
			s.Messages-s.MessagesDrawn, s.Messages, mb)
	}
	if !s.Track {
		if n != "" {
			n += "; "
		}
		n += "left out the critical path's own track (its slices are still marked critical)"
	}
	switch {
	case s.MinCriticalNs > 0 && s.Track:
		n += fmt.Sprintf("; left out %d of the critical path's %d slices on the ranks' tracks shorter than %s (its own track shows it whole)",
			s.Segments-s.SegmentsDrawn, s.Segments, report.Duration(s.MinCriticalNs))
	case s.MinCriticalNs == math.MaxInt64:
		n += fmt.Sprintf("; left out all %d of the critical path's slices", s.Segments)
	case s.MinCriticalNs > 0:
		n += fmt.Sprintf("; left out %d of the critical path's %d slices, those shorter than %s: the critical path is drawn in part",
			s.Segments-s.SegmentsDrawn, s.Segments, report.Duration(s.MinCriticalNs))
	default:
		n += "; the critical path is complete"
	}
	if s.OverBudget {
		n += fmt.Sprintf("; with nothing drawn the file needs more than %g MB: it is larger", mb)
	}
	return n
}

// batchBytes is the size of the batches the other ranks stream to rank 0.
const batchBytes = 4 << 20

// headerBytes bounds what rank 0 writes besides the parts and the
// critical path's track: the opening, the cpath metadata event, the
// closing. The budget reserves it.
const headerBytes = 4096

// Write writes the timeline of the run whose part p this rank holds. Every
// rank of c calls it; rank 0 writes the file to out and passes segs, the
// report's critical-path segments (already restricted to the window, each
// naming its end vertex), which the others leave nil. It returns the same
// error on every rank.
func Write(c mpix.Comm, p *graph.PAG, segs []report.Segment, out io.Writer, opt Options) (*Summary, error) {
	w := newWriter(p, opt)
	for _, step := range []func() error{
		func() error { return w.critical(c, segs) },
		func() error { return w.stretchEnds(c, segs, opt.EndsAt) },
		func() error { return w.numberFlows(c) },
		func() error { return w.askSenders(c) },
		func() error { return w.budget(c, segs) },
		func() error { return w.tellSenders(c) },
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	err := w.stream(c, segs, out)
	return &w.sum, mpix.Agree(c, err)
}

type writer struct {
	p      *graph.PAG
	opt    Options
	t0     int64
	stride int64    // a thread's tid is its process's pid + thread × stride
	crit   []uint64 // bit 2l+k: vertex 2c+k (c = CallLo+l) ends a critical-path segment
	// ends are the owned critical stretches of computation that
	// Options.EndsAt names, by vertex, and endNames the names (as JSON
	// strings).
	ends     []critEnd
	endNames [][]byte

	// The heads of the slices (sliceHead), by operation, wait state and
	// kind of computation; the communicators' names, quoted.
	mpiHead                 [256][]byte
	waitHead                [graph.NumWaitKinds][]byte
	computeHead, launchHead []byte
	commName                [][]byte
	waitOf                  []int32 // by owned call: its wait in p.Waits, -1 for none

	recv []recvFlow // messages into owned calls, by call, then sender
	send []sendFlow // drawn messages sent by owned calls, by call, then id

	minBucket int // calls and stretches off the path are drawn from this bucket of duration on
	// minCrit is minBucket for the critical path's slices on the ranks'
	// tracks: above 0 only when they alone do not fit the budget, and
	// its own track, drawn, shows the path whole.
	minCrit int
	track   bool
	sum     Summary
}

// recvFlow is a message whose receive an owned call completed, with what
// the timeline makes of both its ends.
type recvFlow struct {
	call, send int32 // the completing call, the send's posting call
	id         int64
	r, s       side
}

// side is how one end of a message is drawn. The owner of the other end
// is told it as its memory.
type side struct {
	in, crit bool  // its call lies in the window; it ends a critical segment
	bucket   uint8 // of its call's drawn duration
	_        uint8
	bytes    int32 // of its flow event (the sender's: with an id of one digit)
}

func (x side) drawn(w *writer) bool { return x.in && int(x.bucket) >= w.minOf(x.crit) }

// minOf is the shortest bucket drawn of the critical path's slices
// (crit) or of the others.
func (w *writer) minOf(crit bool) int {
	if crit {
		return w.minCrit
	}
	return w.minBucket
}

// sendFlow is a drawn message sent by an owned call, as the receiver's
// owner tells the sender's.
type sendFlow struct {
	call int32
	_    int32
	id   int64
}

func newWriter(p *graph.PAG, opt Options) *writer {
	w := &writer{p: p, opt: opt, t0: p.T0, stride: int64(p.Ranks) + 1}
	for i := range w.mpiHead {
		w.mpiHead[i] = sliceHead("mpi", quote(trace.Op(i).String()))
	}
	for k := range w.waitHead {
		w.waitHead[k] = sliceHead("wait", quote(graph.WaitKind(k).String()))
	}
	w.computeHead, w.launchHead = sliceHead("compute", quote("compute")), sliceHead("compute", quote("launch"))
	for _, cm := range p.Comms {
		w.commName = append(w.commName, quote(cm.Name))
	}
	w.waitOf = make([]int32, p.CallHi-p.CallLo)
	for i := range w.waitOf {
		w.waitOf[i] = -1
	}
	for i, wt := range p.Waits {
		w.waitOf[wt.Call-p.CallLo] = int32(i)
	}
	w.sum.MaxBytes = opt.MaxBytes
	return w
}

// critical sends every rank the critical vertices it owns (from rank 0,
// which has the report's segments).
func (w *writer) critical(c mpix.Comm, segs []report.Segment) error {
	out := make([][]int32, c.Size())
	for _, s := range segs {
		q := w.p.Owner(s.Vertex >> 1)
		out[q] = append(out[q], s.Vertex)
	}
	got, err := mpix.Ship(c, out)
	var vs []int32
	if err == nil {
		vs, err = mpix.Concat[int32](got)
	}
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	p := w.p
	w.crit = make([]uint64, (2*(p.CallHi-p.CallLo)+63)/64)
	for _, v := range vs {
		if v>>1 < p.CallLo || v>>1 >= p.CallHi {
			err = fmt.Errorf("timeline: critical vertex %d is not this rank's", v)
			break
		}
		i := v - 2*p.CallLo
		w.crit[i>>6] |= 1 << (i & 63)
	}
	return mpix.Agree(c, err)
}

// critEnd is a critical stretch of computation, by its end vertex, and
// the index of its Options.EndsAt name; it crosses the wire as its
// memory.
type critEnd struct{ Vertex, Name int32 }

// stretchEnds sends every rank, from rank 0, the names of where its
// critical stretches of computation end, and every rank the names.
func (w *writer) stretchEnds(c mpix.Comm, segs []report.Segment, endsAt func(*report.Segment) string) error {
	out := make([][]critEnd, c.Size())
	e := mpix.NewEncoder(nil)
	if endsAt != nil {
		idx := map[string]int32{}
		var names []string
		for i := range segs {
			s := &segs[i]
			if s.Kind != "compute" {
				continue
			}
			n := endsAt(s)
			k, ok := idx[n]
			if !ok {
				k = int32(len(names))
				idx[n] = k
				names = append(names, n)
			}
			q := w.p.Owner(s.Vertex >> 1)
			out[q] = append(out[q], critEnd{s.Vertex, k})
		}
		mpix.PutList(e, names, func(e *mpix.Encoder, n *string) { e.PutString(*n) })
	}
	got, err := mpix.Ship(c, out)
	if err == nil {
		w.ends, err = mpix.Concat[critEnd](got)
	}
	var tables [][]byte
	if err == nil {
		tables, err = c.Allgatherv(e.Bytes())
	}
	if err == nil && len(tables[0]) > 0 {
		d := mpix.NewDecoder(tables[0])
		w.endNames = mpix.ReadList(d, func(d *mpix.Decoder, n *[]byte) { *n = quote(d.ReadString()) }) // quoted once, not per slice
		err = d.Done()
	}
	if err == nil {
		slices.SortFunc(w.ends, func(a, b critEnd) int { return cmp.Compare(a.Vertex, b.Vertex) })
		for _, x := range w.ends {
			if x.Name < 0 || int(x.Name) >= len(w.endNames) {
				err = fmt.Errorf("timeline: stretch end %d names %d of %d", x.Vertex, x.Name, len(w.endNames))
				break
			}
		}
	}
	return mpix.Agree(c, err)
}

// endsAt is the name (a JSON string) of where the critical stretch of computation ending
// at owned vertex v ends (nil for none).
func (w *writer) endsAt(v int32) []byte {
	i, ok := slices.BinarySearchFunc(w.ends, v, func(x critEnd, v int32) int { return cmp.Compare(x.Vertex, v) })
	if !ok {
		return nil
	}
	return w.endNames[w.ends[i].Name]
}

// isCritical says whether owned vertex v ends a critical-path segment.
func (w *writer) isCritical(v int32) bool {
	i := v - 2*w.p.CallLo
	return w.crit[i>>6]&(1<<(i&63)) != 0
}

// numberFlows lists the messages the owned calls completed: the late
// sender edges into their ends, by call and then by sender, which is
// their order in the file and, after those of the parts before, their
// ids (from 1).
func (w *writer) numberFlows(c mpix.Comm) error {
	p := w.p
	if p.CallsOnly {
		return nil // no graph: no messages matched to draw
	}
	base := p.Bounds[p.Part]
	// Counted first: grown by appends, the slice's copies and fresh pages
	// cost more than the whole walk.
	n := 0
	if p.CallHi > p.CallLo {
		for e := p.InStart[2*p.CallLo-base]; e < p.InStart[2*p.CallHi-base]; e++ {
			if p.InKind[e] == graph.EdgeLateSender {
				n++
			}
		}
	}
	w.recv = slices.Grow(w.recv[:0], n)
	var srcs []int32
	for call := p.CallLo; call < p.CallHi; call++ {
		v := 2*call + 1 - base
		srcs = srcs[:0]
		for e := p.InStart[v]; e < p.InStart[v+1]; e++ {
			if p.InKind[e] == graph.EdgeLateSender {
				srcs = append(srcs, p.InSrc[e]>>1)
			}
		}
		slices.Sort(srcs)
		for _, s := range srcs {
			w.recv = append(w.recv, recvFlow{call: call, send: s})
		}
	}
	counts := make([]int64, c.Size())
	counts[c.Rank()] = int64(len(w.recv))
	if err := mpix.Agree(c, c.Allreduce(counts, mpix.Sum)); err != nil {
		return err
	}
	var id int64
	for q := 0; q < c.Rank(); q++ {
		id += counts[q]
	}
	for i := range w.recv {
		id++
		w.recv[i].id = id
	}
	return nil
}

// askSenders learns from the senders' owners how the sending end of every
// message into an owned call is drawn, so that the budget counts each
// arrow exactly, under the duration that decides whether it is drawn.
func (w *writer) askSenders(c mpix.Comm) error {
	p := w.p
	ask := make([][]int32, c.Size())
	asked := make([][]int32, c.Size()) // indices into w.recv
	per := make([]int, c.Size())
	for i := range w.recv {
		per[p.Owner(w.recv[i].send)]++
	}
	for q, n := range per {
		ask[q], asked[q] = make([]int32, 0, n), make([]int32, 0, n)
	}
	for i := range w.recv {
		q := p.Owner(w.recv[i].send)
		ask[q] = append(ask[q], w.recv[i].send)
		asked[q] = append(asked[q], int32(i))
	}
	got, err := mpix.Ship(c, ask)
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	answers := make([][]side, c.Size())
	for q, bs := range got {
		calls, err := mpix.FromBytes[int32](bs)
		if err == nil {
			for _, x := range calls {
				if x < p.CallLo || x >= p.CallHi {
					err = fmt.Errorf("timeline: asked about call %d, which rank %d does not own", x, c.Rank())
					break
				}
			}
		}
		if err != nil {
			return mpix.Agree(c, err)
		}
		answers[q] = make([]side, len(calls))
		var v callView
		for i, x := range calls {
			pid := int64(p.Rank(x)) + 1
			w.view(&v, x)
			t := track{pid, pid + int64(p.Thread[x-p.CallLo])*w.stride}
			answers[q][i] = v.side(int32(flowLen(flowStart, t.len(), v.at, 0)))
		}
	}
	if err := mpix.Agree(c, nil); err != nil {
		return err
	}
	got, err = mpix.Ship(c, answers)
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	back, err := mpix.Answers[side](got, func(q int) int { return len(asked[q]) }, "timeline arrows")
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	for q, as := range back {
		for i, a := range as {
			w.recv[asked[q][i]].s = a
		}
	}
	return nil
}

// callView is how the timeline draws an owned call.
type callView struct {
	start, end, cs, ce int64 // its span, and clipped to the window (ns since T0)
	in, crit           bool  // the window holds it; it ends a critical segment
	bucket             int   // of its drawn duration
	wait               *graph.Wait
	ws, we             int64 // its wait inside the call, clipped
	drawWait           bool
	at                 int64 // where the ends of its messages' arrows are
}

// view sets v to how owned call c is drawn (filled in place: it is made
// for every call, twice).
func (w *writer) view(v *callView, c int32) {
	p := w.p
	l := c - p.CallLo
	var wt *graph.Wait
	if k := w.waitOf[l]; k >= 0 {
		wt = &p.Waits[k]
	}
	v.start, v.end, v.crit, v.wait, v.drawWait = p.Start[l]-w.t0, p.End[l]-w.t0, w.isCritical(2*c+1), wt, false
	win := w.opt.Window
	v.in = v.crit || win.Holds(v.start, v.end)
	v.cs, v.ce = win.Clip(v.start, v.end)
	v.bucket = bucket(v.ce - v.cs)
	// Arrows bind to the call, in the middle of its part after the wait:
	// strictly inside it, so that a viewer cannot take the call next to it.
	bound := v.cs
	if wt != nil {
		v.ws = max(wt.From-w.t0, v.start)
		v.we = max(v.ws, min(wt.From+wt.Ns-w.t0, v.end))
		bound = min(max(v.we, v.cs), v.ce)
		if v.drawWait = win.Holds(v.ws, v.we); v.drawWait {
			v.ws, v.we = win.Clip(v.ws, v.we)
		}
	}
	if v.ce-bound < 2 {
		bound = v.cs // no time after the wait: inside the call all the same (its wait)
	}
	v.at = bound + (v.ce-bound)/2
}

func (v *callView) side(bytes int32) side {
	return side{in: v.in, crit: v.crit, bucket: uint8(v.bucket), bytes: bytes}
}

func (v *callView) drawn(w *writer) bool { return v.in && v.bucket >= w.minOf(v.crit) }

// tellSenders tells the senders' owners which of their messages' arrows
// are drawn: those whose both ends are.
func (w *writer) tellSenders(c mpix.Comm) error {
	p := w.p
	tell := make([][]sendFlow, c.Size())
	stats := make([]int64, 2) // messages in the window, drawn
	for i := range w.recv {
		f := &w.recv[i]
		if !f.r.in || !f.s.in {
			continue
		}
		stats[0]++
		if f.r.drawn(w) && f.s.drawn(w) {
			stats[1]++
			q := p.Owner(f.send)
			tell[q] = append(tell[q], sendFlow{call: f.send, id: f.id})
		}
	}
	got, err := mpix.Ship(c, tell)
	if err == nil {
		w.send, err = mpix.Concat[sendFlow](got)
	}
	if err == nil {
		w.send = slices.Clone(w.send)
		slices.SortFunc(w.send, func(a, b sendFlow) int {
			if a.call != b.call {
				return cmp.Compare(a.call, b.call)
			}
			return cmp.Compare(a.id, b.id)
		})
		err = c.Allreduce(stats, mpix.Sum)
	}
	w.sum.Messages, w.sum.MessagesDrawn = stats[0], stats[1]
	return mpix.Agree(c, err)
}

// walk writes (or counts, with k) this part's events: for every owned
// rank its process and threads, and for every call the computation before
// it, its slice with its wait, and the ends of its messages' arrows.
// Counting, it takes everything the window holds and adds the bytes of
// each stretch, call (with its wait) and arrow to the bucket of the
// duration that decides whether it is drawn, or to what is always drawn.
// It walks the owned ranks [rlo, rhi); flush is called when the buffer
// has grown past a batch.
func (w *writer) walk(e *enc, k *counts, rlo, rhi int, flush func()) {
	p := w.p
	win := w.opt.Window
	counting := k != nil
	first := p.RankStart[rlo]
	ri := sort.Search(len(w.recv), func(i int) bool { return w.recv[i].call >= first })
	si := sort.Search(len(w.send), func(i int) bool { return w.send[i].call >= first })
	var prevEnd []int64 // by thread: when its last call ended (ns since T0), -1 before its first
	var trk [][]byte    // by thread: its track's bytes
	v := &callView{}
	for r := rlo; r < rhi; r++ {
		pid := int64(r) + 1
		n0 := e.n
		e.processMeta(false, pid, "rank "+strconv.Itoa(r), int64(r))
		if counting {
			k.fixed += e.n - n0
		}
		for i := range prevEnd {
			prevEnd[i] = -1
		}
		for c := p.RankStart[r]; c < p.RankStart[r+1]; c++ {
			l := c - p.CallLo
			th := int(p.Thread[l])
			for th >= len(prevEnd) {
				prevEnd = append(prevEnd, -1)
				trk = append(trk, nil)
			}
			start := p.Start[l] - w.t0

			// The computation before the call: since the thread's last
			// call, or since the run's start (launch).
			head := w.computeHead
			from := prevEnd[th]
			if from < 0 {
				t := track{pid, pid + int64(th)*w.stride}
				trk[th] = t.bytes()
				n0 := e.n
				e.threadMeta(t, "thread "+strconv.Itoa(th))
				if counting {
					k.fixed += e.n - n0
				}
				head, from = w.launchHead, 0
			}
			tb := trk[th]
			from = min(from, start)
			prevEnd[th] = p.End[l] - w.t0
			critS := w.isCritical(2 * c)
			if critS || from < start && win.Holds(from, start) {
				s, en := win.Clip(from, start)
				if counting || bucket(en-s) >= w.minOf(critS) {
					n0 := e.n
					e.slice(head, tb, s, en-s)
					a := args{e: e}
					if critS {
						a.key(keyCritical)
						e.raw("true")
						if n := w.endsAt(2 * c); n != nil {
							a.key(keyEndsAt)
							e.bytes(n)
						}
					}
					a.end()
					if counting {
						if critS {
							b := bucket(en - s)
							k.critBytes[b] += e.n - n0
							k.critStretchesAt[b]++
							k.critStretches++
						} else {
							b := bucket(en - s)
							k.bytes[b] += e.n - n0
							k.stretches[b]++
						}
					}
				}
			}

			// The call, its wait, its arrows.
			for ri < len(w.recv) && w.recv[ri].call < c {
				ri++
			}
			for si < len(w.send) && w.send[si].call < c {
				si++
			}
			w.view(v, c)
			if !v.in || !counting && !v.drawn(w) {
				continue
			}
			n0 = e.n
			e.slice(w.mpiHead[p.Op[l]], tb, v.cs, v.ce-v.cs)
			a := args{e: e}
			if b := p.Bytes[l]; b > 0 {
				a.key(keyBytes)
				e.int(int64(b))
			}
			if cm := p.Comm[l]; cm >= 0 && int(cm) < len(w.commName) {
				a.key(keyComm)
				e.bytes(w.commName[cm])
			}
			if v.crit {
				a.key(keyCritical)
				e.raw("true")
			}
			a.end()
			if v.drawWait {
				wt := v.wait
				e.slice(w.waitHead[wt.Kind], tb, v.ws, v.we-v.ws)
				a := args{e: e}
				a.key(keyWaitNs)
				e.int(wt.Ns)
				a.key(keyCause)
				e.int(int64(p.Rank(wt.Cause)))
				if wt.WrongOrder {
					a.key(keyWrong)
					e.raw("true")
				}
				a.end()
			}
			if counting {
				if v.crit {
					k.critBytes[v.bucket] += e.n - n0
					k.critCallsAt[v.bucket]++
					k.critCalls++
				} else {
					k.bytes[v.bucket] += e.n - n0
					k.calls[v.bucket]++
				}
			}
			for ; si < len(w.send) && w.send[si].call == c; si++ {
				e.flow(flowStart, tb, v.at, w.send[si].id)
			}
			for ; ri < len(w.recv) && w.recv[ri].call == c; ri++ {
				f := &w.recv[ri]
				if counting {
					f.r = v.side(0)
					w.countArrow(k, f, len(tb), v.at)
				} else if f.r.drawn(w) && f.s.drawn(w) {
					e.flow(flowEnd, tb, v.at, f.id)
				}
			}
			if flush != nil && len(e.b) >= batchBytes {
				flush()
			}
		}
	}
}

// countArrow counts a message's arrow (both its events) under the shorter
// of its ends off the critical path: it is drawn when that one is.
func (w *writer) countArrow(k *counts, f *recvFlow, trackLen int, at int64) {
	if !f.r.in || !f.s.in {
		return
	}
	n := flowLen(flowEnd, trackLen, at, f.id) + int64(f.s.bytes) - 1 + int64(intLen(f.id))
	b, cb := -1, min(f.r.bucket, f.s.bucket) // the shortest end off the path; of both, if both are on it
	for _, x := range []side{f.r, f.s} {
		if !x.crit && (b < 0 || int(x.bucket) < b) {
			b = int(x.bucket)
		}
	}
	if b < 0 {
		k.critBytes[cb] += n
	} else {
		k.bytes[b] += n
	}
}

// writeTrack writes the critical path's own track: where it runs, a
// slice for each stay on one rank (the segments in a row on it; each is
// a slice marked critical on the rank's track).
func (w *writer) writeTrack(e *enc, segs []report.Segment) {
	pid := int64(w.p.Ranks) + 1
	t := track{pid, pid}
	e.threadMeta(t, "critical path")
	tb := t.bytes()
	var name []byte
	for i := 0; i < len(segs); {
		j := i + 1
		for j < len(segs) && segs[j].Rank == segs[i].Rank {
			j++
		}
		s, en := segs[i].StartNs, segs[j-1].EndNs
		name = append(strconv.AppendInt(append(name[:0], `"rank `...), int64(segs[i].Rank), 10), '"')
		e.slice(sliceHead("critical", name), tb, s, en-s)
		a := args{e: e}
		a.key(keySegments)
		e.int(int64(j - i))
		a.end()
		i = j
	}
}

// header is the file's opening: the format's object, the critical path's
// process and the cpath event, which says what the file holds.
func (w *writer) header(e *enc) {
	p := w.p
	s := &w.sum
	e.raw(`{"displayTimeUnit":"ns","traceEvents":[` + "\n")
	pid := int64(p.Ranks) + 1
	e.processMeta(true, pid, "critical path", -1)
	e.begin(false)
	e.raw(`{"ph":"M","name":"cpath","pid":`)
	e.int(pid)
	e.raw(`,"args":{"run_id":`)
	e.str(p.RunID)
	for _, kv := range []struct {
		k string
		v int64
	}{{"ranks", int64(p.Ranks)}, {"window_from_ns", w.opt.Window.From}, {"window_to_ns", w.opt.Window.To},
		{"calls", s.Calls}, {"calls_drawn", s.CallsDrawn}, {"stretches", s.Stretches}, {"stretches_drawn", s.StretchesDrawn},
		{"messages", s.Messages}, {"messages_drawn", s.MessagesDrawn}, {"critical_segments", s.Segments},
		{"critical_segments_drawn", s.SegmentsDrawn}, {"min_ns", s.MinNs}, {"min_critical_ns", s.MinCriticalNs}, {"max_bytes", s.MaxBytes}} {
		e.raw(`,"` + kv.k + `":`)
		e.int(kv.v)
	}
	e.raw(`,"critical_track":` + strconv.FormatBool(s.Track))
	if n := s.Note(); n != "" {
		e.raw(`,"left_out":`)
		e.str(n)
	}
	e.raw("}}")
	if n := s.Note(); n != "" {
		e.begin(false)
		e.raw(`{"ph":"M","name":"process_labels","pid":`)
		e.int(pid)
		e.raw(`,"args":{"labels":`)
		e.str(n)
		e.raw("}}")
	}
}

// batchHead heads each message of the stream to rank 0: More is 1 for a
// batch, the text after it, and 0 for a rank's last message, the head
// alone. The ranks that do not write get the head alone too: each must
// know when the next rank's turn comes.
type batchHead struct {
	More uint32
	_    uint32
}

// readBatch reads a message of the stream.
func readBatch(m []byte) (more bool, text []byte, err error) {
	d := mpix.NewDecoder(m)
	h := mpix.ReadRecord[batchHead](d)
	text = d.ReadRest()
	return h.More == 1, text, d.Done()
}

// stream writes the file: rank 0 its header, the critical path's track
// and its own part, then every other rank's part in rank order, which
// each sends in batches (one exchange a batch, in turn). Each rank makes
// its batches as it goes, a few ahead, on a goroutine of its own, so that
// making them overlaps with writing and waiting.
func (w *writer) stream(c mpix.Comm, segs []report.Segment, out io.Writer) error {
	me, size := c.Rank(), c.Size()
	p := w.p
	// A batch is a message of a batchHead and the text after it, made in
	// place; rank 0 writes the text.
	batches, free := make(chan []byte, 2), make(chan []byte, 4)
	newBatch := func() []byte {
		var b []byte
		select {
		case b = <-free:
		default:
			b = make([]byte, 0, batchBytes+64<<10)
		}
		e := mpix.NewEncoder(b[:0])
		mpix.PutRecord(e, batchHead{More: 1})
		return e.Bytes()
	}
	recycle := func(b []byte) {
		select {
		case free <- b:
		default:
		}
	}
	go func() {
		e := &enc{b: newBatch()}
		if me == 0 {
			w.header(e)
			if w.track {
				w.writeTrack(e, segs)
			}
		}
		w.walk(e, nil, p.RankLo, p.RankHi, func() {
			batches <- e.b
			e.b = newBatch()
		})
		batches <- e.b
		close(batches)
	}()
	var werr error
	var written int64
	write := func(b []byte) {
		if werr == nil {
			var n int
			n, werr = out.Write(b)
			written += int64(n)
		}
	}
	if me == 0 {
		for b := range batches {
			_, text, _ := readBatch(b) // made here
			write(text)
			recycle(b)
		}
	}
	defer func() {
		for range batches { // after an error: let the goroutine end
		}
	}()
	send := make([][]byte, size)
	end := mpix.NewEncoder(nil)
	mpix.PutRecord(end, batchHead{}) // a rank's last message: no more batches
	for q := 1; q < size; q++ {
		for more := true; more; {
			clear(send)
			if me == q {
				b, ok := <-batches
				if ok {
					send[0] = b
				} else {
					send[0] = end.Bytes()
				}
				for r := 1; r < size; r++ {
					if r != q {
						send[r] = send[0][:len(end.Bytes())] // the head alone
					}
				}
			}
			got, err := c.Alltoallv(send)
			if err != nil {
				return err // a broken exchange: every rank sees it
			}
			var m []byte
			if me == q {
				m = send[0]
			} else {
				m = got[q]
			}
			var text []byte
			if more, text, err = readBatch(m); err != nil {
				return fmt.Errorf("timeline: rank %d's batch: %v", q, err) // on every rank: the head is the same
			}
			if me == 0 {
				write(text)
			}
			if me == q && more {
				recycle(m)
			}
		}
	}
	if me != 0 {
		return nil
	}
	write([]byte("\n]}\n"))
	w.sum.Bytes = written
	return werr
}
