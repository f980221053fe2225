package graph_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
	"github.com/cpath/cpath/trace"
)

// fuzzRun turns fuzz bytes into the records of a run of 2 ranks (3 when
// the first byte's top bit is set), 12 bytes a record, with small ranges
// for communicators, peers, tags, roots, sequence numbers and requests so
// that the records meet one another, and writes the logs (well framed:
// FuzzRead covers the framing) into dir.
func fuzzRun(t *testing.T, dir string, data []byte) {
	ranks := 2
	if len(data) > 0 && data[0]&0x80 != 0 {
		ranks = 3
	}
	recs := make([][]trace.Record, ranks)
	now := []int64{1000, 1000, 1000}
	for ; len(data) >= 12; data = data[12:] {
		b := data[:12]
		r := int(b[0]&3) % ranks
		rec := trace.Record{Op: trace.Op(b[1] % uint8(trace.NumOps)), Flags: trace.Flags(b[2]), Thread: uint16(b[3] & 1),
			Comm: uint32(b[4] % 3), Peer: int32(b[5]%4) - 1, Tag: int32(b[6] % 3), Root: int32(b[7]%4) - 1,
			Seq: uint32(b[8] % 4), Req: uint32(b[9] % 5), Bytes: uint64(b[10]) << 10, CallSite: 0x1000}
		if rec.Op.Class() != trace.ClassSub {
			rec.Start = now[r] + int64(b[10])
			rec.End = rec.Start + int64(b[11])
			now[r] = rec.End
		}
		recs[r] = append(recs[r], rec)
	}
	writeLogs(t, dir, recs)
}

// writeLogs writes one log per rank of recs into dir (a run "fuzz" of
// len(recs) ranks, all finalized); each call's Count is set to the
// sub-records that follow it, and leading sub-records are dropped.
func writeLogs(t *testing.T, dir string, recs [][]trace.Record) {
	t.Helper()
	for r := range recs {
		rs := recs[r][:0]
		last := -1
		for _, rec := range recs[r] {
			if rec.Op.Class() == trace.ClassSub {
				if last < 0 {
					continue
				}
				rs[last].Count++
			} else {
				rec.Count = 0
				last = len(rs)
			}
			rs = append(rs, rec)
		}
		h := &trace.Header{RunID: "fuzz", Rank: r, Size: len(recs), Host: "fuzz", PID: 1 + r, Exe: "/fuzz", T0: 1000, Logger: "fuzz"}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("rank-%06d.cplog", r)))
		if err != nil {
			t.Fatal(err)
		}
		w, err := trace.NewWriter(f, h)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRecords(rs); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(trace.Trailer{Status: trace.EndFinalized}); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

// FuzzBuild feeds the analyzer arbitrary sequences of calls: Build must
// not panic, and a graph it builds must be well formed (rows, sources in
// range, weights not negative) and searchable to the end (a path, or a
// clean error for logs that contradict themselves). A path it finds is as
// long as the run: the clocks corrected, every stretch of the run lies on
// a chain of edges that carry it. And every exact algorithm, at 1 to 3
// analyzer ranks, finds the same path, vertex for vertex; logs that one
// process refuses, 2 and 3 analyzer ranks refuse with the same error.
func FuzzBuild(f *testing.F) {
	f.Add([]byte{})
	// A send from rank 0 matched by a receive on rank 1, then a barrier.
	f.Add([]byte{
		0, byte(trace.OpSend), 0, 0, 0, 2, 0, 0, 0, 0, 5, 9,
		1, byte(trace.OpRecv), 0, 0, 0, 1, 0, 0, 0, 0, 1, 30,
		0, byte(trace.OpBarrier), 0, 0, 0, 0, 0, 0, 1, 0, 3, 4,
		1, byte(trace.OpBarrier), 0, 0, 0, 0, 0, 0, 1, 0, 3, 4,
	})
	// Nonblocking: Isend/Irecv with new requests, completed by Wait.
	f.Add([]byte{
		0, byte(trace.OpIsend), byte(trace.FlagNewReq), 0, 0, 2, 1, 0, 0, 1, 1, 2,
		1, byte(trace.OpIrecv), byte(trace.FlagNewReq), 0, 0, 1, 1, 0, 0, 2, 1, 2,
		0, byte(trace.OpWait), 0, 0, 0, 0, 0, 0, 0, 0, 1, 2,
		0, byte(trace.OpReqDone), 0, 0, 0, 2, 1, 0, 0, 1, 0, 0,
		1, byte(trace.OpWait), 0, 0, 0, 0, 0, 0, 0, 0, 1, 9,
		1, byte(trace.OpReqDone), 0, 0, 0, 1, 1, 0, 0, 2, 0, 0,
	})
	// General active target: window 1 created on both, rank 0 posts to
	// {1}, rank 1 starts {0}, puts to 0 and completes, rank 0 waits.
	f.Add([]byte{
		0, byte(trace.OpWinCreate), 0, 0, 0, 0, 1, 0, 1, 0, 1, 5,
		1, byte(trace.OpWinCreate), 0, 0, 0, 0, 1, 0, 1, 0, 1, 5,
		0, byte(trace.OpWinPost), 0, 0, 0, 0, 1, 0, 0, 0, 1, 2,
		0, byte(trace.OpWinGroupMember), 0, 0, 0, 2, 0, 0, 0, 0, 0, 0,
		1, byte(trace.OpWinStart), 0, 0, 0, 0, 1, 0, 0, 0, 1, 9,
		1, byte(trace.OpWinGroupMember), 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
		1, byte(trace.OpPut), 0, 0, 0, 1, 1, 0, 0, 0, 1, 2,
		1, byte(trace.OpWinComplete), 0, 0, 0, 0, 1, 0, 0, 0, 5, 2,
		0, byte(trace.OpWinWait), 0, 0, 0, 0, 1, 0, 0, 0, 1, 20,
	})
	// Rank 0 probes for rank 1's message before rank 1's MPI_Ssend is
	// posted, then receives it; rank 1 reaches the barrier last
	// (TestPollRunStretches).
	f.Add([]byte{
		0, byte(trace.OpIprobe), 0, 0, 0, 2, 0, 2, 0, 0, 100, 200,
		1, byte(trace.OpSsend), 0, 0, 0, 1, 0, 0, 0, 0, 150, 250,
		0, byte(trace.OpRecv), 0, 0, 0, 2, 0, 0, 0, 0, 10, 50,
		0, byte(trace.OpBarrier), 0, 0, 0, 0, 0, 0, 1, 0, 200, 10,
		1, byte(trace.OpBarrier), 0, 0, 0, 0, 0, 0, 1, 0, 250, 10,
	})
	// Three ranks (the first byte's top bit): 0 sends to 1, 1 to 2, then
	// all three meet in a barrier.
	f.Add([]byte{
		0x80, byte(trace.OpSend), 0, 0, 0, 2, 0, 0, 0, 0, 5, 9,
		0x81, byte(trace.OpRecv), 0, 0, 0, 1, 0, 0, 0, 0, 1, 30,
		0x81, byte(trace.OpSend), 0, 0, 0, 3, 0, 0, 0, 0, 1, 9,
		0x82, byte(trace.OpRecv), 0, 0, 0, 2, 0, 0, 0, 0, 1, 60,
		0x80, byte(trace.OpBarrier), 0, 0, 0, 0, 0, 0, 1, 0, 3, 4,
		0x81, byte(trace.OpBarrier), 0, 0, 0, 0, 0, 0, 1, 0, 3, 4,
		0x82, byte(trace.OpBarrier), 0, 0, 0, 0, 0, 0, 1, 0, 3, 4,
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		fuzzRun(t, dir, data)
		run, err := graph.Load(dir)
		if err != nil {
			return
		}
		g, err := graph.Build(&mpix.Single{}, run)
		if err != nil {
			// Logs one process refuses, every analyzer job refuses, on
			// every rank, with the same one line.
			for P := 2; P <= 3; P++ {
				errs := make([]error, P)
				mpixtest.Run(P, func(c mpix.Comm) { _, errs[c.Rank()] = graph.Build(c, run) })
				for r, e := range errs {
					if e == nil || e.Error() != err.Error() {
						t.Fatalf("P=%d rank %d: %v; one process: %v", P, r, e, err)
					}
				}
			}
			return
		}
		if err := graphOf(g).Validate(); err != nil {
			t.Fatal(err)
		}
		res, err := cpath.DAG(graphOf(g), g.Target)
		if err != nil {
			return
		}
		if res.Path.Length != g.T1-g.T0 {
			t.Fatalf("path %d ns, run %d ns", res.Path.Length, g.T1-g.T0)
		}
		for _, a := range exactAlgos() {
			for P := 1; P <= 3; P++ {
				got, err := pathAtP(run, a, P)
				if err != nil {
					t.Fatalf("%s P=%d: %v (dag in one process found a path)", a.name, P, err)
				}
				if got.Length != res.Path.Length || !slices.Equal(got.Vertices, res.Path.Vertices) {
					t.Fatalf("%s P=%d: path of %d vertices, %d ns; dag in one process: %d vertices, %d ns",
						a.name, P, len(got.Vertices), got.Length, len(res.Path.Vertices), res.Path.Length)
				}
			}
		}
	})
}
