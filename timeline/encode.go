package timeline

import (
	"encoding/json"
	"math/bits"
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
	if v < 0 {
		return 1 + uintLen(uint64(-v)) // -MinInt64 wraps to its own magnitude as a uint64
	}
	return uintLen(uint64(v))
}

// uintLen is the number of decimal digits of u: log10 from the bit
// length (1233/4096 ≈ log10 2), corrected by one comparison.
func uintLen(u uint64) int {
	d := (bits.Len64(u) * 1233) >> 12
	if u >= pow10[d] {
		d++
	}
	return max(d, 1)
}

var pow10 = [...]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
	1e15, 1e16, 1e17, 1e18, 1e19}

// The event kinds the timeline writes. Every event but the first of the
// file starts with ",\n": one event a line. The parts every event of a
// kind or of a track shares are made once: a slice is its head (",\n",
// phase, category, name), its track's bytes (pid, tid, the ts key), ts,
// dur and its args.

// track is where an event is drawn: the process of a logged rank and one
// of its threads.
type track struct{ pid, tid int64 }

// bytes is what every event on t has after its head: `,"pid":P,"tid":T,"ts":`.
// len is its length.
func (t track) len() int {
	return len(`,"pid":,"tid":,"ts":`) + intLen(t.pid) + intLen(t.tid)
}

func (t track) bytes() []byte {
	b := strconv.AppendInt(append([]byte(nil), `,"pid":`...), t.pid, 10)
	b = strconv.AppendInt(append(b, `,"tid":`...), t.tid, 10)
	return append(b, `,"ts":`...)
}

// sliceHead is the head of the complete events (ph X) of a category and
// name (quoted).
func sliceHead(cat string, name []byte) []byte {
	return append([]byte(",\n"+`{"ph":"X","cat":"`+cat+`","name":`), name...)
}

// The heads of the two ends of a message's arrow: ph s at the send, ph f
// at the completion of the receive, bound to the slice around it (bp e).
var (
	flowStart = []byte(",\n" + `{"ph":"s","cat":"message","name":"message"`)
	flowEnd   = []byte(",\n" + `{"ph":"f","bp":"e","cat":"message","name":"message"`)
)

func (e *enc) begin(first bool) {
	if !first {
		e.raw(",\n")
	}
}

// slice writes a complete event without closing it, so that the caller
// can add args.
func (e *enc) slice(head, track []byte, ts, dur int64) {
	if e.counting {
		e.n += int64(len(head)+len(track)+len(`,"dur":`)+usLen(ts)) + int64(usLen(dur))
		return
	}
	k := len(e.b)
	e.b = append(append(e.b, head...), track...)
	e.b = appendUs(e.b, ts)
	e.b = appendUs(append(e.b, `,"dur":`...), dur)
	e.n += int64(len(e.b) - k)
}

// flow writes one end of a message's arrow.
func (e *enc) flow(head, track []byte, ts, id int64) {
	if e.counting {
		e.n += flowLen(head, len(track), ts, id)
		return
	}
	k := len(e.b)
	e.b = append(append(e.b, head...), track...)
	e.b = appendUs(e.b, ts)
	e.b = append(strconv.AppendInt(append(e.b, `,"id":`...), id, 10), '}')
	e.n += int64(len(e.b) - k)
}

// flowLen is the length of a flow event on a track of trackLen bytes.
func flowLen(head []byte, trackLen int, ts, id int64) int64 {
	return int64(len(head)+trackLen+usLen(ts)+len(`,"id":`)+intLen(id)) + 1
}

// usLen is the length of appendUs's ns.
func usLen(ns int64) int {
	if ns < 0 {
		return 1 + uintLen(uint64(-ns)/1000) + 4
	}
	return uintLen(uint64(ns)/1000) + 4
}

// appendUs appends ns as microseconds with three decimals (exact to the
// ns), the unit of the format's ts and dur.
func appendUs(b []byte, ns int64) []byte {
	u := uint64(ns)
	if ns < 0 {
		b = append(b, '-')
		u = uint64(-ns)
	}
	b = strconv.AppendUint(b, u/1000, 10)
	f := u % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
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

// argKey is an argument's name as it is written first (opening the args)
// and after another.
type argKey struct{ first, next string }

func key(k string) argKey { return argKey{`,"args":{"` + k + `":`, `,"` + k + `":`} }

var (
	keyBytes, keyComm, keyCritical = key("bytes"), key("comm"), key("critical")
	keyWaitNs, keyCause, keyWrong  = key("wait_ns"), key("cause_rank"), key("wrong_order")
	keySegments                    = key("segments")
	keyEndsAt                      = key("ends_at")
)

func (a *args) key(k argKey) {
	if a.open {
		a.e.raw(k.next)
		return
	}
	a.e.raw(k.first)
	a.open = true
}

// end closes the args (if any) and the event.
func (a *args) end() {
	if a.open {
		a.e.raw("}}")
		return
	}
	a.e.raw("}")
}
