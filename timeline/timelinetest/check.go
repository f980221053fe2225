// Package timelinetest reads a timeline back (encoding/json) and checks
// it, for the tests of package timeline and of the cpath command: what
// every timeline must be, and that one of a whole run, uncapped, draws
// what the run's report says.
package timelinetest

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/cpath/cpath/report"
)

// event is a trace event as the viewers read it.
type Event struct {
	Ph   string         `json:"ph"`
	Cat  string         `json:"cat"`
	Name string         `json:"name"`
	Pid  int64          `json:"pid"`
	Tid  int64          `json:"tid"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	ID   int64          `json:"id"`
	Bp   string         `json:"bp"`
	Args map[string]any `json:"args"`
}

func NS(us float64) int64 { return int64(math.Round(us * 1000)) }

// Trace is a timeline read back, its events sorted out.
type Trace struct {
	Events                           []Event
	MPI, Compute, Wait, Track        []Event              // slices by category (Track: the critical path's own)
	Critical                         []Event              // the slices with args.critical
	Starts, Ends                     map[int64]Event      // the arrows' ends, by id
	Meta                             map[string]any       // the cpath event's args
	ByTrack                          map[[2]int64][]Event // slices by pid and tid
	processNames, threadNames, other int
}

// Parse decodes a timeline with encoding/json and checks what any
// timeline must be: the trace-event JSON object, every slice on a
// process and thread the metadata names, with a duration that is not
// negative, slices on a thread nested (never overlapping partly), flows
// in pairs of unique ids whose ends lie inside a slice of their thread.
func Parse(t testing.TB, file []byte) *Trace {
	t.Helper()
	var doc struct {
		DisplayTimeUnit string  `json:"displayTimeUnit"`
		TraceEvents     []Event `json:"traceEvents"`
	}
	if err := json.Unmarshal(file, &doc); err != nil {
		t.Fatalf("the timeline is not JSON: %v", err)
	}
	if doc.DisplayTimeUnit != "ns" || len(doc.TraceEvents) == 0 {
		t.Fatalf("not a trace-event JSON object: displayTimeUnit %q, %d events", doc.DisplayTimeUnit, len(doc.TraceEvents))
	}
	tr := &Trace{Events: doc.TraceEvents, Starts: map[int64]Event{}, Ends: map[int64]Event{}, ByTrack: map[[2]int64][]Event{}}
	procs, threads := map[int64]bool{}, map[[2]int64]bool{}
	for _, e := range tr.Events {
		switch e.Ph {
		case "M":
			switch e.Name {
			case "process_name":
				procs[e.Pid] = true
				tr.processNames++
			case "thread_name":
				threads[[2]int64{e.Pid, e.Tid}] = true
				tr.threadNames++
			case "cpath":
				tr.Meta = e.Args
			}
		case "X":
			if e.Dur < 0 || e.Ts < 0 {
				t.Fatalf("slice with negative time: %+v", e)
			}
			k := [2]int64{e.Pid, e.Tid}
			tr.ByTrack[k] = append(tr.ByTrack[k], e)
			switch e.Cat {
			case "mpi":
				tr.MPI = append(tr.MPI, e)
			case "compute":
				tr.Compute = append(tr.Compute, e)
			case "wait":
				tr.Wait = append(tr.Wait, e)
			case "critical":
				tr.Track = append(tr.Track, e)
			default:
				t.Fatalf("slice of unknown category: %+v", e)
			}
			if e.Args["critical"] == true {
				tr.Critical = append(tr.Critical, e)
			}
		case "s", "f":
			m := tr.Starts
			if e.Ph == "f" {
				m = tr.Ends
				if e.Bp != "e" {
					t.Fatalf("flow end not bound to its enclosing slice: %+v", e)
				}
			}
			if _, dup := m[e.ID]; dup || e.Cat != "message" {
				t.Fatalf("flow id %d twice, or of category %q", e.ID, e.Cat)
			}
			m[e.ID] = e
		default:
			tr.other++
		}
	}
	if tr.Meta == nil || tr.other > 0 {
		t.Fatalf("no cpath metadata event, or %d events of unknown phases", tr.other)
	}
	for k, ss := range tr.ByTrack {
		if !procs[k[0]] || !threads[k] {
			t.Fatalf("slices on pid %d tid %d, which the metadata does not name", k[0], k[1])
		}
		// Nesting: in start order (longer first at equal starts), each
		// slice lies within or after the ones open before it.
		slices.SortStableFunc(ss, func(a, b Event) int {
			if NS(a.Ts) != NS(b.Ts) {
				return int(NS(a.Ts) - NS(b.Ts))
			}
			return int(NS(b.Dur) - NS(a.Dur))
		})
		var open []Event
		for _, s := range ss {
			for len(open) > 0 {
				p := open[len(open)-1]
				if NS(p.Ts) <= NS(s.Ts) && NS(s.Ts+s.Dur) <= NS(p.Ts+p.Dur) {
					break // s nests in p
				}
				if NS(p.Ts+p.Dur) > NS(s.Ts) {
					t.Fatalf("slices overlap on pid %d tid %d: %+v and %+v", k[0], k[1], p, s)
				}
				open = open[:len(open)-1]
			}
			open = append(open, s)
		}
	}
	if len(tr.Starts) != len(tr.Ends) {
		t.Fatalf("%d flow starts, %d ends", len(tr.Starts), len(tr.Ends))
	}
	for id, s := range tr.Starts {
		f, ok := tr.Ends[id]
		if !ok {
			t.Fatalf("flow %d has no end", id)
		}
		for _, x := range []Event{s, f} {
			if !insideSlice(tr.ByTrack[[2]int64{x.Pid, x.Tid}], x.Ts) {
				t.Fatalf("flow %d's %s at %v µs is in no slice of pid %d tid %d", id, x.Ph, x.Ts, x.Pid, x.Tid)
			}
		}
	}
	return tr
}

// insideSlice says whether ts is strictly inside an MPI call's slice
// (or at the start of one shorter than 2 ns), where a viewer cannot bind
// it to the slice next to it.
func insideSlice(ss []Event, ts float64) bool {
	t := NS(ts)
	for _, s := range ss {
		a, b := NS(s.Ts), NS(s.Ts+s.Dur)
		if s.Cat == "mpi" && (a < t && t < b || b-a < 2 && t == a) {
			return true
		}
	}
	return false
}

func Num(t testing.TB, m map[string]any, k string) int64 {
	t.Helper()
	v, ok := m[k].(float64)
	if !ok {
		t.Fatalf("cpath event: no %q: %v", k, m)
	}
	return int64(v)
}

// CheckRun reads a timeline of a whole run, uncapped and without window,
// and checks it against the run's report: it draws every call, message
// and wait state, marks each segment of the critical path on exactly one
// slice (the stretch of computation before a call for a compute or
// launch segment, the call a segment ends with for mpi and transfer),
// and its critical path's track follows the path from rank to rank.
func CheckRun(t testing.TB, file []byte, r *report.Report) *Trace {
	t.Helper()
	tr := Parse(t, file)
	segs := r.CriticalPath.Segments
	if len(tr.MPI) != r.Run.Calls || len(tr.Starts) != r.Run.Messages {
		t.Fatalf("%d mpi slices, %d arrows; the run has %d calls, %d messages", len(tr.MPI), len(tr.Starts), r.Run.Calls, r.Run.Messages)
	}
	if len(tr.Critical) != len(segs) {
		t.Fatalf("%d slices marked critical; %d segments", len(tr.Critical), len(segs))
	}
	CheckTrack(t, tr, segs)
	byKind := map[string]int{}
	for _, s := range segs {
		byKind[s.Kind]++
	}
	var critCompute, critMPI int
	for _, e := range tr.Critical {
		if e.Cat == "compute" {
			critCompute++
		} else {
			critMPI++
		}
	}
	if critCompute != byKind["compute"]+byKind["launch"] || critMPI != byKind["mpi"]+byKind["io"]+byKind["transfer"] {
		t.Fatalf("critical slices: %d compute, %d mpi; segments %v", critCompute, critMPI, byKind)
	}
	// The critical stretches of computation are the compute segments,
	// rank by rank, to the ns.
	perRank := make([]int64, r.Run.Ranks)
	for _, e := range tr.Critical {
		if e.Cat == "compute" {
			perRank[e.Pid-1] += NS(e.Dur)
		}
	}
	for _, b := range r.CriticalPath.ByRank {
		if perRank[b.Rank] != b.ComputeNs+b.LaunchNs {
			t.Fatalf("rank %d: critical computation %d ns in the timeline, %d in the report", b.Rank, perRank[b.Rank], b.ComputeNs+b.LaunchNs)
		}
	}
	// Every wait state, with the report's totals.
	waits := map[string]int64{}
	for _, e := range tr.Wait {
		waits[e.Name] += int64(e.Args["wait_ns"].(float64))
	}
	ws := r.Waitstates
	for k, v := range map[string]int64{"Late Sender": ws.LateSenderNs, "Late Receiver": ws.LateReceiverNs, "Wait at Barrier": ws.WaitAtBarrierNs,
		"Wait at N x N": ws.WaitAtNxNNs, "Late Broadcast": ws.LateBroadcastNs, "Early Reduce": ws.EarlyReduceNs,
		"Wait at Fence": ws.WaitAtFenceNs, "Late Post": ws.LatePostNs, "Early Wait": ws.EarlyWaitNs} {
		if waits[k] != v {
			t.Fatalf("%s: %d ns in the timeline's waits, %d in the report", k, waits[k], v)
		}
	}
	if Num(t, tr.Meta, "calls_drawn") != int64(r.Run.Calls) || Num(t, tr.Meta, "critical_segments") != int64(len(segs)) || tr.Meta["left_out"] != nil {
		t.Fatalf("the cpath event says %v", tr.Meta)
	}
	return tr
}

// CheckTrack checks the critical path's own track: a slice per stay of
// the path on a rank, in order, as the segments say.
func CheckTrack(t testing.TB, tr *Trace, segs []report.Segment) {
	t.Helper()
	i := 0
	for _, tk := range tr.Track {
		n := int(tk.Args["segments"].(float64))
		if n < 1 || i+n > len(segs) {
			t.Fatalf("the track's slice %+v has %d segments, %d left", tk, n, len(segs)-i)
		}
		first, last := segs[i], segs[i+n-1]
		if NS(tk.Ts) != first.StartNs || NS(tk.Ts+tk.Dur) != last.EndNs || tk.Name != fmt.Sprintf("rank %d", first.Rank) ||
			last.Rank != first.Rank || i+n < len(segs) && segs[i+n].Rank == first.Rank {
			t.Fatalf("segments %d..%d (%+v..%+v) drawn as %+v", i, i+n-1, first, last, tk)
		}
		i += n
	}
	if i != len(segs) {
		t.Fatalf("the track draws %d of %d segments", i, len(segs))
	}
}
