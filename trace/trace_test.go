package trace

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"
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
// exchange must cost at most 16 bytes per call on disk.
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
	if per > 16 {
		t.Fatalf("%.2f bytes per call, want <= 16", per)
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
		{"cut in records", good[:len(good)*2/3], nil, true},
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

// TestRawChunk checks the records the logger's signal path writes: an LZ4
// frame of uncompressed blocks holding raw records in ticks.
func TestRawChunk(t *testing.T) {
	var b bytes.Buffer
	w, err := NewWriter(&b, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecords(haloRecords(5, 5)); err != nil {
		t.Fatal(err)
	}
	// What runtime.c's cp_emergency writes: ticks at 2 per ns from tick 0 = ns 1000.
	raw := []Record{{Op: OpSend, Start: 4000, End: 4100, Peer: 1, Root: PeerNone}, {Op: OpWait, Start: 5000, End: 6000, Count: 1}, {Op: OpReqDone, Req: 9}}
	payload := make([]byte, 32+len(raw)*RecordSize)
	le := []int64{0, 1000, 2000, 2000}
	for i, v := range le {
		putU64(payload[i*8:], uint64(v))
	}
	for i, r := range raw {
		encodeRawForTest(payload[32+i*RecordSize:], &r)
	}
	block := chunkBytes(ChunkRawRecords, payload)
	block = append(block, chunkBytes(ChunkTrailer, make([]byte, 24))...)
	putU32(block[len(block)-24:], uint32(EndSignal))
	putU32(block[len(block)-20:], 15)
	b.Write(RawFrameHeader())
	var sz [4]byte
	putU32(sz[:], uint32(len(block))|0x80000000)
	b.Write(sz[:])
	b.Write(block)
	b.Write([]byte{0, 0, 0, 0})
	l, err := Read(&b, "raw")
	if err != nil {
		t.Fatal(err)
	}
	got := l.Records[len(l.Records)-3:]
	if got[0].Start != 3000 || got[0].End != 3050 || got[1].End != 4000 || got[2].Req != 9 {
		t.Fatalf("raw records decoded as %+v", got)
	}
	if l.Trailer.Status != EndSignal || l.Trailer.Info != 15 {
		t.Fatalf("trailer %+v", l.Trailer)
	}
}

func putU64(b []byte, v uint64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}
func putU32(b []byte, v uint32) {
	for i := 0; i < 4; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

func chunkBytes(kind int, payload []byte) []byte {
	h := make([]byte, 8, 8+len(payload))
	putU32(h, uint32(kind))
	putU32(h[4:], uint32(len(payload)))
	return append(h, payload...)
}

func encodeRawForTest(b []byte, r *Record) {
	putU64(b[0:], uint64(r.Start))
	putU64(b[8:], uint64(r.End))
	putU64(b[16:], r.CallSite)
	putU64(b[24:], r.Bytes)
	b[32], b[33] = byte(r.Op), byte(r.Flags)
	putU32(b[36:], r.Comm)
	putU32(b[40:], uint32(r.Peer))
	putU32(b[44:], uint32(r.Tag))
	putU32(b[48:], uint32(r.Root))
	putU32(b[52:], r.Count)
	putU32(b[56:], r.Seq)
	putU32(b[60:], r.Req)
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
// an error, never panic or allocate without bound.
func FuzzRead(f *testing.F) {
	f.Add(writeLog(f, haloRecords(20, 7), &Trailer{Status: EndFinalized}))
	f.Add(writeLog(f, haloRecords(3, 8), nil))
	f.Add(writeLog(f, pollRecords(), &Trailer{Status: EndFinalized}))
	f.Add([]byte("CPATHLOG"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Read(bytes.NewReader(data), "fuzz")
		if err == nil && l == nil {
			t.Fatal("nil log without error")
		}
	})
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
