//go:build mpi

package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/imbalance"
	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

// TestPartitioned runs testdata/partitioned.c (see there) under MPICH
// (Open MPI 4.1 lacks partitioned communication): exact call counts, the
// requests' envelopes (peers as world ranks, bytes, partition counts),
// MPI_Pready_list's partitions; the analysis: every transfer matched by
// order of initialisation (each receive paired with the send of its
// size), the partitions' completions (by MPI_Parrived or the Wait), the
// designed late MPI_Pready's Late Sender on the MPI_Wait that needed it,
// the same wait states at 1 and 2 analyzer ranks, and the critical path
// through the late MPI_Pready.
func TestPartitioned(t *testing.T) {
	testPartitioned(t, mpitest.MPICH.CC(t), "partitioned.c", "-Wall")
}

// testPartitioned runs src (partitioned.c, or its Fortran twin
// fpartitioned.f90) compiled with compiler under MPICH and checks it.
func testPartitioned(t *testing.T, compiler, src string, flags ...string) {
	const np, iters, lateIter, lateMs = 3, 3, 1, 80
	m := mpitest.MPICH
	lib := m.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), compiler, src, flags...)
	var logDir, out string
	var logs []*trace.Log
	missed := retryDesign(t, func() string {
		logDir = filepath.Join(t.TempDir(), "logs")
		out = m.Run(t, np, lib, logDir, filepath.Dir(exe), exe)
		logs = mpitest.ReadLogs(t, logDir, np)
		return partitionedGate(t, logs, logDir, lateIter, lateMs)
	})
	checkCallSites(t, logs)
	mm := regexp.MustCompile(`parrived calls (\d+)`).FindStringSubmatch(out)
	if mm == nil {
		t.Fatalf("no \"parrived calls\" line in the output:\n%s", out)
	}
	parrived, _ := strconv.Atoi(mm[1])

	// The communicator rev (by MPI_Comm_split), in each rank's table.
	rev := make([]uint32, np)
	calls := make([]map[trace.Op]int, np)
	records := make([]map[trace.Op]int, np) // records, where calls counts coalesced calls
	type envelope struct {
		op               trace.Op
		comm             uint32
		peer, tag, parts int32
		bytes            uint64
	}
	var inits [np][]envelope
	var lists [][]int32 // rank 0's MPI_Pready_list partitions
	var lateReady int32 = -1
	readies3 := 0
	for r, l := range logs {
		if !l.Complete() {
			t.Fatalf("rank %d's log is not complete", r)
		}
		calls[r] = map[trace.Op]int{}
		records[r] = map[trace.Op]int{}
		call := -1 // index among the rank's calls (the PAG numbers them so)
		for i := range l.Records {
			rec := &l.Records[i]
			if rec.Op.IsSub() {
				continue
			}
			call++
			calls[r][rec.Op] += int(rec.Polls()) // a coalesced run of unproductive MPI_Parrived is that many calls
			records[r][rec.Op]++
			switch rec.Op {
			case trace.OpCommSplit:
				rev[r] = rec.Req
			case trace.OpPsendInit, trace.OpPrecvInit:
				inits[r] = append(inits[r], envelope{rec.Op, rec.Comm, rec.Peer, rec.Tag, rec.Root, rec.Bytes})
			case trace.OpPreadyList:
				var ps []int32
				for k := 1; k <= int(rec.Count) && i+k < len(l.Records); k++ {
					if s := &l.Records[i+k]; s.Op == trace.OpPartition {
						ps = append(ps, s.Tag)
					}
				}
				lists = append(lists, ps)
			case trace.OpPready:
				if r == 0 && rec.Tag == 3 {
					if readies3 == lateIter {
						lateReady = int32(call)
					}
					readies3++
				}
			}
		}
	}
	want := []map[trace.Op]int{
		{trace.OpPsendInit: 2, trace.OpStart: 2 * iters, trace.OpPreadyRange: iters, trace.OpPready: 2 * iters,
			trace.OpPreadyList: iters, trace.OpWait: 2 * iters, trace.OpBarrier: 2, trace.OpRequestFree: 2},
		{trace.OpPrecvInit: 2, trace.OpStart: 2*iters + 1, trace.OpParrived: parrived, trace.OpWait: 2*iters + 1,
			trace.OpPsendInit: 1, trace.OpPready: 1, trace.OpBarrier: 2, trace.OpRequestFree: 3},
		{trace.OpPrecvInit: 1, trace.OpStart: 1, trace.OpWait: 1, trace.OpBarrier: 2, trace.OpRequestFree: 1},
	}
	for r := range want {
		for op, n := range want[r] {
			if calls[r][op] != n {
				t.Errorf("rank %d: %d %s calls, want %d", r, calls[r][op], op, n)
			}
		}
		for _, op := range []trace.Op{trace.OpPsendInit, trace.OpPrecvInit, trace.OpPready, trace.OpPreadyRange,
			trace.OpPreadyList, trace.OpParrived} {
			if calls[r][op] != want[r][op] {
				t.Errorf("rank %d: %d %s calls, want %d", r, calls[r][op], op, want[r][op])
			}
		}
	}
	if parrived < 2 {
		t.Errorf("rank 1 made %d MPI_Parrived calls; at least one per polled iteration (2) succeeds", parrived)
	}
	t.Logf("rank 1: %d MPI_Parrived calls in %d records", parrived, records[1][trace.OpParrived])
	// Rank 1's MPI_Parrived loop (2 polled iterations): per iteration at
	// most one record of its unproductive calls and the successful one,
	// however many calls it made.
	if n := records[1][trace.OpParrived]; n < 2 || n > 4 {
		t.Errorf("rank 1: %d MPI_Parrived records for %d calls, want 2 to 4 (per polled iteration: the unproductive calls coalesced, the successful one)", n, parrived)
	}
	for i := range logs[1].Records {
		rec := &logs[1].Records[i]
		if rec.Op != trace.OpParrived {
			continue
		}
		if un := rec.Unproductive(); un != (rec.Bytes == 0) || rec.Tag != 0 || un && (rec.Root < 1 || rec.Count != 0) || !un && rec.Root != none {
			t.Errorf("rank 1: MPI_Parrived record %+v: want partition 0, and flag 0 with root = calls >= 1, or flag 1 with root %d", rec, none)
		}
	}
	// Checked last: it ends the test.
	defer func() {
		if missed != "" {
			mpitest.DesignMissed(t, "the machine did not run %s as designed %s", src, missed)
		}
	}()
	w := trace.CommWorld
	wantInits := [np][]envelope{
		{{trace.OpPsendInit, w, 1, 7, 4, 128}, {trace.OpPsendInit, w, 1, 7, 2, 256}},
		{{trace.OpPrecvInit, w, 0, 7, 2, 128}, {trace.OpPrecvInit, w, 0, 7, 4, 256}, {trace.OpPsendInit, rev[1], 2, 9, 1, 80}},
		{{trace.OpPrecvInit, rev[2], 1, 9, 1, 80}},
	}
	if !reflect.DeepEqual(inits, wantInits) {
		t.Errorf("partitioned inits\n %v\nwant\n %v", inits, wantInits)
	}
	if fmt.Sprint(lists) != fmt.Sprint([][]int32{{2, 1}, {2, 1}, {2, 1}}) {
		t.Errorf("MPI_Pready_list partitions %v, want [2 1] in each of %d iterations", lists, iters)
	}

	// The analysis at one analyzer rank.
	p := buildPAG(t, logDir)
	const transfers = 2*iters + 1
	if p.Messages != transfers || p.Unmatched != 0 {
		t.Errorf("analysis: %d messages, %d unmatched; want %d transfers, 0", p.Messages, p.Unmatched, transfers)
	}
	// Matched by order of initialisation: each receive's completion
	// received what its send sent (start order would pair 128 B with
	// 256 B), between the right world ranks.
	recvBytes := map[int32]uint64{} // completion call -> bytes of the partitioned receive it completed
	for r, l := range logs {
		call := -1
		for i := range l.Records {
			rec := &l.Records[i]
			if !rec.Op.IsSub() {
				call++
				continue
			}
			if rec.Op == trace.OpReqDone && rec.Bytes > 0 {
				recvBytes[p.RankStart[r]+int32(call)] = rec.Bytes
			}
		}
	}
	pairs := map[string]int{}
	for k := range p.MsgSend {
		src, dst := p.Rank(p.MsgSend[k]), p.Rank(p.MsgRecv[k])
		if got := recvBytes[p.MsgRecv[k]]; got != p.MsgBytes[k] {
			t.Errorf("transfer %d (%d -> %d): send %d B, its receive %d B: matched wrongly", k, src, dst, p.MsgBytes[k], got)
		}
		pairs[fmt.Sprintf("%d->%d %dB", src, dst, p.MsgBytes[k])]++
	}
	if wantPairs := map[string]int{"0->1 128B": iters, "0->1 256B": iters, "1->2 80B": 1}; !reflect.DeepEqual(pairs, wantPairs) {
		t.Errorf("matched transfers %v, want %v", pairs, wantPairs)
	}
	// Partitions: receive partition j over all transfers: R1 (2
	// partitions) and R2 (4) each iteration, rev's one once; MPI_Parrived
	// saw R1's partition 0 in the iterations that polled.
	gotParts := fmt.Sprint(partsOf(p.PartitionWaits))
	if wantParts := fmt.Sprint([][3]int64{{0, 2*iters + 1, iters - 1}, {1, 2 * iters, 0}, {2, iters, 0}, {3, iters, 0}}); gotParts != wantParts {
		t.Errorf("partitions (index, transfers, by MPI_Parrived) %s, want %s", gotParts, wantParts)
	}

	// The designed wait: rank 1's MPI_Wait on R1 in the late iteration
	// waited for rank 0's late MPI_Pready(3), for receive partition 1.
	if lateReady < 0 {
		t.Fatal("rank 0 has no late MPI_Pready(3)")
	}
	late := p.RankStart[0] + lateReady
	var lw *graph.Wait
	for k := range p.Waits {
		if p.Waits[k].Cause == late {
			lw = &p.Waits[k]
		}
	}
	if lw == nil || p.Rank(lw.Call) != 1 || p.Op[lw.Call-p.CallLo] != trace.OpWait || lw.Kind != graph.LateSender ||
		!lw.Partitioned || lw.Partition != 1 {
		t.Fatalf("the late MPI_Pready's wait: %+v, want rank 1's MPI_Wait, a partitioned Late Sender for receive partition 1", lw)
	}
	if pw := p.PartitionWaits[1].LateSenderNs; pw < lw.Ns {
		t.Errorf("receive partition 1's Late Sender %d ns, less than the designed wait %d ns", pw, lw.Ns)
	}
	im := imbalance.Analyze(p)
	if ls := im.Waits.Partitioned[graph.LateSender]; ls < lw.Ns || ls > im.Waits.Ns[graph.LateSender] {
		t.Errorf("partitioned Late Sender %d ns: want between the designed wait %d and all Late Sender %d", ls, lw.Ns, im.Waits.Ns[graph.LateSender])
	}

	// The report at 1 and 2 analyzer ranks: the same wait states, and a
	// critical path that runs through the late MPI_Pready into the Wait.
	bin := mpitest.CPathBin(t)
	one := analyzeJSON(t, exec.Command(bin, "--json", "-", "--json-segments", logDir))
	mpirun := mpitest.OpenMPI.Mpirun(t)
	two := analyzeJSON(t, exec.Command(mpirun, append(mpitest.OpenMPI.JobArgs(2, nil), bin, "--json", "-", "--json-segments", logDir)...))
	if !reflect.DeepEqual(one.Waitstates, two.Waitstates) {
		t.Errorf("wait states differ at 1 and 2 analyzer ranks:\n%+v\n%+v", one.Waitstates, two.Waitstates)
	}
	ws := one.Waitstates
	if ws.PartitionedLateSenderNs != im.Waits.Partitioned[graph.LateSender] || ws.PartitionedLateReceiverNs != im.Waits.Partitioned[graph.LateReceiver] {
		t.Errorf("report: partitioned late sender %d, late receiver %d ns; the analysis says %d, %d", ws.PartitionedLateSenderNs,
			ws.PartitionedLateReceiverNs, im.Waits.Partitioned[graph.LateSender], im.Waits.Partitioned[graph.LateReceiver])
	}
	if len(ws.ByPartition) != 4 || ws.ByPartition[1].LateSenderNs != p.PartitionWaits[1].LateSenderNs {
		t.Errorf("report: by_partition %+v, want 4 partitions, partition 1's Late Sender %d ns", ws.ByPartition, p.PartitionWaits[1].LateSenderNs)
	}
	lateStart := p.Start[late-p.CallLo] - p.T0
	segs := one.CriticalPath.Segments
	through := false
	for k := 0; k+1 < len(segs); k++ {
		a, b := segs[k], segs[k+1]
		if a.Rank == 0 && a.Kind == "compute" && a.Op == "MPI_Pready" && a.EndNs == lateStart && a.EndNs-a.StartNs >= lateMs/2*1e6 &&
			b.Rank == 1 && b.Kind == "transfer" && b.Op == "MPI_Wait" && b.StartNs == lateStart {
			through = true
		}
	}
	if !through {
		t.Errorf("the critical path does not run through rank 0's computation before the late MPI_Pready (at %d ns) and its transfer to rank 1's MPI_Wait", lateStart)
	}
}

// partsOf lists partition waits as (partition, transfers, by MPI_Parrived).
func partsOf(ps []graph.PartitionWait) [][3]int64 {
	var out [][3]int64
	for _, w := range ps {
		out = append(out, [3]int64{int64(w.Partition), w.Transfers, w.Parrived})
	}
	return out
}

// analyzeJSON runs an analysis that prints the JSON report and decodes it.
func analyzeJSON(t *testing.T, cmd *exec.Cmd) *report.Report {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("%v: %v\n%s", cmd.Args, err, msg)
	}
	var r report.Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: not a JSON report: %v", cmd.Args, err)
	}
	return &r
}

// partitionedGate says how a run of partitioned.c strayed from its
// design, "" if it did not: rank 1 polled with MPI_Parrived while rank 0
// computed (an unproductive call), and waited about lateMs for rank 0's
// late MPI_Pready(3) of iteration lateIter.
func partitionedGate(t *testing.T, logs []*trace.Log, logDir string, lateIter int, lateMs int64) string {
	polled := false
	for i := range logs[1].Records {
		if rec := &logs[1].Records[i]; rec.Op == trace.OpParrived && rec.Unproductive() {
			polled = true
		}
	}
	if !polled {
		return "rank 1 made no unproductive MPI_Parrived call: it did not poll while rank 0 computed"
	}
	late, readies := int32(-1), 0
	call := int32(-1)
	for i := range logs[0].Records {
		rec := &logs[0].Records[i]
		if rec.Op.IsSub() {
			continue
		}
		call++
		if rec.Op == trace.OpPready && rec.Tag == 3 {
			if readies == lateIter {
				late = call
			}
			readies++
		}
	}
	p := buildPAG(t, logDir)
	for _, w := range p.Waits {
		if late >= 0 && w.Cause == p.RankStart[0]+late && w.Ns < lateMs/2*1e6 {
			return fmt.Sprintf("the late MPI_Pready was waited for %v ms, designed %d ms", float64(w.Ns)/1e6, lateMs)
		}
	}
	return ""
}
