//go:build mpi

package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// TestMatchedProbes runs testdata/mprobe.c (see there) under Open MPI and
// under MPICH, each with its own logger: exact call counts, the messages
// the probes matched (peers as world ranks, tags, bytes), each Mrecv and
// Imrecv linked to its probe by the message id, and the analysis: every
// message matched, the Late Sender at the probe that waited for it.
func TestMatchedProbes(t *testing.T) {
	for _, m := range mpitest.Impls {
		t.Run(m.Key, func(t *testing.T) { testMatchedProbes(t, m, m.CC(t), "mprobe.c", "-Wall") })
	}
}

// probeMsg is what a matched probe found.
type probeMsg struct {
	op             trace.Op
	comm           uint32
	peer, tag      int32
	bytes          uint64
	wildcard, self bool // posted with MPI_ANY_SOURCE; id expected 0 (MPI_MESSAGE_NO_PROC)
}

// testMatchedProbes runs src (mprobe.c, or its Fortran twin fmprobe.f90)
// compiled with compiler under m and checks it.
func testMatchedProbes(t *testing.T, m *mpitest.Impl, compiler, src string, flags ...string) {
	const np, lateMs = 3, 60
	lib := m.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), compiler, src, flags...)
	logDir := filepath.Join(t.TempDir(), "logs")
	out := m.Run(t, np, lib, logDir, filepath.Dir(exe), exe)
	logs := mpitest.ReadLogs(t, logDir, np)
	checkCallSites(t, logs)
	polls := func(what string) int {
		mm := regexp.MustCompile(what + ` polls (\d+)`).FindStringSubmatch(out)
		if mm == nil {
			t.Fatalf("no %q line in the output:\n%s", what+" polls", out)
		}
		n, _ := strconv.Atoi(mm[1])
		return n
	}
	improbePolls, iprobePolls := polls("improbe"), polls("iprobe")

	l := logs[0]
	if !l.Complete() {
		t.Fatalf("rank 0's log is not complete")
	}
	// The communicator rev: the one created by MPI_Comm_split.
	var rev uint32 = 0xFFFFFFFF
	for i := range l.Records {
		if r := &l.Records[i]; r.Op == trace.OpCommSplit {
			rev = r.Req
		}
	}
	calls := map[trace.Op]int{}
	unproductive := map[trace.Op]uint64{}
	var found []probeMsg
	var probeIDs []uint32
	type recvd struct {
		op    trace.Op
		id    uint32
		peer  int32
		tag   int32
		bytes uint64
		req   uint32
	}
	var recvs []recvd
	done := map[uint32]*trace.Record{} // ReqDone by request id
	for i := range l.Records {
		r := &l.Records[i]
		if r.Op == trace.OpReqDone {
			done[r.Req] = r
		}
		if r.Op.IsSub() {
			continue
		}
		if r.Unproductive() {
			unproductive[r.Op] += r.Polls()
			continue
		}
		calls[r.Op]++
		switch r.Op.Class() {
		case trace.ClassMprobe:
			found = append(found, probeMsg{r.Op, r.Comm, r.Peer, r.Tag, r.Bytes, r.Flags&trace.FlagWildcard != 0, r.Seq == 0})
			probeIDs = append(probeIDs, r.Seq)
		case trace.ClassMrecv:
			recvs = append(recvs, recvd{r.Op, r.Seq, r.Peer, r.Tag, r.Bytes, r.Req})
		}
	}
	want := map[trace.Op]int{trace.OpMprobe: 4, trace.OpImprobe: 1, trace.OpMrecv: 4, trace.OpImrecv: 1,
		trace.OpIprobe: 1, trace.OpRecv: 1, trace.OpWait: 1}
	for op, n := range want {
		if calls[op] != n {
			t.Errorf("rank 0: %d productive %s calls, want %d", calls[op], op, n)
		}
	}
	if unproductive[trace.OpImprobe] != uint64(improbePolls) || unproductive[trace.OpIprobe] != uint64(iprobePolls) {
		t.Errorf("rank 0: unproductive polls Improbe %d, Iprobe %d; the program counted %d, %d",
			unproductive[trace.OpImprobe], unproductive[trace.OpIprobe], improbePolls, iprobePolls)
	}
	wantFound := []probeMsg{
		{trace.OpMprobe, trace.CommWorld, 1, 5, 400, false, false},
		{trace.OpImprobe, trace.CommWorld, 1, 6, 80, true, false},
		{trace.OpMprobe, rev, 2, 7, 16, true, false}, // world rank 2 is rev's local 0
		{trace.OpMprobe, trace.CommWorld, trace.PeerProcNull, 3, 0, false, true},
		{trace.OpMprobe, trace.CommWorld, 2, 9, 8, false, false},
	}
	if fmt.Sprint(found) != fmt.Sprint(wantFound) {
		t.Errorf("rank 0's matched probes found\n %v\nwant\n %v", found, wantFound)
	}
	// Each receive names its probe's message, with the same envelope.
	if len(recvs) == len(found) {
		seen := map[uint32]bool{}
		for k, rv := range recvs {
			p := found[k]
			if rv.id != probeIDs[k] || rv.peer != p.peer || rv.tag != p.tag && !p.self || rv.bytes != p.bytes {
				t.Errorf("receive %d (%s): message %d from %d tag %d, %d B; its probe: message %d from %d tag %d, %d B",
					k, rv.op, rv.id, rv.peer, rv.tag, rv.bytes, probeIDs[k], p.peer, p.tag, p.bytes)
			}
			if rv.id != 0 && seen[rv.id] {
				t.Errorf("message id %d used twice", rv.id)
			}
			seen[rv.id] = true
			if rv.op == trace.OpImrecv {
				d := done[rv.req]
				if rv.req == 0 || d == nil || d.Peer != 1 || d.Tag != 6 || d.Bytes != 80 {
					t.Errorf("MPI_Imrecv's request %d: completion %+v, want from 1, tag 6, 80 B", rv.req, d)
				}
			}
		}
	} else {
		t.Errorf("rank 0: %d matched receives for %d matched probes", len(recvs), len(found))
	}

	// The analysis: 5 messages, all matched; the last probe waited for
	// rank 2's computation (lateMs) as a Late Sender.
	p := buildPAG(t, logDir)
	if p.Messages != 5 || p.Unmatched != 0 {
		t.Errorf("analysis: %d messages, %d unmatched; want 5, 0", p.Messages, p.Unmatched)
	}
	last := int32(-1)
	for c := p.CallLo; c < p.CallHi; c++ {
		if p.Rank(c) == 0 && p.Op[c-p.CallLo] == trace.OpMprobe {
			last = c
		}
	}
	var w *graph.Wait
	for k := range p.Waits {
		if p.Waits[k].Call == last {
			w = &p.Waits[k]
		}
	}
	if w == nil || w.Kind != graph.LateSender || p.Rank(w.Cause) != 2 || w.Ns < lateMs/2*1e6 {
		t.Errorf("rank 0's last MPI_Mprobe: wait %+v, want a Late Sender on rank 2 of about %d ms", w, lateMs)
	}
}
