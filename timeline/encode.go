package timeline

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// enc appends trace events to b, or, counting, only adds up the bytes it
// would append: the size budget is measured by the very code that writes,
// so it is exact for everything written where it is counted.
type enc struct {
	b        []byte
	n        int64 // bytes counted (counting) or appended since the last flush
	counting bool
}

func (e *enc) raw(s string) {
	e.n += int64(len(s))
	if !e.counting {
		e.b = append(e.b, s...)
	}
}

func (e *enc) bytes(s []byte) {
	e.n += int64(len(s))
	if !e.counting {
		e.b = append(e.b, s...)
	}
}

func (e *enc) int(v int64) {
	if e.counting {
		e.n += int64(intLen(v))
		return
	}
	k := len(e.b)
	e.b = strconv.AppendInt(e.b, v, 10)
	e.n += int64(len(e.b) - k)
}

// us writes ns as microseconds with three decimals (exact to the ns),
// the unit of the format's ts and dur.
func (e *enc) us(ns int64) {
	if ns < 0 {
		e.raw("-")
		ns = -ns
	}
	e.int(ns / 1000)
	if e.counting {
		e.n += 4
		return
	}
	f := ns % 1000
	e.b = append(e.b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
	e.n += 4
}

// str writes s as a JSON string.
func (e *enc) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			e.bytes(quote(s))
			return
		}
	}
	e.raw(`"`)
	e.raw(s)
	e.raw(`"`)
}

// quote is s as a JSON string, as encoding/json writes it (names are
// quoted once, not per event).
func quote(s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// intLen is the number of bytes of v in decimal.
func intLen(v int64) int {
	n, u := 1, uint64(v)
	if v < 0 {
		n, u = 2, uint64(-v) // -MinInt64 wraps to its own magnitude as a uint64
	}
	for ; u >= 10; u /= 10 {
		n++
	}
	return n
}

// The event kinds the timeline writes. Every event but the first of the
// file starts with ",\n": one event a line.

// ids of a track: the process of a logged rank and one of its threads.
type track struct{ pid, tid int64 }

func (e *enc) begin(first bool) {
	if !first {
		e.raw(",\n")
	}
}

// slice writes a complete event (ph X) without closing it, so that the
// caller can add args.
func (e *enc) slice(cat string, name []byte, t track, ts, dur int64) {
	e.begin(false)
	e.raw(`{"ph":"X","cat":"`)
	e.raw(cat)
	e.raw(`","name":`)
	e.bytes(name)
	e.raw(`,"pid":`)
	e.int(t.pid)
	e.raw(`,"tid":`)
	e.int(t.tid)
	e.raw(`,"ts":`)
	e.us(ts)
	e.raw(`,"dur":`)
	e.us(dur)
}

// flow writes one end of a message's arrow: ph s at the send, ph f at the
// completion of the receive, bound to the slice around it (bp e).
func (e *enc) flow(start bool, id int64, t track, ts int64) {
	e.begin(false)
	if start {
		e.raw(`{"ph":"s","cat":"message","name":"message","id":`)
	} else {
		e.raw(`{"ph":"f","bp":"e","cat":"message","name":"message","id":`)
	}
	e.int(id)
	e.raw(`,"pid":`)
	e.int(t.pid)
	e.raw(`,"tid":`)
	e.int(t.tid)
	e.raw(`,"ts":`)
	e.us(ts)
	e.raw("}")
}

// flowMax is the most bytes a flow event of a run can take: what the
// budget counts for a message's arrow before it knows the sender's side.
func flowMax(start bool, maxID, maxPid, maxTid, maxTs int64) int64 {
	e := &enc{counting: true}
	e.flow(start, maxID, track{maxPid, maxTid}, maxTs)
	return e.n
}

// processMeta names a process and places it (sort index).
func (e *enc) processMeta(first bool, pid int64, name string, sort int64) {
	e.begin(first)
	e.raw(`{"ph":"M","name":"process_name","pid":`)
	e.int(pid)
	e.raw(`,"args":{"name":`)
	e.str(name)
	e.raw("}}")
	e.begin(false)
	e.raw(`{"ph":"M","name":"process_sort_index","pid":`)
	e.int(pid)
	e.raw(`,"args":{"sort_index":`)
	e.int(sort)
	e.raw("}}")
}

// threadMeta names a thread.
func (e *enc) threadMeta(t track, name string) {
	e.begin(false)
	e.raw(`{"ph":"M","name":"thread_name","pid":`)
	e.int(t.pid)
	e.raw(`,"tid":`)
	e.int(t.tid)
	e.raw(`,"args":{"name":`)
	e.str(name)
	e.raw("}}")
}

// args opens or continues an args object: key is written after "{" for
// the first argument, after "," for the next.
type args struct {
	e    *enc
	open bool
}

func (a *args) key(k string) {
	if a.open {
		a.e.raw(`,"`)
	} else {
		a.e.raw(`,"args":{"`)
		a.open = true
	}
	a.e.raw(k)
	a.e.raw(`":`)
}

// end closes the args (if any) and the event.
func (a *args) end() {
	if a.open {
		a.e.raw("}}")
		return
	}
	a.e.raw("}")
}
