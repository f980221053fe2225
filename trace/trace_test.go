package trace

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/iotest"
)

// haloRecords makes the records of n iterations of a 1-D halo exchange with
// realistic, jittery timings.
func haloRecords(n int, seed int64) []Record {
	rng := rand.New(rand.NewSource(seed))
	var recs []Record
	t := int64(1_000_000)
	req := uint32(0)
	var seq uint32
	step := func(op Op, peer int32, bytes uint64, dur int64) *Record {
		t += 200 + rng.Int63n(300)
		r := Record{Op: op, Start: t, End: t + dur + rng.Int63n(dur/2+1), Peer: peer, Tag: 7, Bytes: bytes,
			Root: PeerNone, Comm: CommWorld, CallSite: 0x401000 + uint64(op)*16}
		t = r.End
		recs = append(recs, r)
		return &recs[len(recs)-1]
	}
	for i := 0; i < n; i++ {
		var ids [4]uint32
		for k, p := range []int32{1, 3} {
			req++
			ids[k] = req
			r := step(OpIrecv, p, 8192, 100)
			r.Req, r.Flags = req, FlagNewReq
		}
		for k, p := range []int32{1, 3} {
			req++
			ids[2+k] = req
			r := step(OpIsend, p, 8192, 300)
			r.Req, r.Flags = req, FlagNewReq
		}
		w := step(OpWaitall, PeerNone, 0, 5000)
		w.Comm, w.Count = CommNone, 4
		for k := 0; k < 4; k++ {
			peer := []int32{1, 3, 1, 3}[k]
			recs = append(recs, Record{Op: OpReqDone, Req: ids[k], Peer: peer, Tag: 7, Root: PeerNone, Bytes: 8192})
		}
		if i%10 == 9 {
			seq++
			a := step(OpAllreduce, PeerNone, 8, 2000)
			a.Seq = seq
		}
	}
	return recs
}

func testHeader() *Header {
	return &Header{RunID: "r1", Rank: 2, Size: 4, Host: "h", PID: 42, T0: 999_000, Clock: Clock{Method: "pingpong"}}
}

func writeLog(t testing.TB, recs []Record, trailer *Trailer) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := NewWriter(&b, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	for len(recs) > 0 { // several frames, split mid-way through sub-records too
		n := min(len(recs), 997)
		if err := w.WriteRecords(recs[:n]); err != nil {
			t.Fatal(err)
		}
		recs = recs[n:]
	}
	if trailer != nil {
		if err := w.WriteClockFinal(SyncPoint{LocalNs: 5, OffsetNs: -7, ErrNs: 1}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(*trailer); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		recs []Record
	}{
		{"empty", nil},
		{"halo", haloRecords(3000, 1)},
		{"extremes", []Record{
			{Op: OpSend, Start: -5, End: 1 << 62, Peer: PeerProcNull, Tag: -1, Root: PeerNone, Bytes: 1<<64 - 1, CallSite: 1<<64 - 1},
			{Op: OpIrecv, Start: 1 << 62, End: 1 << 62, Peer: PeerAny, Req: 1<<32 - 1, Flags: FlagNewReq | FlagWildcard},
			{Op: OpWait, Start: 1 << 62, End: 1<<62 + 1, Count: 1, Comm: CommNone},
			{Op: OpReqDone, Req: 1<<32 - 1, Peer: 3},
			{Op: OpBarrier, Start: 0, End: 0, Seq: 1<<32 - 1, Comm: 70000},
			{Op: OpBarrier, Start: 1, End: 2, Seq: 1, Comm: 70000},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := writeLog(t, tc.recs, &Trailer{Status: EndFinalized})
			l, err := Read(bytes.NewReader(data), "x.cplog")
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Records) != len(tc.recs) || (len(tc.recs) > 0 && !reflect.DeepEqual(l.Records, tc.recs)) {
				for i := range tc.recs {
					if i < len(l.Records) && l.Records[i] != tc.recs[i] {
						t.Fatalf("record %d: got %+v want %+v", i, l.Records[i], tc.recs[i])
					}
				}
				t.Fatalf("got %d records, want %d", len(l.Records), len(tc.recs))
			}
			if !l.Complete() || l.Trailer.Records != uint64(len(tc.recs)) {
				t.Fatalf("trailer %+v damage %v", l.Trailer, l.Damage)
			}
			if f := l.Header.Clock.Final; f == nil || f.OffsetNs != -7 {
				t.Fatalf("final clock %+v", f)
			}
			if l.Header.Rank != 2 || l.Header.RunID != "r1" {
				t.Fatalf("header %+v", l.Header)
			}
		})
	}
}

// TestHaloCompression guards the format's size target: a regular halo
// exchange must cost at most 12 bytes per call on disk.
func TestHaloCompression(t *testing.T) {
	recs := haloRecords(20000, 2)
	calls := 0
	for _, r := range recs {
		if !r.Op.IsSub() {
			calls++
		}
	}
	data := writeLog(t, recs, &Trailer{Status: EndFinalized})
	per := float64(len(data)) / float64(calls)
	t.Logf("%d calls, %d bytes, %.2f bytes/call", calls, len(data), per)
	if per > 12 {
		t.Fatalf("%.2f bytes per call, want <= 12", per)
	}
}

func TestBadInput(t *testing.T) {
	good := writeLog(t, haloRecords(2000, 3), &Trailer{Status: EndFinalized})
	corruptMid := append([]byte(nil), good...)
	corruptMid[len(good)/2] ^= 0x5A
	badVersion := append([]byte(nil), good...)
	badVersion[8] = 99
	badHeader := append([]byte(nil), good...)
	badHeader[preambleSize+3] ^= 1
	for _, tc := range []struct {
		name   string
		data   []byte
		err    error // from Read
		damage bool  // Read succeeds but reports a truncated log
	}{
		{"empty", nil, ErrEmpty, false},
		{"foreign", []byte("\x7fELF\x02\x01\x01\x00 and more bytes here"), ErrNotLog, false},
		{"text", []byte("hello, world\n"), ErrNotLog, false},
		{"short magic", []byte("CPAT"), ErrTruncated, false},
		{"version", badVersion, ErrVersion, false},
		{"header checksum", badHeader, ErrCorrupt, false},
		{"cut in header", good[:preambleSize+10], ErrTruncated, false},
		{"corrupt middle", corruptMid, ErrCorrupt, false},
		// (a cut between two items is where a killed rank's log ends: this
		// one must fall inside an item)
		{"cut in records", good[:len(good)*2/3+1], nil, true},
		{"no trailer", writeLog(t, haloRecords(10, 4), nil), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Read(bytes.NewReader(tc.data), "rank-000002.cplog")
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %v, want %v", err, tc.err)
				}
				if msg := err.Error(); !bytes.HasPrefix([]byte(msg), []byte("rank-000002.cplog: ")) || bytes.ContainsRune([]byte(msg), '\n') {
					t.Fatalf("error %q must be one line naming the file", msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (l.Damage != nil) != tc.damage {
				t.Fatalf("damage = %v, want damage %v", l.Damage, tc.damage)
			}
			if l.Complete() {
				t.Fatal("a cut or trailer-less log must not be complete")
			}
		})
	}
}

// ticksLog is a log as the logger writes it: times in clock ticks, a
// calibration point in the stream (before record calAt), a module chunk,
// the trailer. The header says tick 1000 is ns 5000 at 0.5 ns per tick; the
// calibration point says tick 1e6 is ns 504100.
func ticksLog(t testing.TB, recs []Record, calAt int) []byte {
	t.Helper()
	h := testHeader()
	h.Ticks = &Ticks{Tick: 1000, Ns: 5000, NsPerTick: 0.5}
	pre, err := EncodeHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	var e encoder
	e.prevEnd = 1000
	body := []byte{}
	for i := range recs {
		if i == calAt {
			body = append(body, tagCal)
			body = binary.AppendUvarint(body, zig64(1_000_000))
			body = binary.AppendUvarint(body, zig64(1_000_000/2+4000+100))
		}
		body = e.record(body, &recs[i], nil)
	}
	js, _ := json.Marshal([]Module{{Path: "/lib/x.so", Base: 0x7000, Start: 0x7000, End: 0x9000, BuildID: "ab"}})
	body = appendChunk(body, ChunkModules, js)
	var tr [trailerLen]byte
	binary.LittleEndian.PutUint32(tr[0:], uint32(EndSignal))
	binary.LittleEndian.PutUint64(tr[8:], uint64(len(recs)))
	body = appendChunk(body, ChunkTrailer, tr[:])
	body = append(body, 0, 0, 0, 0, 0) // the zero tail of the logger's mapped file
	return append(pre, body...)
}

// TestTicks: times in ticks come out in ns, interpolated between the
// calibration points around them (the header's is the first), and after
// the last one along the rate measured from the first to it; modules from a
// chunk join the header's.
func TestTicks(t *testing.T) {
	recs := []Record{
		{Op: OpSend, Start: 3000, End: 3100, Peer: 1, Root: PeerNone, CallSite: 0x7100},
		{Op: OpWait, Start: 1_000_200, End: 1_000_600, Count: 1, Peer: PeerNone, Root: PeerNone, CallSite: 0x7200},
		{Op: OpReqDone, Req: 9, Peer: 3, Root: PeerNone},
	}
	l, err := Read(bytes.NewReader(ticksLog(t, recs, 1)), "t.cplog")
	if err != nil {
		t.Fatal(err)
	}
	if l.Damage != nil || l.Trailer.Status != EndSignal || len(l.Records) != 3 {
		t.Fatalf("damage %v trailer %+v, %d records", l.Damage, l.Trailer, len(l.Records))
	}
	// from (1000, 5000) to (1e6, 504100): 499100/999000 ns per tick, for
	// the records between the two points and after the second
	scale := float64(504100-5000) / float64(1_000_000-1000)
	if r := l.Records[0]; r.Start != 5000+int64(math.Round(2000*scale)) || r.End != 5000+int64(math.Round(2100*scale)) {
		t.Errorf("before the calibration point: %d..%d", r.Start, r.End)
	}
	if r := l.Records[1]; r.Start != 504100+int64(math.Round(200*scale)) || r.End != 504100+int64(math.Round(600*scale)) {
		t.Errorf("after the calibration point: %d..%d", r.Start, r.End)
	}
	if l.Records[2].Start != 0 || l.Records[2].Req != 9 {
		t.Errorf("sub-record %+v", l.Records[2])
	}
	m, off := l.Header.ModuleOf(0x7200)
	if m == nil || m.Path != "/lib/x.so" || off != 0x200 || m.BuildID != "ab" {
		t.Errorf("ModuleOf(0x7200) = %+v, %#x", m, off)
	}
	if m, _ := l.Header.ModuleOf(0x9000); m != nil {
		t.Errorf("ModuleOf(0x9000) = %+v, want none", m)
	}
}

func TestComms(t *testing.T) {
	recs := []Record{
		{Op: OpCommSplit, Start: 1, End: 2, Comm: CommWorld, Req: 2, Tag: 1, Root: 1, Count: 2, Seq: 1},
		{Op: OpMember, Peer: 1}, {Op: OpMember, Peer: 3},
		{Op: OpBarrier, Start: 3, End: 4, Comm: 2, Seq: 1},
	}
	l, err := Read(bytes.NewReader(writeLog(t, recs, &Trailer{Status: EndFinalized})), "c")
	if err != nil {
		t.Fatal(err)
	}
	want := []Comm{{Name: "W0.0", Members: []int32{0, 1, 2, 3}}, {Name: "s2.0", Members: []int32{2}},
		{Name: "S1.1", Op: OpCommSplit, Parent: CommWorld, Members: []int32{1, 3}}}
	if !reflect.DeepEqual(l.Comms, want) {
		t.Fatalf("comms %+v", l.Comms)
	}
}

// TestCommsTopology: a topology constructor's NeighborSource and
// NeighborDest sub-records, after its members, give the rank's neighbour
// lists (PROC_NULL slots kept, in order); a dup of it has its own.
func TestCommsTopology(t *testing.T) {
	recs := []Record{
		// A non-periodic 1-D cart of ranks 0..3 seen from rank 2 (the
		// header's rank): left 1, right 3.
		{Op: OpCartCreate, Start: 1, End: 2, Comm: CommWorld, Req: 2, Tag: 1, Root: 0, Count: 8, Seq: 1},
		{Op: OpMember, Peer: 0}, {Op: OpMember, Peer: 1}, {Op: OpMember, Peer: 2}, {Op: OpMember, Peer: 3},
		{Op: OpNeighborSource, Peer: 1}, {Op: OpNeighborSource, Peer: 3},
		{Op: OpNeighborDest, Peer: 1}, {Op: OpNeighborDest, Peer: 3},
		// A dist graph over ranks 1, 2: one source (PROC_NULL slot
		// first), no destination.
		{Op: OpDistGraphCreateAdjacent, Start: 3, End: 4, Comm: CommWorld, Req: 3, Tag: 2, Root: 1, Count: 4, Seq: 2},
		{Op: OpMember, Peer: 1}, {Op: OpMember, Peer: 2},
		{Op: OpNeighborSource, Peer: PeerProcNull}, {Op: OpNeighborSource, Peer: 1},
		{Op: OpNeighborAllgather, Start: 5, End: 6, Comm: 2, Seq: 1, Bytes: 16},
	}
	l, err := Read(bytes.NewReader(writeLog(t, recs, &Trailer{Status: EndFinalized})), "c")
	if err != nil {
		t.Fatal(err)
	}
	want := []Comm{{Name: "W0.0", Members: []int32{0, 1, 2, 3}}, {Name: "s2.0", Members: []int32{2}},
		{Name: "K0.1", Op: OpCartCreate, Parent: CommWorld, Members: []int32{0, 1, 2, 3},
			Sources: []int32{1, 3}, Dests: []int32{1, 3}},
		{Name: "a1.2", Op: OpDistGraphCreateAdjacent, Parent: CommWorld, Members: []int32{1, 2},
			Sources: []int32{PeerProcNull, 1}}}
	if !reflect.DeepEqual(l.Comms, want) {
		t.Fatalf("comms %+v\nwant  %+v", l.Comms, want)
	}
}

// TestOldVersion: logs of versions 1 and 2 (LZ4 frames; 2 with coalesced
// polls, written by main's logger of issue 14), 3 (one stream of items,
// no threads' blocks or call paths), 4 (a block per threaded call) and 5
// (a trailer without the count of calls) are rejected with one line naming the file and both versions.
func TestOldVersion(t *testing.T) {
	for v, name := range map[int]string{1: "halo-v1.cplog", 2: "halo-v2-lz4.cplog", 3: "halo-v3.cplog", 4: "halo-v4.cplog", 5: "halo-v5.cplog"} {
		path := filepath.Join("testdata", name)
		_, err := ReadFile(path)
		if !errors.Is(err, ErrVersion) {
			t.Fatalf("%s: got %v, want ErrVersion", name, err)
		}
		want := fmt.Sprintf("%s: unsupported log format version: format version %d, this cpath reads version %d", path, v, Version)
		if err.Error() != want {
			t.Fatalf("error %q, want %q", err, want)
		}
	}
}

// TestGolden pins the on-disk format: a change that alters the bytes of a
// TestGolden pins the on-disk format: a change that alters the bytes of a
// log of this version must bump Version. Regenerate with CPATH_UPDATE_GOLDEN=1.
func TestGolden(t *testing.T) {
	path := filepath.Join("testdata", fmt.Sprintf("halo-v%d.cplog", Version))
	recs := haloRecords(50, 6)
	data := writeLog(t, recs, &Trailer{Status: EndFinalized})
	if os.Getenv("CPATH_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Read(bytes.NewReader(want), path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Records, recs) {
		t.Fatal("golden log decodes to different records")
	}
	if !bytes.Equal(data, want) {
		t.Fatal("writer output changed; bump trace.Version if the format changed, then CPATH_UPDATE_GOLDEN=1")
	}
}

// FuzzRead feeds arbitrary bytes to the decoder: it must return records or
// an error, never panic or allocate without bound, and the same whether
// the input comes all at once (records decoded in place in the buffer) or
// a byte at a time (decoded byte by byte, with a refill check each).
func FuzzRead(f *testing.F) {
	f.Add(writeLog(f, haloRecords(20, 7), &Trailer{Status: EndFinalized}))
	f.Add(writeLog(f, haloRecords(3, 8), nil))
	f.Add(writeLog(f, pollRecords(), &Trailer{Status: EndFinalized}))
	f.Add([]byte("CPATHLOG"))
	killed, _, _ := killedThreads(f, []byte{0, 6, 1, 0x05, 0x00, 0x3, 0, 0})
	f.Add(killed)
	region, _, _ := killedThreads(f, []byte{tagBlock, 8, 1, 0x05, 0, 0, 0, 0, 0, 0}) // a region's zero rest
	f.Add(region)
	f.Add(ticksLog(f, []Record{{Op: OpWait, Start: 3000, End: 3100, Count: 1, Root: PeerNone}, {Op: OpReqDone, Req: 2}}, 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Read(bytes.NewReader(data), "fuzz")
		if err == nil && l == nil {
			t.Fatal("nil log without error")
		}
		l1, err1 := Read(iotest.OneByteReader(bytes.NewReader(data)), "fuzz")
		if fmt.Sprint(err) != fmt.Sprint(err1) || (l == nil) != (l1 == nil) {
			t.Fatalf("at once: %v; a byte at a time: %v", err, err1)
		}
		if l != nil && (!reflect.DeepEqual(l.Records, l1.Records) || fmt.Sprint(l.Damage) != fmt.Sprint(l1.Damage)) {
			t.Fatalf("at once: %d records, damage %v; a byte at a time: %d, %v", len(l.Records), l.Damage, len(l1.Records), l1.Damage)
		}
	})
}

// TestSkipAndZeroTail: what the logger leaves when a rank dies: a call
// coded half-way when the signal came is covered by a SKIP, the trailer
// follows it; a rank killed outright leaves its last calls unchecked before
// the zero tail, which the reader keeps; bytes after a zero tag are not
// read.
func TestSkipAndZeroTail(t *testing.T) {
	recs := haloRecords(20, 11)
	h := testHeader()
	pre, err := EncodeHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	var e encoder
	e.prevEnd = h.T0
	var body []byte
	for i := range recs {
		body = e.record(body, &recs[i], nil)
	}
	// killed: the calls, a zero tail, and garbage of a half-coded call
	// behind a zero first byte
	killed := append(append(append([]byte(nil), pre...), body...), 0, 0x05, 0x77, 0x99, 0, 0, 0)
	l, err := Read(bytes.NewReader(killed), "k.cplog")
	if err != nil || l.Damage != nil || l.Trailer.Status != EndMissing || !reflect.DeepEqual(l.Records, recs) {
		t.Fatalf("killed: err %v damage %v trailer %v, %d records, want %d as written", err, l.Damage, l.Trailer.Status, len(l.Records), len(recs))
	}
	// signal: a SKIP over a half-coded call, then the trailer and a CHECK
	sig := append([]byte(nil), body...)
	sig = append(sig, tagSkip, 6, 0, 0, 0, 0x05, 0x01, 0xFF, 0xFF, 0x07, 0x33)
	var tr [trailerLen]byte
	binary.LittleEndian.PutUint32(tr[0:], uint32(EndSignal))
	binary.LittleEndian.PutUint32(tr[4:], 15)
	binary.LittleEndian.PutUint64(tr[8:], uint64(len(recs)))
	sig = appendChunk(sig, ChunkTrailer, tr[:])
	sig = append(sig, tagCheck)
	sig = binary.LittleEndian.AppendUint32(sig, crc32.Checksum(sig[:len(sig)-1], castagnoli))
	sig = append(sig, 0, 0, 0, 0) // the zero tail
	l, err = Read(bytes.NewReader(append(append([]byte(nil), pre...), sig...)), "s.cplog")
	if err != nil || l.Damage != nil || l.Trailer.Status != EndSignal || l.Trailer.Info != 15 || !reflect.DeepEqual(l.Records, recs) {
		t.Fatalf("signal: err %v damage %v trailer %+v, %d records", err, l.Damage, l.Trailer, len(l.Records))
	}
	// the same with one byte of the skipped stretch changed: the CHECK fails
	bad := append([]byte(nil), sig...)
	bad[len(body)+7] ^= 1
	if _, err := Read(bytes.NewReader(append(append([]byte(nil), pre...), bad...)), "b.cplog"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("changed byte under the CHECK: %v, want ErrCorrupt", err)
	}
}

// TestPolls: a coalesced unproductive poll keeps its number of calls in
// Root through the writer and reader; other records stand for one call.
func TestPolls(t *testing.T) {
	recs := pollRecords()
	want := []uint64{1, 10_000_000, 2, 1, 1, 0, 1, 1}
	wantIdle := []bool{false, true, true, true, false, false, false, false}
	l, err := Read(bytes.NewReader(writeLog(t, recs, &Trailer{Status: EndFinalized})), "polls")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Records, recs) {
		t.Fatalf("records changed through the writer and reader:\n got %+v\nwant %+v", l.Records, recs)
	}
	for i := range l.Records {
		r := &l.Records[i]
		if r.Polls() != want[i] || r.Unproductive() != wantIdle[i] {
			t.Errorf("record %d (%v root %d): Polls %d, Unproductive %v; want %d, %v",
				i, r.Op, r.Root, r.Polls(), r.Unproductive(), want[i], wantIdle[i])
		}
	}
}

// pollRecords: coalesced and productive polls among other calls.
func pollRecords() []Record {
	return []Record{
		{Op: OpInit, Start: 10, End: 20, Root: PeerNone, Comm: CommWorld},
		{Op: OpTest, Start: 30, End: 5_000_030, Root: 10_000_000, Comm: CommNone, Peer: PeerNone},
		{Op: OpIprobe, Start: 5_000_040, End: 5_000_050, Root: 2, Comm: CommWorld, Peer: 0, Tag: 99},
		{Op: OpTestsome, Start: 5_000_060, End: 5_000_070, Root: 1, Comm: CommNone, Peer: PeerNone},
		{Op: OpTest, Start: 5_000_080, End: 5_000_090, Root: PeerNone, Comm: CommNone, Peer: PeerNone, Count: 1},
		{Op: OpReqDone, Req: 1, Comm: CommWorld, Peer: 0, Tag: 7, Bytes: 4, Root: PeerNone},
		{Op: OpIprobe, Start: 5_000_100, End: 5_000_110, Root: PeerNone, Comm: CommWorld, Peer: 0, Tag: 7, Bytes: 4},
		{Op: OpBcast, Start: 5_000_120, End: 5_000_130, Root: 3, Comm: CommWorld, Seq: 1},
	}
}
