//go:build mpi

package e2e

import (
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// TestPauseCompletions: completions made while logging is paused are not
// recorded, yet a request created after the pause must be completed in the
// log by its own Wait, not matched to a request from before the pause.
func TestPauseCompletions(t *testing.T) {
	mpitest.OpenMPI.NeedTools(t)
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "pausereq.c")
	logs, _ := runLogged(t, 2, exe)
	// Not the generic check: it wants every logged request completed in the
	// log, and the first two requests here complete inside the pause.
	checkHeaders(t, logs, 2, "pausereq")
	for rank, l := range logs {
		created := map[uint32]int32{} // request id -> tag
		var done []uint32
		for _, r := range l.Records {
			if r.Flags&trace.FlagNewReq != 0 {
				created[r.Req] = r.Tag
			}
			if r.Op == trace.OpReqDone {
				done = append(done, r.Req)
			}
		}
		// Logged after the pause: the tag-2 message and the second idup.
		if len(done) != 2 {
			t.Fatalf("rank %d: %d completions logged, want 2 (the ones after the pause)", rank, len(done))
		}
		if tag, ok := created[done[0]]; !ok || tag != 2 {
			t.Errorf("rank %d: the first completion after the pause is request %d (tag %d), want the tag-2 message", rank, done[0], tag)
		}
		if done[1] != done[0]+1 {
			t.Errorf("rank %d: the second completion is request %d, want %d (the second idup)", rank, done[1], done[0]+1)
		}
	}
}
