package otf2

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// prog is a synthetic run: each rank's records, timed as they are added
// (a call every 10 µs of its thread, 1 µs long).
type prog struct {
	ranks [][]trace.Record
	now   [][]int64 // by rank and thread: its clock
}

func newProg(size int) *prog {
	p := &prog{ranks: make([][]trace.Record, size), now: make([][]int64, size)}
	for r := range p.now {
		p.now[r] = []int64{1_000_000 + int64(r)*3_000}
	}
	return p
}

// call adds a call of rank r (its thread rec.Thread) and its sub-records.
func (p *prog) call(r int, rec trace.Record, subs ...trace.Record) {
	for int(rec.Thread) >= len(p.now[r]) {
		// Apart from the others by 500 ns: threads' calls that end at
		// the same ns may come back in the other order.
		p.now[r] = append(p.now[r], p.now[r][0]+500)
	}
	t := p.now[r][rec.Thread] + 10_000
	rec.Start, rec.End = t, t+1_000
	p.now[r][rec.Thread] = rec.End
	rec.Count = uint32(len(subs))
	p.ranks[r] = append(p.ranks[r], rec)
	p.ranks[r] = append(p.ranks[r], subs...)
}

// rec and sub are records with cpath's defaults for the fields not given.
func rec(op trace.Op) trace.Record {
	return trace.Record{Op: op, Comm: trace.CommWorld, Peer: trace.PeerNone, Root: trace.PeerNone}
}

func sub(op trace.Op, f func(*trace.Record)) trace.Record {
	s := trace.Record{Op: op, Comm: trace.CommNone, Peer: trace.PeerNone, Root: trace.PeerNone}
	f(&s)
	return s
}

func with(r trace.Record, f func(*trace.Record)) trace.Record { f(&r); return r }

// both adds a call made alike by every rank (a collective), numbered seq
// on its communicator.
func (p *prog) both(op trace.Op, comm uint32, seq uint32, f func(r int, rec *trace.Record)) {
	for r := range p.ranks {
		x := rec(op)
		x.Comm, x.Seq = comm, seq
		if f != nil {
			f(r, &x)
		}
		p.call(r, x)
	}
}

// write writes the run's logs into dir.
func (p *prog) write(t *testing.T, dir string) {
	t.Helper()
	for r, recs := range p.ranks {
		var b bytes.Buffer
		h := &trace.Header{RunID: "rt", Rank: r, Size: len(p.ranks), Host: "node", Logger: "test", T0: 0}
		for _, x := range recs {
			h.Threads = h.Threads || x.Thread > 0
		}
		w, err := trace.NewWriter(&b, h)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRecords(recs); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(trace.Trailer{Status: trace.EndFinalized}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("rank-%06d.cplog", r)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runs are the synthetic runs the round trip must keep record for record:
// every class of operation and what the analysis reads of it.
var runs = []struct {
	name string
	make func() *prog
}{
	{"point to point", func() *prog {
		p := newProg(2)
		p.both(trace.OpInit, trace.CommNone, 0, nil)
		for _, op := range []trace.Op{trace.OpSend, trace.OpSsend, trace.OpBsend, trace.OpRsend} {
			p.call(0, with(rec(op), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes = 1, 7, 800 }))
			p.call(1, with(rec(trace.OpRecv), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes = 0, 7, 800 }))
		}
		p.call(0, with(rec(trace.OpSend), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes = trace.PeerProcNull, 3, 8 }))
		p.call(1, with(rec(trace.OpRecv), func(x *trace.Record) {
			x.Peer, x.Tag, x.Bytes, x.Flags = 0, 9, 16, trace.FlagWildcard|trace.FlagAnyTag
		}))
		p.call(0, with(rec(trace.OpSend), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes = 1, 9, 16 }))
		for r := 0; r < 2; r++ {
			p.call(r, with(rec(trace.OpSendrecv), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes = int32(1-r), 5, 64 }),
				sub(trace.OpRecvPart, func(s *trace.Record) { s.Peer, s.Tag, s.Bytes = int32(1-r), 5, 32 }))
		}
		p.both(trace.OpFinalize, trace.CommNone, 0, nil)
		return p
	}},
	{"nonblocking and polls", func() *prog {
		p := newProg(2)
		p.both(trace.OpInit, trace.CommNone, 0, nil)
		for r := 0; r < 2; r++ {
			o := int32(1 - r)
			p.call(r, with(rec(trace.OpIrecv), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes, x.Req, x.Flags = o, 1, 4096, 1, trace.FlagNewReq }))
			p.call(r, with(rec(trace.OpIssend), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes, x.Req, x.Flags = o, 1, 4000, 2, trace.FlagNewReq }))
			p.call(r, with(rec(trace.OpTest), func(x *trace.Record) { x.Comm, x.Root = trace.CommNone, 3 })) // three polls that completed nothing
			p.call(r, with(rec(trace.OpWaitall), func(x *trace.Record) { x.Comm = trace.CommNone }),
				sub(trace.OpReqDone, func(s *trace.Record) { s.Req, s.Peer, s.Tag, s.Bytes = 1, o, 1, 4000 }),
				sub(trace.OpReqDone, func(s *trace.Record) { s.Req, s.Peer, s.Tag, s.Bytes = 2, o, 1, 4000 }))
			p.call(r, with(rec(trace.OpIrecv), func(x *trace.Record) {
				x.Peer, x.Tag, x.Bytes, x.Req, x.Flags = trace.PeerAny, 2, 8, 3, trace.FlagNewReq|trace.FlagWildcard
			}))
			p.call(r, with(rec(trace.OpIsend), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes, x.Req, x.Flags = o, 2, 8, 4, trace.FlagNewReq }))
			p.call(r, with(rec(trace.OpTestsome), func(x *trace.Record) { x.Comm = trace.CommNone }),
				sub(trace.OpReqDone, func(s *trace.Record) { s.Req, s.Peer, s.Tag, s.Bytes, s.Flags = 3, o, 2, 8, trace.FlagWildcard }))
			p.call(r, with(rec(trace.OpWait), func(x *trace.Record) { x.Comm = trace.CommNone }),
				sub(trace.OpReqDone, func(s *trace.Record) { s.Req, s.Peer, s.Tag, s.Bytes = 4, o, 2, 8 }))
			p.call(r, with(rec(trace.OpWait), func(x *trace.Record) { x.Comm = trace.CommNone })) // MPI_REQUEST_NULL
			p.call(r, with(rec(trace.OpIrecv), func(x *trace.Record) { x.Peer, x.Tag, x.Req, x.Flags = o, 4, 5, trace.FlagNewReq }))
			p.call(r, with(rec(trace.OpRequestFree), func(x *trace.Record) { x.Comm, x.Req = trace.CommNone, 5 }))
		}
		p.both(trace.OpFinalize, trace.CommNone, 0, nil)
		return p
	}},
	{"persistent", func() *prog {
		p := newProg(2)
		for r := 0; r < 2; r++ {
			o := int32(1 - r)
			p.call(r, with(rec(trace.OpSendInit), func(x *trace.Record) {
				x.Peer, x.Tag, x.Bytes, x.Req, x.Flags = o, 6, 512, 1, trace.FlagNewReq|trace.FlagPersistent
			}))
			p.call(r, with(rec(trace.OpRecvInit), func(x *trace.Record) {
				x.Peer, x.Tag, x.Bytes, x.Req, x.Flags = o, 6, 512, 2, trace.FlagNewReq|trace.FlagPersistent
			}))
			for i := 0; i < 2; i++ {
				p.call(r, with(rec(trace.OpStartall), func(x *trace.Record) { x.Comm = trace.CommNone }),
					sub(trace.OpReqStart, func(s *trace.Record) { s.Req = 1 }), sub(trace.OpReqStart, func(s *trace.Record) { s.Req = 2 }))
				p.call(r, with(rec(trace.OpWaitall), func(x *trace.Record) { x.Comm = trace.CommNone }),
					sub(trace.OpReqDone, func(s *trace.Record) { s.Req, s.Peer, s.Tag, s.Bytes, s.Flags = 1, o, 6, 512, trace.FlagPersistent }),
					sub(trace.OpReqDone, func(s *trace.Record) { s.Req, s.Peer, s.Tag, s.Bytes, s.Flags = 2, o, 6, 512, trace.FlagPersistent }))
			}
			p.call(r, with(rec(trace.OpStart), func(x *trace.Record) { x.Comm, x.Req = trace.CommNone, 1 }))
			p.call(r, with(rec(trace.OpStart), func(x *trace.Record) { x.Comm, x.Req = trace.CommNone, 2 }))
			p.call(r, with(rec(trace.OpWaitall), func(x *trace.Record) { x.Comm = trace.CommNone }),
				sub(trace.OpReqDone, func(s *trace.Record) { s.Req, s.Peer, s.Tag, s.Bytes, s.Flags = 1, o, 6, 512, trace.FlagPersistent }),
				sub(trace.OpReqDone, func(s *trace.Record) { s.Req, s.Peer, s.Tag, s.Bytes, s.Flags = 2, o, 6, 512, trace.FlagPersistent }))
			p.call(r, with(rec(trace.OpRequestFree), func(x *trace.Record) { x.Comm, x.Req = trace.CommNone, 1 }))
		}
		return p
	}},
	{"collectives and communicators", func() *prog {
		p := newProg(3)
		p.both(trace.OpInit, trace.CommNone, 0, nil)
		p.both(trace.OpBarrier, trace.CommWorld, 1, nil)
		p.both(trace.OpBcast, trace.CommWorld, 2, func(r int, x *trace.Record) { x.Root, x.Bytes = 1, 64 })
		p.both(trace.OpAllreduce, trace.CommWorld, 3, func(r int, x *trace.Record) { x.Bytes, x.Flags = 8, trace.FlagInPlace })
		p.both(trace.OpPcontrol, trace.CommNone, 0, func(r int, x *trace.Record) { x.Tag = 2 })
		// Ranks 0 and 2 split off: the communicator S0.1, index 2.
		for r := 0; r < 3; r++ {
			members := []int32{0, 2}
			if r == 1 {
				members = []int32{1}
			}
			var ms []trace.Record
			for _, m := range members {
				ms = append(ms, sub(trace.OpMember, func(s *trace.Record) { s.Peer = m }))
			}
			p.call(r, with(rec(trace.OpCommSplit), func(x *trace.Record) { x.Seq, x.Req, x.Root, x.Tag = 4, 2, members[0], 1 }), ms...)
		}
		for _, r := range []int{0, 2} {
			p.call(r, with(rec(trace.OpReduce), func(x *trace.Record) { x.Comm, x.Seq, x.Root, x.Bytes = 2, 1, 2, 16 }))
			p.call(r, with(rec(trace.OpIallreduce), func(x *trace.Record) { x.Comm, x.Seq, x.Bytes, x.Req, x.Flags = 2, 2, 8, 9, trace.FlagNewReq }))
			p.call(r, with(rec(trace.OpWait), func(x *trace.Record) { x.Comm = trace.CommNone }),
				sub(trace.OpReqDone, func(s *trace.Record) { s.Req = 9 }))
			p.call(r, with(rec(trace.OpCommFree), func(x *trace.Record) { x.Comm = 2 }))
		}
		p.both(trace.OpIbarrier, trace.CommWorld, 5, func(r int, x *trace.Record) { x.Req, x.Flags = 10, trace.FlagNewReq })
		for r := 0; r < 3; r++ {
			p.call(r, with(rec(trace.OpTest), func(x *trace.Record) { x.Comm = trace.CommNone }),
				sub(trace.OpReqDone, func(s *trace.Record) { s.Req = 10 }))
		}
		p.both(trace.OpFinalize, trace.CommNone, 0, nil)
		return p
	}},
	{"probes, files, generalized requests", func() *prog {
		p := newProg(2)
		p.call(0, with(rec(trace.OpSend), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes = 1, 3, 24 }))
		p.call(0, with(rec(trace.OpSend), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes = 1, 4, 24 }))
		p.call(1, with(rec(trace.OpIprobe), func(x *trace.Record) { x.Peer, x.Tag, x.Root = 0, 3, 5 }))
		p.call(1, with(rec(trace.OpIprobe), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes = 0, 3, 24 }))
		p.call(1, with(rec(trace.OpMprobe), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes, x.Seq = 0, 3, 24, 7 }))
		p.call(1, with(rec(trace.OpMrecv), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes, x.Seq = 0, 3, 24, 7 }))
		p.call(1, with(rec(trace.OpImprobe), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes, x.Seq = 0, 4, 24, 8 }))
		p.call(1, with(rec(trace.OpImrecv), func(x *trace.Record) {
			x.Peer, x.Tag, x.Bytes, x.Seq, x.Req, x.Flags = 0, 4, 24, 8, 11, trace.FlagNewReq
		}))
		p.call(1, with(rec(trace.OpWait), func(x *trace.Record) { x.Comm = trace.CommNone }),
			sub(trace.OpReqDone, func(s *trace.Record) { s.Req, s.Peer, s.Tag, s.Bytes = 11, 0, 4, 24 }))
		p.both(trace.OpFileOpen, trace.CommWorld, 1, func(r int, x *trace.Record) { x.Tag = 1 })
		for r := 0; r < 2; r++ {
			p.call(r, with(rec(trace.OpFileWriteAt), func(x *trace.Record) { x.Tag, x.Bytes = 1, 4096 }))
			p.call(r, with(rec(trace.OpFileIread), func(x *trace.Record) { x.Tag, x.Bytes, x.Req, x.Flags = 1, 512, 20, trace.FlagNewReq }))
			p.call(r, with(rec(trace.OpWait), func(x *trace.Record) { x.Comm = trace.CommNone }),
				sub(trace.OpReqDone, func(s *trace.Record) { s.Req = 20 }))
			p.call(r, with(rec(trace.OpGrequestStart), func(x *trace.Record) { x.Comm, x.Req, x.Flags = trace.CommNone, 21, trace.FlagNewReq }))
			p.call(r, with(rec(trace.OpGrequestComplete), func(x *trace.Record) { x.Comm, x.Req, x.Thread = trace.CommNone, 21, 1 }))
			p.call(r, with(rec(trace.OpWait), func(x *trace.Record) { x.Comm = trace.CommNone }),
				sub(trace.OpReqDone, func(s *trace.Record) { s.Req = 21 }))
		}
		p.both(trace.OpFileClose, trace.CommWorld, 2, func(r int, x *trace.Record) { x.Tag = 1 })
		return p
	}},
	{"one-sided", func() *prog {
		p := newProg(2)
		p.both(trace.OpWinCreate, trace.CommWorld, 1, func(r int, x *trace.Record) { x.Tag, x.Bytes = 1, 1024 })
		p.both(trace.OpWinFence, trace.CommWorld, 2, func(r int, x *trace.Record) { x.Tag = 1 })
		p.call(0, with(rec(trace.OpPut), func(x *trace.Record) { x.Tag, x.Peer, x.Bytes = 1, 1, 64 }))
		p.call(0, with(rec(trace.OpGet), func(x *trace.Record) { x.Tag, x.Peer, x.Bytes = 1, 1, 32 }))
		p.call(0, with(rec(trace.OpAccumulate), func(x *trace.Record) { x.Tag, x.Peer, x.Bytes = 1, 1, 16 }))
		p.both(trace.OpWinFence, trace.CommWorld, 3, func(r int, x *trace.Record) { x.Tag = 1 })
		p.call(0, with(rec(trace.OpWinLock), func(x *trace.Record) { x.Tag, x.Peer = 1, 1 }))
		p.call(0, with(rec(trace.OpRput), func(x *trace.Record) { x.Tag, x.Peer, x.Bytes, x.Req, x.Flags = 1, 1, 8, 30, trace.FlagNewReq }))
		p.call(0, with(rec(trace.OpWait), func(x *trace.Record) { x.Comm = trace.CommNone }),
			sub(trace.OpReqDone, func(s *trace.Record) { s.Req = 30 }))
		p.call(0, with(rec(trace.OpWinUnlock), func(x *trace.Record) { x.Tag, x.Peer = 1, 1 }))
		p.call(1, with(rec(trace.OpWinPost), func(x *trace.Record) { x.Tag = 1 }), sub(trace.OpWinGroupMember, func(s *trace.Record) { s.Peer = 0 }))
		p.call(0, with(rec(trace.OpWinStart), func(x *trace.Record) { x.Tag = 1 }), sub(trace.OpWinGroupMember, func(s *trace.Record) { s.Peer = 1 }))
		p.call(0, with(rec(trace.OpPut), func(x *trace.Record) { x.Tag, x.Peer, x.Bytes = 1, 1, 64 }))
		p.call(0, with(rec(trace.OpWinComplete), func(x *trace.Record) { x.Tag = 1 }))
		p.call(1, with(rec(trace.OpWinTest), func(x *trace.Record) { x.Tag, x.Root = 1, 2 }))
		p.call(1, with(rec(trace.OpWinWait), func(x *trace.Record) { x.Tag = 1 }))
		p.both(trace.OpWinFree, trace.CommWorld, 4, func(r int, x *trace.Record) { x.Tag = 1 })
		return p
	}},
	{"partitioned", func() *prog {
		p := newProg(2)
		p.call(0, with(rec(trace.OpPsendInit), func(x *trace.Record) {
			x.Peer, x.Tag, x.Bytes, x.Root, x.Req, x.Flags = 1, 5, 4096, 4, 40, trace.FlagNewReq|trace.FlagPersistent
		}))
		p.call(1, with(rec(trace.OpPrecvInit), func(x *trace.Record) {
			x.Peer, x.Tag, x.Bytes, x.Root, x.Req, x.Flags = 0, 5, 4096, 4, 41, trace.FlagNewReq|trace.FlagPersistent
		}))
		p.call(0, with(rec(trace.OpStart), func(x *trace.Record) { x.Comm, x.Req = trace.CommNone, 40 }))
		p.call(1, with(rec(trace.OpStart), func(x *trace.Record) { x.Comm, x.Req = trace.CommNone, 41 }))
		p.call(0, with(rec(trace.OpPready), func(x *trace.Record) { x.Peer, x.Req, x.Tag, x.Bytes = 1, 40, 0, 0 }))
		p.call(0, with(rec(trace.OpPreadyRange), func(x *trace.Record) { x.Peer, x.Req, x.Tag, x.Bytes = 1, 40, 1, 2 }))
		p.call(0, with(rec(trace.OpPreadyList), func(x *trace.Record) { x.Peer, x.Req, x.Tag = 1, 40, 1 }),
			sub(trace.OpPartition, func(s *trace.Record) { s.Tag = 3 }))
		p.call(1, with(rec(trace.OpParrived), func(x *trace.Record) { x.Peer, x.Req, x.Tag, x.Root = 0, 41, 0, 2 }))
		p.call(1, with(rec(trace.OpParrived), func(x *trace.Record) { x.Peer, x.Req, x.Tag, x.Bytes = 0, 41, 0, 1 }))
		p.call(0, with(rec(trace.OpWait), func(x *trace.Record) { x.Comm = trace.CommNone }),
			sub(trace.OpReqDone, func(s *trace.Record) { s.Req, s.Flags = 40, trace.FlagPersistent }))
		p.call(1, with(rec(trace.OpWait), func(x *trace.Record) { x.Comm = trace.CommNone }),
			sub(trace.OpReqDone, func(s *trace.Record) { s.Req, s.Peer, s.Tag, s.Bytes, s.Flags = 41, 0, 5, 4096, trace.FlagPersistent }))
		return p
	}},
	{"threads", func() *prog {
		p := newProg(2)
		for r := 0; r < 2; r++ {
			o := int32(1 - r)
			for th := uint16(0); th < 2; th++ {
				p.call(r, with(rec(trace.OpSend), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes, x.Thread = o, int32(th), 8, th }))
				p.call(r, with(rec(trace.OpRecv), func(x *trace.Record) { x.Peer, x.Tag, x.Bytes, x.Thread = o, int32(th), 8, th }))
			}
		}
		return p
	}},
}

// TestRecordRoundTrip exports each synthetic run and reads it back: the
// same records, rank by rank, but for what an archive renames (times
// from the timer's offset, communicators by their names, call sites).
func TestRecordRoundTrip(t *testing.T) {
	for _, tc := range runs {
		t.Run(tc.name, func(t *testing.T) {
			logs, out := t.TempDir(), filepath.Join(t.TempDir(), "otf2")
			tc.make().write(t, logs)
			run, err := graph.Load(logs)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Export(out, ExportInput{Run: run}); err != nil {
				t.Fatal(err)
			}
			a, err := Open(filepath.Join(out, "traces.otf2"))
			if err != nil {
				t.Fatal(err)
			}
			for r := range run.Files {
				want := readAll(t, must(run.OpenRank(r)))
				got := readAll(t, must(a.OpenRank(r)))
				w, g := want.lines(), got.lines()
				if strings.Join(w, "\n") != strings.Join(g, "\n") {
					t.Errorf("rank %d: the archive's records differ:\n%s", r, diffLines(w, g))
				}
			}
		})
	}
}

func must[T any](x T, err error) T {
	if err != nil {
		panic(err)
	}
	return x
}

// rankRecs is a rank's records as read, with its communicator table.
type rankRecs struct {
	recs  []trace.Record
	comms []trace.Comm
}

func readAll(t *testing.T, rd graph.RankReader) rankRecs {
	t.Helper()
	defer rd.Close()
	var out rankRecs
	cb := trace.NewCommBuilder(rd.Header())
	for {
		recs, err := rd.Batch()
		for i := range recs {
			cb.Add(&recs[i])
		}
		out.recs = append(out.recs, recs...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	out.comms = cb.Comms()
	return out
}

// lines is one line per record, the times since the rank's first call,
// communicators by name.
func (rr rankRecs) lines() []string {
	name := func(c uint32) string {
		if int(c) < len(rr.comms) {
			return rr.comms[c].Name
		}
		return fmt.Sprint(c)
	}
	var out []string
	t0 := rr.recs[0].Start
	for _, x := range rr.recs {
		if x.Op.IsSub() {
			out = append(out, fmt.Sprintf("  %s peer=%d tag=%d bytes=%d flags=%#x req=%d seq=%d root=%d",
				x.Op, x.Peer, x.Tag, x.Bytes, x.Flags, x.Req, x.Seq, x.Root))
			continue
		}
		req := fmt.Sprint(x.Req)
		if x.Op.Class() == trace.ClassCommCreate && !x.Op.IsNonblockingCommCreate() {
			req = name(x.Req) // the new communicator, by name
		}
		out = append(out, fmt.Sprintf("%s t=%d+%d th=%d comm=%s peer=%d tag=%d bytes=%d flags=%#x count=%d seq=%d req=%s root=%d",
			x.Op, x.Start-t0, x.End-x.Start, x.Thread, name(x.Comm), x.Peer, x.Tag, x.Bytes, x.Flags, x.Count, x.Seq, req, x.Root))
	}
	return out
}

func diffLines(want, got []string) string {
	var b strings.Builder
	for i := 0; i < max(len(want), len(got)); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			fmt.Fprintf(&b, "  log:     %s\n  archive: %s\n", w, g)
		}
	}
	return b.String()
}

var update = flag.Bool("update", false, "rewrite the golden files")

// TestExportGolden holds what otf2-print reads of an export (its events
// and definitions) to a golden file (-update rewrites it): the archive
// cpath writes, event for event and id for id, whatever the order in
// which its ranks were written.
func TestExportGolden(t *testing.T) {
	tool, err := exec.LookPath("otf2-print")
	if err != nil {
		t.Skip("otf2-print not found: install the Debian package otf2-tools (make deps) to run this test")
	}
	for _, name := range []string{"nonblocking and polls", "collectives and communicators", "one-sided"} {
		t.Run(name, func(t *testing.T) {
			var p *prog
			for _, r := range runs {
				if r.name == name {
					p = r.make()
				}
			}
			logs, out := t.TempDir(), filepath.Join(t.TempDir(), "otf2")
			p.write(t, logs)
			run, err := graph.Load(logs)
			if err != nil {
				t.Fatal(err)
			}
			marks := make([]uint8, 64)
			for i := range marks {
				marks[i] = uint8(i % 4) // some calls and stretches marked, by design
			}
			rs := []int32{0}
			for _, recs := range p.ranks {
				n := int32(0)
				for _, x := range recs {
					if !x.Op.IsSub() {
						n++
					}
				}
				rs = append(rs, rs[len(rs)-1]+n)
			}
			if _, err := Export(out, ExportInput{Run: run, RankStart: rs, Marks: marks}); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, args := range [][]string{{"-G"}, {}} {
				cmd := exec.Command(tool, append(args, filepath.Join(out, "traces.otf2"))...)
				var o, e bytes.Buffer
				cmd.Stdout, cmd.Stderr = &o, &e
				if err := cmd.Run(); err != nil || e.Len() > 0 {
					t.Fatalf("otf2-print %v: %v\n%s", args, err, e.String())
				}
				b.WriteString(o.String())
			}
			golden := filepath.Join("testdata", "export", strings.ReplaceAll(name, " ", "-")+".otf2-print")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -run TestExportGolden -update writes it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("otf2-print of the export differs from %s (-update rewrites it):\n%s", golden,
					diffLines(strings.Split(string(want), "\n"), strings.Split(b.String(), "\n")))
			}
		})
	}
}
