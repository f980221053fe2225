// Package timeline writes a run as trace-event JSON (the Trace Event
// Format's JSON Object Format), which ui.perfetto.dev and chrome://tracing
// open: a process per logged rank, a track per thread, every MPI call a
// slice (category mpi) with its wait state nested inside it (wait), the
// computation between calls (compute), an arrow per matched message
// (message, ph s at the send, f at the completion of the receive), and the
// critical path marked (args.critical on its slices) and drawn on a track
// of its own (category critical).
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
	"bufio"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

// Options say what the timeline shows.
type Options struct {
	Window   report.Window // ns since the run's start; slices are kept by Window.Holds and clipped to it
	MaxBytes int64         // the file's budget, 0 for none
}

// Summary is what the timeline holds, the same on every analyzer rank.
// Counts are of what lies in the window; "Drawn" of what the file has.
type Summary struct {
	Bytes                     int64 // the file's size (rank 0)
	Calls, CallsDrawn         int64 // MPI calls
	Stretches, StretchesDrawn int64 // stretches of computation (of positive length) between calls
	Messages, MessagesDrawn   int64 // matched messages with both ends in the window, and arrows drawn
	Segments                  int64 // critical-path segments: slices with args.critical
	MinNs                     int64 // the shortest call or stretch off the critical path drawn (0: all, MaxInt64: none)
	Track                     bool  // the critical path's own track is drawn
	OverBudget                bool  // the critical path alone does not fit the budget
	MaxBytes                  int64
}

// Capped says whether the budget left anything out.
func (s *Summary) Capped() bool { return s.MinNs > 0 || !s.Track }

// Note says what the budget left out, for people ("" if nothing).
func (s *Summary) Note() string {
	if !s.Capped() {
		return ""
	}
	mb := float64(s.MaxBytes) / 1e6
	var n string
	if s.MinNs > 0 {
		which := "shorter than " + nsText(s.MinNs)
		if s.MinNs == math.MaxInt64 {
			which = "(all)"
		}
		n = fmt.Sprintf("left out %d of %d MPI calls and %d of %d stretches of computation off the critical path %s, "+
			"with their waits and %d of %d message arrows, to stay under %g MB (--timeline-max-mb)",
			s.Calls-s.CallsDrawn, s.Calls, s.Stretches-s.StretchesDrawn, s.Stretches, which,
			s.Messages-s.MessagesDrawn, s.Messages, mb)
	}
	if !s.Track {
		if n != "" {
			n += "; "
		}
		n += "left out the critical path's own track (its slices are still marked critical)"
	}
	if s.OverBudget {
		n += fmt.Sprintf("; the critical path alone needs more than %g MB: the file is larger", mb)
	} else {
		n += "; the critical path is complete"
	}
	return n
}

func nsText(v int64) string {
	switch {
	case v < 1000:
		return strconv.FormatInt(v, 10) + " ns"
	case v < 1000_000:
		return strconv.FormatFloat(float64(v)/1e3, 'f', 1, 64) + " µs"
	case v < 1000_000_000:
		return strconv.FormatFloat(float64(v)/1e6, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(float64(v)/1e9, 'f', 3, 64) + " s"
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
	if err := w.critical(c, segs); err != nil {
		return nil, err
	}
	w.numberFlows()
	if err := w.budget(c, segs); err != nil {
		return nil, err
	}
	if err := w.flows(c); err != nil {
		return nil, err
	}
	err := w.stream(c, segs, out)
	return &w.sum, mpix.Agree(c, err)
}

type writer struct {
	p      *graph.PAG
	opt    Options
	t0     int64
	stride int64   // a thread's tid is its process's pid + thread × stride
	crit   []int32 // the owned vertices the critical path's segments end at, sorted

	opName   [256][]byte // quoted
	commName [][]byte
	waitName [graph.NumWaitKinds][]byte

	recv   []recvFlow // messages into owned calls, by call, then sender
	idBase int64      // the first id of this part's messages
	send   []sendFlow // drawn messages sent by owned calls, by call, then id

	minBucket int // calls and stretches off the path are drawn from this bucket of duration on
	track     bool
	sum       Summary
}

// recvFlow is a message whose receive an owned call completed.
type recvFlow struct {
	call, send int32 // the completing call, the send's posting call
	id         int64
	drawn      bool
}

// sendFlow is a drawn message sent by an owned call.
type sendFlow struct {
	call int32
	id   int64
}

func newWriter(p *graph.PAG, opt Options) *writer {
	w := &writer{p: p, opt: opt, t0: p.T0, stride: int64(p.Ranks) + 1}
	for i := range w.opName {
		w.opName[i] = quote(trace.Op(i).String())
	}
	for _, cm := range p.Comms {
		w.commName = append(w.commName, quote(cm.Name))
	}
	for k := range w.waitName {
		w.waitName[k] = quote(graph.WaitKind(k).String())
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
	if err == nil {
		w.crit, err = mpix.Concat[int32](got)
	}
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	w.crit = slices.Clone(w.crit)
	slices.Sort(w.crit)
	for _, v := range w.crit {
		if v>>1 < w.p.CallLo || v>>1 >= w.p.CallHi {
			err = fmt.Errorf("timeline: critical vertex %d is not this rank's", v)
			break
		}
	}
	return mpix.Agree(c, err)
}

func (w *writer) isCritical(v int32) bool {
	_, ok := slices.BinarySearch(w.crit, v)
	return ok
}

// numberFlows lists the messages the owned calls completed: the late
// sender edges into their ends, by call and then by sender, which is
// their order in the file and, with the parts' bases, their ids.
func (w *writer) numberFlows() {
	p := w.p
	base := p.Bounds[p.Part]
	var srcs []int32
	for c := p.CallLo; c < p.CallHi; c++ {
		v := 2*c + 1 - base
		srcs = srcs[:0]
		for e := p.InStart[v]; e < p.InStart[v+1]; e++ {
			if p.InKind[e] == graph.EdgeLateSender {
				srcs = append(srcs, p.InSrc[e]>>1)
			}
		}
		slices.Sort(srcs)
		for _, s := range srcs {
			w.recv = append(w.recv, recvFlow{call: c, send: s})
		}
	}
}

// Durations are bucketed by quarter octaves: what the budget keeps or
// leaves out is a whole number of buckets, from the shortest up.
const numBuckets = 256

func bucket(d int64) int {
	if d <= 0 {
		return 0
	}
	k := bits.Len64(uint64(d)) - 1 // the top bit
	var sub uint64
	if k >= 2 {
		sub = uint64(d) >> (k - 2) & 3
	} else {
		sub = uint64(d) << (2 - k) & 3
	}
	return 1 + 4*k + int(sub)
}

// bucketLow is the shortest duration in bucket b or above.
func bucketLow(b int) int64 {
	lo, hi := int64(0), int64(math.MaxInt64)
	for lo < hi {
		m := lo + (hi-lo)/2
		if bucket(m) >= b {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// counts is what the counting pass finds, summed over the ranks.
type counts struct {
	bytes, calls, stretches  [numBuckets]int64 // off the path, by bucket of duration
	fixed                    int64             // what is always drawn: metadata, the critical path's slices
	track                    int64             // the critical path's own track
	critCalls, critStretches int64
	messages                 []int64 // by analyzer rank: messages its calls completed
}

func (k *counts) flat() []int64 {
	x := make([]int64, 0, 3*numBuckets+4+len(k.messages))
	x = append(x, k.bytes[:]...)
	x = append(x, k.calls[:]...)
	x = append(x, k.stretches[:]...)
	x = append(x, k.fixed, k.track, k.critCalls, k.critStretches)
	return append(x, k.messages...)
}

func (k *counts) unflat(x []int64) {
	n := numBuckets
	copy(k.bytes[:], x[:n])
	copy(k.calls[:], x[n:2*n])
	copy(k.stretches[:], x[2*n:3*n])
	k.fixed, k.track, k.critCalls, k.critStretches = x[3*n], x[3*n+1], x[3*n+2], x[3*n+3]
	copy(k.messages, x[3*n+4:])
}

// budget counts the bytes of everything the window holds, by bucket of
// duration, and picks the shortest duration drawn so that the file fits.
func (w *writer) budget(c mpix.Comm, segs []report.Segment) error {
	p := w.p
	k := &counts{messages: make([]int64, c.Size())}
	k.messages[c.Rank()] = int64(len(w.recv))
	e := &enc{counting: true}
	if c.Rank() == 0 {
		w.writeTrack(e, segs)
		k.track = e.n
		e.n = 0
	}
	// An arrow is counted with its receive at the most its two events
	// can take, before anyone knows which are drawn.
	maxTs := min(w.opt.Window.To, p.T1-p.T0)
	maxPid := int64(p.Ranks) + 1
	arrow := flowMax(true, int64(p.Messages), maxPid, maxPid+math.MaxUint16*w.stride, maxTs) +
		flowMax(false, int64(p.Messages), maxPid, maxPid+math.MaxUint16*w.stride, maxTs)
	w.walk(e, k, arrow, nil)
	x := k.flat()
	if err := c.Allreduce(x, mpix.Sum); err != nil {
		return mpix.Agree(c, err)
	}
	k.unflat(x)
	for q := 0; q < c.Rank(); q++ {
		w.idBase += k.messages[q]
	}
	for i := range w.recv {
		w.recv[i].id = w.idBase + int64(i) + 1
	}

	fixed := k.fixed + headerBytes
	budget := w.opt.MaxBytes
	w.track = budget == 0 || fixed+k.track <= budget
	if w.track {
		fixed += k.track
	}
	var rest int64
	for _, b := range k.bytes {
		rest += b
	}
	if budget > 0 {
		for w.minBucket < numBuckets && fixed+rest > budget {
			rest -= k.bytes[w.minBucket]
			w.minBucket++
		}
	}
	s := &w.sum
	s.Track, s.OverBudget = w.track, budget > 0 && fixed+rest > budget
	s.Calls, s.Stretches = k.critCalls, k.critStretches
	s.CallsDrawn, s.StretchesDrawn = k.critCalls, k.critStretches
	for b := range numBuckets {
		s.Calls += k.calls[b]
		s.Stretches += k.stretches[b]
		if b >= w.minBucket {
			s.CallsDrawn += k.calls[b]
			s.StretchesDrawn += k.stretches[b]
		}
	}
	if w.minBucket > 0 {
		s.MinNs = bucketLow(w.minBucket)
	}
	s.Segments = k.critCalls + k.critStretches
	return nil
}

// callState says whether owned call c lies in the window (or on the
// critical path) and whether it is drawn.
func (w *writer) callState(c int32) (in, drawn bool) {
	l := c - w.p.CallLo
	s, e := w.p.Start[l]-w.t0, w.p.End[l]-w.t0
	if w.isCritical(2*c + 1) {
		return true, true
	}
	if !w.opt.Window.Holds(s, e) {
		return false, false
	}
	s, e = w.opt.Window.Clip(s, e)
	return true, bucket(e-s) >= w.minBucket
}

// wireFlow is a message on its way from its receiver's owner to its
// sender's.
type wireFlow struct {
	Send  int32
	Drawn int32 // the receive is drawn
	ID    int64
}

// flows decides which arrows are drawn: those whose send and receive
// both are. The receivers' owners ask the senders'.
func (w *writer) flows(c mpix.Comm) error {
	p := w.p
	ask := make([][]wireFlow, c.Size())
	var asked [][]int32 = make([][]int32, c.Size()) // indices into w.recv
	for i := range w.recv {
		f := &w.recv[i]
		in, drawn := w.callState(f.call)
		if !in {
			continue
		}
		q := p.Owner(f.send)
		d := int32(0)
		if drawn {
			d = 1
		}
		ask[q] = append(ask[q], wireFlow{f.send, d, f.id})
		asked[q] = append(asked[q], int32(i))
	}
	got, err := mpix.Ship(c, ask)
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	answers := make([][]uint8, c.Size())
	var stats [2]int64 // messages in the window, drawn
	for q, bs := range got {
		fs, err := mpix.FromBytes[wireFlow](bs)
		if err != nil {
			return mpix.Agree(c, err)
		}
		answers[q] = make([]uint8, len(fs))
		for i, f := range fs {
			if f.Send < p.CallLo || f.Send >= p.CallHi {
				return mpix.Agree(c, fmt.Errorf("timeline: asked about call %d, which rank %d does not own", f.Send, c.Rank()))
			}
			in, drawn := w.callState(f.Send)
			if !in {
				continue
			}
			stats[0]++
			if drawn && f.Drawn == 1 {
				stats[1]++
				answers[q][i] = 1
				w.send = append(w.send, sendFlow{f.Send, f.ID})
			}
		}
	}
	if err := mpix.Agree(c, nil); err != nil {
		return err
	}
	slices.SortFunc(w.send, func(a, b sendFlow) int {
		if a.call != b.call {
			return int(a.call - b.call)
		}
		return int(a.id - b.id)
	})
	got, err = mpix.Ship(c, answers)
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	back, err := mpix.Answers[uint8](got, func(q int) int { return len(asked[q]) }, "timeline arrows")
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	for q, as := range back {
		for i, a := range as {
			w.recv[asked[q][i]].drawn = a == 1
		}
	}
	x := stats[:]
	if err := c.Allreduce(x, mpix.Sum); err != nil {
		return mpix.Agree(c, err)
	}
	w.sum.Messages, w.sum.MessagesDrawn = x[0], x[1]
	return nil
}

// walk writes (or counts, with k) this part's events: for every owned
// rank its process and threads, and for every call the computation before
// it, its slice, its wait and the ends of its messages' arrows. Counting,
// it takes everything the window holds and adds each stretch's and call's
// bytes (a call's with its wait and, at arrow bytes each, its messages'
// arrows) to the bucket of its duration, or to what is always drawn.
// flush is called when the buffer has grown past a batch.
func (w *writer) walk(e *enc, k *counts, arrow int64, flush func()) {
	p := w.p
	win := w.opt.Window
	counting := k != nil
	var ci, wi, ri, si int
	var prevEnd []int64 // by thread: when its last call ended (ns since T0), -1 before its first
	for r := p.RankLo; r < p.RankHi; r++ {
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
			}
			t := track{pid, pid + int64(th)*w.stride}
			start, end := p.Start[l]-w.t0, p.End[l]-w.t0
			for ci < len(w.crit) && w.crit[ci] < 2*c {
				ci++
			}
			critS := ci < len(w.crit) && w.crit[ci] == 2*c
			critE := ci < len(w.crit) && w.crit[ci] == 2*c+1 || ci+1 < len(w.crit) && w.crit[ci+1] == 2*c+1

			// The computation before the call: since the thread's last
			// call, or since the run's start (launch).
			name := computeName
			from := prevEnd[th]
			if from < 0 {
				n0 := e.n
				e.threadMeta(t, "thread "+strconv.Itoa(th))
				if counting {
					k.fixed += e.n - n0
				}
				name, from = launchName, 0
			}
			from = min(from, start)
			prevEnd[th] = end
			if critS || from < start && win.Holds(from, start) {
				s, en := win.Clip(from, start)
				if counting || critS || bucket(en-s) >= w.minBucket {
					n0 := e.n
					e.slice("compute", name, t, s, en-s)
					a := args{e: e}
					if critS {
						a.key("critical")
						e.raw("true")
					}
					a.end()
					if counting {
						if critS {
							k.fixed += e.n - n0
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
			for wi < len(p.Waits) && p.Waits[wi].Call < c {
				wi++
			}
			for ri < len(w.recv) && w.recv[ri].call < c {
				ri++
			}
			for si < len(w.send) && w.send[si].call < c {
				si++
			}
			cs, ce := win.Clip(start, end)
			if !critE && !(win.Holds(start, end) && (counting || bucket(ce-cs) >= w.minBucket)) {
				continue
			}
			n0 := e.n
			e.slice("mpi", w.opName[p.Op[l]], t, cs, ce-cs)
			a := args{e: e}
			if b := p.Bytes[l]; b > 0 {
				a.key("bytes")
				e.int(int64(b))
			}
			if cm := p.Comm[l]; cm >= 0 && int(cm) < len(w.commName) {
				a.key("comm")
				e.bytes(w.commName[cm])
			}
			if critE {
				a.key("critical")
				e.raw("true")
			}
			a.end()
			// Arrows bind to the call, in the middle of its part after the
			// wait: strictly inside it, so that a viewer cannot take the
			// call next to it.
			bound := cs
			if wi < len(p.Waits) && p.Waits[wi].Call == c {
				wt := &p.Waits[wi]
				ws := max(wt.From-w.t0, start)
				we := max(ws, min(wt.From+wt.Ns-w.t0, end))
				if win.Holds(ws, we) {
					ws, we = win.Clip(ws, we)
					e.slice("wait", w.waitName[wt.Kind], t, ws, we-ws)
					a := args{e: e}
					a.key("wait_ns")
					e.int(wt.Ns)
					a.key("cause_rank")
					e.int(int64(p.Rank(wt.Cause)))
					if wt.WrongOrder {
						a.key("wrong_order")
						e.raw("true")
					}
					a.end()
				}
				bound = min(max(we, cs), ce)
			}
			if ce-bound < 2 {
				bound = cs // no time after the wait: inside the call all the same (its wait)
			}
			at := bound + (ce-bound)/2
			for ; si < len(w.send) && w.send[si].call == c; si++ {
				e.flow(true, w.send[si].id, t, at)
			}
			for ; ri < len(w.recv) && w.recv[ri].call == c; ri++ {
				if counting {
					e.n += arrow
				} else if w.recv[ri].drawn {
					e.flow(false, w.recv[ri].id, t, at)
				}
			}
			if counting {
				if critE {
					k.fixed += e.n - n0
					k.critCalls++
				} else {
					b := bucket(ce - cs)
					k.bytes[b] += e.n - n0
					k.calls[b]++
				}
			}
			if flush != nil && len(e.b) >= batchBytes {
				flush()
			}
		}
	}
}

var computeName, launchName = quote("compute"), quote("launch")

// writeTrack writes the critical path's own track: a slice per segment.
func (w *writer) writeTrack(e *enc, segs []report.Segment) {
	pid := int64(w.p.Ranks) + 1
	t := track{pid, pid}
	e.threadMeta(t, "critical path")
	var name []byte
	for _, s := range segs {
		name = append(strconv.AppendInt(append(name[:0], `"rank `...), int64(s.Rank), 10), '"')
		e.slice("critical", name, t, s.StartNs, s.EndNs-s.StartNs)
		a := args{e: e}
		a.key("kind")
		e.str(s.Kind)
		a.key("op")
		e.str(s.Op)
		if s.Callsite != "" {
			a.key("callsite")
			e.str(s.Callsite)
		}
		a.end()
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
		{"min_ns", s.MinNs}, {"max_bytes", s.MaxBytes}} {
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

// stream writes the file: rank 0 its header, the critical path's track
// and its own part, then every other rank's part in rank order, which
// each sends in batches (one exchange a batch, in turn), generating the
// next while it waits.
func (w *writer) stream(c mpix.Comm, segs []report.Segment, out io.Writer) error {
	me, size := c.Rank(), c.Size()
	var werr error
	var bw *bufio.Writer
	var written int64
	write := func(b []byte) {
		if werr == nil {
			_, werr = bw.Write(b)
			written += int64(len(b))
		}
	}
	batches := make(chan []byte, 2)
	if me == 0 {
		bw = bufio.NewWriterSize(out, 1<<20)
		e := &enc{b: make([]byte, 0, batchBytes+64<<10)}
		w.header(e)
		if w.track {
			w.writeTrack(e, segs)
		}
		w.walk(e, nil, 0, func() { write(e.b); e.b = e.b[:0] })
		write(e.b)
	} else {
		// The part's batches, each with a byte before it for the flag
		// that says whether more follow.
		go func() {
			e := &enc{b: make([]byte, 1, batchBytes+64<<10)}
			w.walk(e, nil, 0, func() {
				batches <- e.b
				e.b = make([]byte, 1, batchBytes+64<<10)
			})
			if len(e.b) > 1 {
				batches <- e.b
			}
			close(batches)
		}()
	}
	send := make([][]byte, size)
	flag := []byte{0}
	for q := 1; q < size; q++ {
		for more := true; more; {
			clear(send)
			if me == q {
				b, ok := <-batches
				if ok {
					b[0] = 1
					send[0] = b
				} else {
					send[0] = flag[:1:1]
				}
				for r := 1; r < size; r++ {
					if r != q {
						send[r] = send[0][:1]
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
			if len(m) == 0 {
				return fmt.Errorf("timeline: rank %d sent an empty batch", q)
			}
			more = m[0] == 1
			if me == 0 {
				write(m[1:])
			}
		}
	}
	if me != 0 {
		return nil
	}
	write([]byte("\n]}\n"))
	if werr == nil {
		werr = bw.Flush()
	}
	w.sum.Bytes = written
	return werr
}
