package bench

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"testing"

	"github.com/cpath/cpath/trace"
)

// bufRecs is the logger's record buffer (logger/runtime.c, CP_BUFRECS): Go
// encodes and compresses one full buffer per flush.
const bufRecs = 16384

// pattern generates synthetic records shaped like what the logger writes.
type pattern struct {
	name string
	gen  func(n int, seed int64) []trace.Record // about n records
}

var patterns = []pattern{
	{"halo", haloRecords},
	{"halo-jitter", jitterHaloRecords},
	{"tightloop", tightRecords},
}

// clock hands out call timestamps: gap ns after the previous call's end (±
// jitter), lasting dur (± jitter).
type clock struct {
	t   int64
	rng *rand.Rand
}

func (c *clock) call(gap, dur, jitter int64) (int64, int64) {
	s := c.t + gap + c.rng.Int63n(jitter+1)
	e := s + dur + c.rng.Int63n(jitter+1)
	c.t = e
	return s, e
}

// haloRecords is bench/progs/halo.c on 2 ranks as rank 0 logs it: per
// iteration Irecv×2, Isend×2 (64 bytes to the one neighbour), a Waitall that
// completes the four requests (ReqDone sub-records) and, every 10
// iterations, an Allreduce; ~500 µs of computation between iterations.
func haloRecords(n int, seed int64) []trace.Record {
	return halo(n, seed, 100)
}

// jitterHaloRecords is haloRecords with timings 10× as irregular: a noisy
// machine's log.
func jitterHaloRecords(n int, seed int64) []trace.Record {
	return halo(n, seed, 1000)
}

func halo(n int, seed int64, jitter int64) []trace.Record {
	c := clock{t: 1_000_000, rng: rand.New(rand.NewSource(seed))}
	recs := make([]trace.Record, 0, n+16)
	var req, seq uint32
	site := func(k int) uint64 { return 0x401a00 + uint64(k)*0x24 }
	for it := 0; len(recs) < n; it++ {
		var ids [4]uint32
		for k := 0; k < 4; k++ {
			op, tag := trace.OpIrecv, int32(k)
			if k >= 2 {
				op, tag = trace.OpIsend, int32(k-2)
			}
			gap := int64(40)
			if k == 0 {
				gap = 500_000 // the computation
			}
			s, e := c.call(gap, 150, jitter)
			req++
			ids[k] = req
			recs = append(recs, trace.Record{Start: s, End: e, CallSite: site(k), Bytes: 64, Op: op,
				Flags: trace.FlagNewReq, Comm: trace.CommWorld, Peer: 1, Tag: tag, Root: trace.PeerNone, Req: req})
		}
		s, e := c.call(40, 2000, jitter*10)
		recs = append(recs, trace.Record{Start: s, End: e, CallSite: site(4), Op: trace.OpWaitall,
			Comm: trace.CommNone, Peer: trace.PeerNone, Root: trace.PeerNone, Count: 4})
		for k := 0; k < 4; k++ {
			recs = append(recs, trace.Record{Op: trace.OpReqDone, Comm: trace.CommWorld, Peer: 1, Tag: int32(k % 2),
				Root: trace.PeerNone, Bytes: 64, Req: ids[k]})
		}
		if it%10 == 9 {
			seq++
			s, e := c.call(1000, 3000, jitter*10)
			recs = append(recs, trace.Record{Start: s, End: e, CallSite: site(5), Bytes: 8, Op: trace.OpAllreduce,
				Comm: trace.CommWorld, Peer: trace.PeerNone, Root: trace.PeerNone, Seq: seq})
		}
	}
	return recs
}

// tightRecords is bench/progs/tightloop.c's test kind: MPI_Test on
// MPI_REQUEST_NULL back to back, the most regular log there is.
func tightRecords(n int, seed int64) []trace.Record {
	c := clock{t: 1_000_000, rng: rand.New(rand.NewSource(seed))}
	recs := make([]trace.Record, n)
	for i := range recs {
		s, e := c.call(20, 10, 4)
		recs[i] = trace.Record{Start: s, End: e, CallSite: 0x4012f0, Op: trace.OpTest, Comm: trace.CommNone,
			Peer: trace.PeerNone, Root: trace.PeerNone}
	}
	return recs
}

func timed(recs []trace.Record) int {
	n := 0
	for i := range recs {
		if !recs[i].Op.IsSub() {
			n++
		}
	}
	return n
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkWriteRecords measures the logger's flush path in Go: encode and
// LZ4-compress one full buffer (16384 records) and write it as one frame.
// ns/record is what a flush adds, amortised, to every logged call; B/call is
// the on-disk size per timed record (header excluded).
func BenchmarkWriteRecords(b *testing.B) {
	for _, p := range patterns {
		recs := p.gen(bufRecs, 1)[:bufRecs]
		calls := timed(recs)
		b.Run(p.name, func(b *testing.B) {
			var cw countWriter
			w, err := trace.NewWriter(&cw, &trace.Header{Rank: 0, Size: 2})
			if err != nil {
				b.Fatal(err)
			}
			start := cw.n
			b.SetBytes(int64(len(recs) * trace.RecordSize))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := w.WriteRecords(recs); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
			// Every frame after the first continues the delta chain of the
			// one before, as in a real log (the timestamps jump back at the
			// start of each repetition, which costs a few bytes per frame).
			b.ReportMetric(float64(cw.n-start)/float64(b.N*calls), "B/call")
		})
	}
}

// BenchmarkReadRecords measures the analyzer's side: decode a log of 64
// buffers' worth of records with the streaming reader.
func BenchmarkReadRecords(b *testing.B) {
	var dst []trace.Record
	benchRead(b, func(rd *trace.Reader, recs []trace.Record, calls int) error {
		got := 0
		for {
			var err error
			dst, err = rd.Next(dst[:0])
			got += len(dst)
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
		}
		if got != len(recs) {
			return fmt.Errorf("read %d records, want %d", got, len(recs))
		}
		return nil
	})
}

// BenchmarkSkim measures the reading the analyzer gives a log that does
// not end with its trailer (a rank that died), to count its calls.
func BenchmarkSkim(b *testing.B) {
	none := func(trace.Op) bool { return false }
	benchRead(b, func(rd *trace.Reader, recs []trace.Record, calls int) error {
		n, err := rd.Skim(none, nil)
		if err == nil && n != calls {
			err = fmt.Errorf("skimmed %d calls, want %d", n, calls)
		}
		return err
	})
}

// benchRead runs read on a new reader of each pattern's log of 64
// buffers' worth of records, b.N times a pattern.
func benchRead(b *testing.B, read func(rd *trace.Reader, recs []trace.Record, calls int) error) {
	for _, p := range patterns {
		recs := p.gen(64*bufRecs, 1)
		var buf bytes.Buffer
		writeLog(b, &buf, recs)
		data, calls := buf.Bytes(), timed(recs)
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(int64(len(recs) * trace.RecordSize))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				rd, err := trace.NewReader(bytes.NewReader(data), "bench.cplog")
				if err == nil {
					err = read(rd, recs, calls)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
			b.ReportMetric(float64(len(data))/float64(calls), "B/call")
		})
	}
}

// writeLog writes recs to out as a log, a buffer's worth at a time, as the
// logger flushes them.
func writeLog(tb testing.TB, out io.Writer, recs []trace.Record) {
	w, err := trace.NewWriter(out, &trace.Header{Rank: 0, Size: 2})
	if err != nil {
		tb.Fatal(err)
	}
	for r := recs; len(r) > 0; {
		n := min(len(r), bufRecs)
		if err := w.WriteRecords(r[:n]); err != nil {
			tb.Fatal(err)
		}
		r = r[n:]
	}
	if err := w.Close(trace.Trailer{Status: trace.EndFinalized}); err != nil {
		tb.Fatal(err)
	}
}

// TestSyntheticSizes checks the generators against the on-disk target that
// the benchmarks report (≤ 16 bytes per call for a regular halo exchange),
// so that a format change that breaks it fails here without MPI.
func TestSyntheticSizes(t *testing.T) {
	for _, p := range patterns {
		recs := p.gen(8*bufRecs, 2)
		var cw countWriter
		writeLog(t, &cw, recs)
		per := float64(cw.n) / float64(timed(recs))
		t.Logf("%-12s %8d records, %8d bytes, %5.2f B/call", p.name, len(recs), cw.n, per)
		if p.name == "halo" && per > 16 {
			t.Errorf("%s: %.2f bytes per call, want <= 16", p.name, per)
		}
	}
}
