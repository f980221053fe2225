//go:build mpi

package e2e

import (
	"os"
	"strconv"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// TestManyCalls: a log that spans several windows of the logger's mapped
// file and many calibration points and checks reads back whole: every call,
// in order, with times that never go backwards, the file cut to its data.
func TestManyCalls(t *testing.T) {
	const np, n = 2, 1_200_000 // 2.4M calls a rank, ~14 MiB of log
	mpitest.OpenMPI.NeedTools(t)
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "many.c")
	logs, _ := runLogged(t, np, exe, strconv.Itoa(n))
	for rank, l := range logs {
		if !l.Complete() {
			t.Fatalf("rank %d: not complete: %v %v", rank, l.Trailer.Status, l.Damage)
		}
		var sends, recvs int
		var prevEnd int64
		for i, r := range l.Records {
			switch r.Op {
			case trace.OpSend:
				if int(r.Tag) != sends&7 || r.Bytes != 8 || r.Peer != int32(rank) {
					t.Fatalf("rank %d: record %d: send %d has tag %d bytes %d peer %d", rank, i, sends, r.Tag, r.Bytes, r.Peer)
				}
				sends++
			case trace.OpRecv:
				recvs++
			}
			if r.Op.IsSub() {
				continue
			}
			if r.Start < prevEnd {
				t.Fatalf("rank %d: record %d (%v) starts %d ns before the previous call ends", rank, i, r.Op, prevEnd-r.Start)
			}
			prevEnd = r.End
		}
		if sends != n || recvs != n || l.Trailer.Records != uint64(len(l.Records)) {
			t.Errorf("rank %d: %d sends, %d receives (want %d each); trailer counts %d records, log holds %d",
				rank, sends, recvs, n, l.Trailer.Records, len(l.Records))
		}
		fi, err := os.Stat(l.Path)
		if err != nil {
			t.Fatal(err)
		}
		perCall := float64(fi.Size()) / float64(2*n+3)
		t.Logf("rank %d: %d records, %d bytes, %.2f B/call", rank, len(l.Records), fi.Size(), perCall)
		if perCall > 12 {
			t.Errorf("rank %d: %.2f bytes per call on disk, want <= 12", rank, perCall)
		}
	}
}
