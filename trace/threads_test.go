package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"reflect"
	"testing"
)

// threadRecords makes n calls of each of k threads, interleaved as the
// threads' calls end: thread i's own timeline (its records are in time
// order, the threads' overlap), every third call a Waitall with two
// completed requests.
func threadRecords(k, n int) [][]Record {
	out := make([][]Record, k)
	for i := 0; i < k; i++ {
		t := int64(1_000_000 + 37*i)
		for c := 0; c < n; c++ {
			t += 150 + int64(c%7)*20
			r := Record{Op: OpSend, Start: t, End: t + 90 + int64(i), Peer: int32(i), Tag: 100 + int32(i), Bytes: 8,
				Root: PeerNone, Comm: CommWorld, Thread: uint16(i), CallSite: 0x401000 + uint64(i)*64}
			t = r.End
			out[i] = append(out[i], r)
			if c%3 == 2 {
				t += 40
				w := Record{Op: OpWaitall, Start: t, End: t + 500, Peer: PeerNone, Root: PeerNone, Comm: CommNone,
					Count: 2, Thread: uint16(i), CallSite: 0x402000 + uint64(i)*64}
				t = w.End
				out[i] = append(out[i], w,
					Record{Op: OpReqDone, Req: uint32(c), Peer: 1, Root: PeerNone, Thread: uint16(i)},
					Record{Op: OpReqDone, Req: uint32(c + 1), Peer: 2, Root: PeerNone, Thread: uint16(i)})
			}
		}
	}
	return out
}

// calls splits a thread's records into calls (a timed record and its
// sub-records).
func calls(recs []Record) [][]Record {
	var out [][]Record
	for i := 0; i < len(recs); {
		j := i + 1 + int(recs[i].Count)
		out = append(out, recs[i:j])
		i = j
	}
	return out
}

// TestBlocks: the threads of a threaded log write their calls as blocks of
// their own streams, interleaved in the file; the reader decodes each
// block in its stream's state (slots and previous end times of its own)
// and hands out the records in file order.
func TestBlocks(t *testing.T) {
	per := threadRecords(3, 200)
	var b bytes.Buffer
	h := testHeader()
	h.Threads = true
	w, err := NewWriter(&b, h)
	if err != nil {
		t.Fatal(err)
	}
	var want []Record
	cs := make([][][]Record, len(per))
	for i := range per {
		cs[i] = calls(per[i])
	}
	for round := 0; ; round++ {
		done := true
		for i := range cs { // round-robin, thread 1 two calls at a time
			for k := 0; k < 1+i%2 && len(cs[i]) > 0; k++ {
				done = false
				c := cs[i][0]
				cs[i] = cs[i][1:]
				if err := w.WriteBlock(i, c); err != nil {
					t.Fatal(err)
				}
				want = append(want, c...)
			}
		}
		if done {
			break
		}
	}
	if err := w.Close(Trailer{Status: EndFinalized}); err != nil {
		t.Fatal(err)
	}
	l, err := Read(bytes.NewReader(b.Bytes()), "blocks")
	if err != nil {
		t.Fatal(err)
	}
	if l.Damage != nil || !l.Complete() || !reflect.DeepEqual(l.Records, want) {
		t.Fatalf("damage %v complete %v, %d records, want %d as written", l.Damage, l.Complete(), len(l.Records), len(want))
	}
	t.Logf("%d calls of 3 threads in %d bytes", len(want), b.Len())
}

// threadedPreamble returns the test header of a threaded log and its
// preamble.
func threadedPreamble(t testing.TB) (*Header, []byte) {
	t.Helper()
	h := testHeader()
	h.Threads = true
	pre, err := EncodeHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	return h, pre
}

// killedThreads is the body of a threaded log whose rank was killed: the
// calls of want in blocks of their threads' streams, with, after the
// first third, an uncommitted block (its tag still zero, its length and
// part of its items written), and the zero tail.
func killedThreads(t testing.TB, hole []byte) (data []byte, want []Record, before int) {
	t.Helper()
	h, pre := threadedPreamble(t)
	per := threadRecords(2, 60)
	encs := []*encoder{{prevEnd: h.T0}, {prevEnd: h.T0}}
	body := append([]byte(nil), pre...)
	c0, c1 := calls(per[0]), calls(per[1])
	for k := range c0 {
		for i, c := range [][]Record{c0[k], c1[k]} {
			var items []byte
			for j := range c {
				items = encs[i].record(items, &c[j], nil)
			}
			body = appendBlock(body, i, items)
			want = append(want, c...)
		}
		if k == len(c0)/3 {
			body = append(body, hole...)
			before = len(want)
		}
	}
	return append(body, 0, 0, 0, 0, 0, 0, 0, 0), want, before
}

// TestUncommittedBlock: in a threaded log a zero byte followed by a length
// is a block whose thread died before committing it: the reader skips it
// and reads the blocks other threads committed after it; a zero byte
// followed by zero is the end of the data, and so is anything but a block
// or a zero after a skipped block (a length not wholly written).
func TestUncommittedBlock(t *testing.T) {
	for _, tc := range []struct {
		name string
		hole []byte
		all  bool // the blocks after the hole are read
	}{
		// length 6: stream 1, then a record's first bytes
		{"length written", []byte{0, 6, 1, 0x05, 0x00, 0x3, 0, 0}, true},
		{"two-byte length", append([]byte{0, 0x81, 0x01, 1}, make([]byte, 128)...), true},
		// only the first byte of a two-byte length (the items are written
		// after it): it reads as 1, and a zero follows
		{"length cut", append([]byte{0, 0x81}, make([]byte, 129)...), false},
		// a skipped block followed by neither a block nor a zero
		{"garbage after", []byte{0, 1, 0x33, 0x07}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, want, before := killedThreads(t, tc.hole)
			l, err := Read(bytes.NewReader(data), "k.cplog")
			if err != nil || l.Damage != nil || l.Trailer.Status != EndMissing {
				t.Fatalf("err %v damage %v trailer %v", err, l.Damage, l.Trailer.Status)
			}
			if !tc.all {
				want = want[:before]
			}
			if !reflect.DeepEqual(l.Records, want) {
				t.Fatalf("%d records, want %d", len(l.Records), len(want))
			}
		})
	}
	// Without Threads in the header, a zero byte is the end of the data.
	data, want, before := killedThreads(t, []byte{0, 6, 1, 0x05, 0x00, 0x3, 0, 0})
	h := testHeader()
	pre, _ := EncodeHeader(h)
	h.Threads = true
	pre2, _ := EncodeHeader(h)
	data = append(pre, data[len(pre2):]...)
	l, err := Read(bytes.NewReader(data), "k.cplog")
	if err != nil || !reflect.DeepEqual(l.Records, want[:before]) {
		t.Fatalf("unthreaded: err %v, %d records of %d, want the %d before the zero", err, len(l.Records), len(want), before)
	}
}

// TestCallPaths: call paths come back as written, shared by index; a
// record whose path is its slot's last costs no byte for it.
func TestCallPaths(t *testing.T) {
	var b bytes.Buffer
	h := testHeader()
	h.CallDepth = 4
	w, err := NewWriter(&b, h)
	if err != nil {
		t.Fatal(err)
	}
	paths := [][]uint64{
		{0x401234, 0x401500, 0x7f0000012345, 0x7f0000010000},
		{0x401234, 0x401600, 0x7f0000012345},
		{0x7f00000a0000},
		{0x401234, 0x401500, 0x7f0000012345, 0x7f0000010000}, // the same as the first
	}
	ids := make([]uint32, len(paths))
	for i, p := range paths {
		ids[i] = w.AddPath(p)
	}
	var recs []Record
	t0 := int64(1_000_000)
	for i := 0; i < 300; i++ {
		p := ids[[]int{0, 0, 1, 0, 2, 3, 3, 1}[i%8]]
		if i%50 == 49 {
			p = 0 // a call without a path
		}
		r := Record{Op: OpSend, Start: t0, End: t0 + 100, Peer: 1, Root: PeerNone, CallSite: 0x400100, Path: p}
		t0 += 300
		recs = append(recs, r)
		if i%7 == 0 {
			recs = append(recs, Record{Op: OpWait, Start: t0, End: t0 + 10, Count: 1, Peer: PeerNone, Root: PeerNone,
				CallSite: 0x400200, Path: ids[2]}, Record{Op: OpReqDone, Req: uint32(i), Root: PeerNone})
			t0 += 100
		}
	}
	if err := w.WriteRecords(recs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(Trailer{Status: EndFinalized}); err != nil {
		t.Fatal(err)
	}
	l, err := Read(bytes.NewReader(b.Bytes()), "paths")
	if err != nil || l.Damage != nil {
		t.Fatalf("err %v damage %v", err, l.Damage)
	}
	if len(l.Records) != len(recs) {
		t.Fatalf("%d records, want %d", len(l.Records), len(recs))
	}
	if len(l.Paths) != 4 { // nil and three distinct paths
		t.Errorf("%d paths, want nil and 3: %x", len(l.Paths), l.Paths)
	}
	for i := range recs {
		got, exp := l.CallPath(&l.Records[i]), w.paths[recs[i].Path]
		if !reflect.DeepEqual(got, exp) && (len(got) != 0 || len(exp) != 0) {
			t.Fatalf("record %d: path %x, want %x", i, got, exp)
		}
		g := l.Records[i]
		g.Path, recs[i].Path = 0, 0
		if g != recs[i] {
			t.Fatalf("record %d: %+v, want %+v", i, g, recs[i])
		}
	}
	// The same records without paths: the paths cost what they cost.
	var b2 bytes.Buffer
	w2, _ := NewWriter(&b2, testHeader())
	_ = w2.WriteRecords(recs)
	_ = w2.Close(Trailer{Status: EndFinalized})
	t.Logf("%d bytes with call paths, %d without", b.Len(), b2.Len())
}

// TestBlockCorrupt: malformed blocks and call paths are corrupt (or, cut
// short, truncated), never misread.
func TestBlockCorrupt(t *testing.T) {
	h := testHeader()
	h.Threads = true
	pre, _ := EncodeHeader(h)
	rec := Record{Op: OpSend, Start: 1_000_000, End: 1_000_100, Peer: 1, Root: PeerNone, CallSite: 0x4000}
	var e encoder
	e.prevEnd = h.T0
	items := e.record(nil, &rec, nil)
	var e2 encoder
	e2.prevEnd = h.T0
	withPath := e2.record(nil, &rec, []uint64{0x5000, 0x6000})
	sub := Record{Op: OpReqDone, Root: PeerNone, Peer: PeerNone}
	for _, tc := range []struct {
		name string
		body []byte
		err  error // nil: Damage, ErrTruncated
	}{
		{"block too short", appendBlock(nil, 1, items[:len(items)-1]), ErrCorrupt},
		{"nested block", appendBlock(nil, 1, appendBlock(nil, 2, items)), ErrCorrupt},
		{"stream too big", appendBlock(nil, MaxStreams, items), ErrCorrupt},
		{"cut in block", appendBlock(nil, 1, items)[:3+len(items)-1], nil},
		{"path on a sub-record", func() []byte {
			var e encoder
			e.prevEnd = h.T0
			b := e.record(nil, &Record{Op: OpWaitall, Start: 1_000_000, End: 1_000_001, Count: 1, Root: PeerNone, Peer: PeerNone}, nil)
			s := e.record(nil, &sub, nil) // DEF, slot, mask 0: make the mask carry a path
			s[len(s)-1] = 0x80
			s = append(s, byte(mPath>>7), 1, 2)
			return append(b, s...)
		}(), ErrCorrupt},
		{"path too long", func() []byte {
			b := append([]byte(nil), withPath...)
			// DEF(4+) slot mask(2 bytes) …: find the path's length byte (2)
			i := bytes.Index(b, []byte{2, byte(zig64(0x5000-0x4000) | 0x80)})
			if i < 0 {
				t.Fatal("path length not found")
			}
			b[i] = MaxCallDepth + 1
			return b
		}(), ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := append(append([]byte(nil), pre...), tc.body...)
			if tc.err != nil {
				data = append(data, tagBlock, 1, 0, 0) // an empty block after
			}
			l, err := Read(bytes.NewReader(data), "c.cplog")
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %v (damage %v), want %v", err, l.Damage, tc.err)
				}
				return
			}
			if err != nil || !errors.Is(l.Damage, ErrTruncated) {
				t.Fatalf("err %v damage %v, want a truncated log", err, l.Damage)
			}
		})
	}
	// The path's bytes are right: the log with withPath reads.
	data := append(append([]byte(nil), pre...), withPath...)
	l, err := Read(bytes.NewReader(append(data, 0)), "p.cplog")
	if err != nil || len(l.Records) != 1 || !reflect.DeepEqual(l.CallPath(&l.Records[0]), []uint64{0x5000, 0x6000}) {
		t.Fatalf("err %v, records %+v paths %x", err, l.Records, l.Paths)
	}
}

// TestTicksByTime: with threads a record coded after a calibration point
// may have started before it (its thread was in MPI across it). Its times
// are converted through the segment between the points around each time,
// not along the line after the point it follows in the log: a thread's
// times stay in order however the segments' slopes differ. The calls come
// out in the order they ended (c before b).
func TestTicksByTime(t *testing.T) {
	h := testHeader()
	h.Threads = true
	h.Ticks = &Ticks{Tick: 1000, Ns: 5000, NsPerTick: 0.5}
	pre, err := EncodeHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	// Points: the header's, then two with slopes 0.4996 and 0.5010.
	cal := func(b []byte, tick, ns int64) []byte {
		b = append(b, tagCal)
		b = binary.AppendUvarint(b, zig64(tick))
		return binary.AppendUvarint(b, zig64(ns))
	}
	encs := []*encoder{{prevEnd: 1000}, {prevEnd: 1000}, {prevEnd: 1000}}
	block := func(b []byte, s int, r Record) []byte {
		return appendBlock(b, s, encs[s].record(nil, &r, nil))
	}
	a := Record{Op: OpSend, Start: 900_000, End: 950_000, Peer: 1, Root: PeerNone, Thread: 1, CallSite: 0x10}
	b := Record{Op: OpRecv, Start: 990_000, End: 1_500_000, Peer: 1, Root: PeerNone, Thread: 2, CallSite: 0x20}
	c := Record{Op: OpSend, Start: 960_000, End: 1_200_000, Peer: 1, Root: PeerNone, Thread: 1, CallSite: 0x10}
	body := block(nil, 1, a)
	body = cal(body, 1_000_000, 5000+499_100)
	body = block(body, 2, b)
	body = block(body, 1, c)
	body = cal(body, 2_000_000, 504_100+501_000)
	l, err := Read(bytes.NewReader(append(append(pre, body...), 0, 0)), "t.cplog")
	if err != nil || len(l.Records) != 3 {
		t.Fatalf("err %v, %d records", err, len(l.Records))
	}
	ns := func(tick int64) int64 {
		if tick < 1_000_000 {
			return 5000 + int64(math.Round(float64(tick-1000)*499_100/999_000))
		}
		return 504_100 + int64(math.Round(float64(tick-1_000_000)*501_000/1_000_000))
	}
	for i, r := range []Record{a, c, b} {
		g := l.Records[i]
		if g.Start != ns(r.Start) || g.End != ns(r.End) {
			t.Errorf("record %d: %d..%d ns, want %d..%d", i, g.Start, g.End, ns(r.Start), ns(r.End))
		}
	}
	if l.Records[0].End > l.Records[1].Start {
		t.Errorf("thread 1's calls out of order: %d ends after %d starts", l.Records[0].End, l.Records[2].Start)
	}
}

// TestRegions: the logger's threads fill regions, blocks claimed ahead
// whose unused rest is zero. The reader skips the rest (a CHECK covers it)
// and a call whose first byte is still zero (its thread died writing it);
// it hands out the calls that each CHECK covers in the order they ended,
// though the regions interleave them otherwise, each thread's in its
// order.
func TestRegions(t *testing.T) {
	h, pre := threadedPreamble(t)
	per := threadRecords(2, 40)
	cs := [][][]Record{calls(per[0]), calls(per[1])}
	encs := []*encoder{{prevEnd: h.T0}, {prevEnd: h.T0}}
	// region codes the calls of stream s in a region of size bytes of
	// items; with dead, the last one's first byte is left zero.
	region := func(s int, calls [][]Record, size int, dead bool) []byte {
		var items []byte
		for k, c := range calls {
			at := len(items)
			for j := range c {
				items = encs[s].record(items, &c[j], nil)
			}
			if dead && k == len(calls)-1 {
				items[at] = 0
			}
		}
		if len(items) > size {
			t.Fatalf("%d bytes of items in a region of %d", len(items), size)
		}
		return appendBlock(nil, s, append(items, make([]byte, size-len(items))...))
	}
	check := func(body []byte, from int) []byte {
		sum := crc32.Checksum(body[from:], castagnoli)
		return binary.LittleEndian.AppendUint32(append(body, tagCheck), sum)
	}
	// Thread 1's region first, though most of thread 0's calls in the
	// next one ended before its; a CHECK; then two regions of the
	// rank killed, the second with a call half-written.
	body := append([]byte(nil), pre...)
	body = append(body, region(1, cs[1][:12], 2048, false)...)
	body = append(body, region(0, cs[0][:12], 2048, false)...)
	body = check(body, len(pre))
	checked := body
	body = append(body, region(0, cs[0][12:], 4096, false)...)
	n1 := len(cs[1])
	body = append(body, region(1, cs[1][12:n1], 4096, true)...)
	body = append(body, make([]byte, 64)...)
	for _, tc := range []struct {
		name     string
		data     []byte
		through  []int // the calls of each thread that are read
		complete bool
	}{
		{"checked", append(checked, make([]byte, 8)...), []int{12, 12}, true},
		{"killed", body, []int{len(cs[0]), n1 - 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Read(bytes.NewReader(tc.data), "r.cplog")
			if err != nil || l.Damage != nil {
				t.Fatalf("err %v damage %v", err, l.Damage)
			}
			var want [2][]Record
			n := 0
			for i := range want {
				for _, c := range cs[i][:tc.through[i]] {
					want[i] = append(want[i], c...)
				}
				n += len(want[i])
			}
			if len(l.Records) != n {
				t.Fatalf("%d records, want %d", len(l.Records), n)
			}
			// the records the CHECK covers: those of the first 12 calls of each
			first := 0
			for i := range cs {
				for _, c := range cs[i][:12] {
					first += len(c)
				}
			}
			var got [2][]Record
			last, moved := int64(0), false
			for i, r := range l.Records {
				got[r.Thread] = append(got[r.Thread], r)
				if i == first {
					last = 0 // sorted up to each CHECK, not across it
				}
				if r.Op.IsSub() {
					continue
				}
				if r.End < last {
					t.Fatalf("record %d ends at %d, before the call before it (%d)", i, r.End, last)
				}
				last = r.End
				moved = moved || r.Thread == 0 && i < len(want[1])
			}
			for i := range got {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("thread %d: %d records differ from the %d it wrote", i, len(got[i]), len(want[i]))
				}
			}
			if !moved {
				t.Fatal("thread 0's calls were not moved before thread 1's region: the test shows nothing")
			}
		})
	}
}
