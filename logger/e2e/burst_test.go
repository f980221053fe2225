//go:build mpi

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// TestBurstOfSharedHandles runs burst.c: thousands of sends that complete
// at once, to which Open MPI gives one shared handle, completed by one
// MPI_Waitall. Each of the Waitall's completions must name its own
// request, oldest first, as the sends were made: the logger keeps a
// handle's requests in a list it claims in order (one probe cluster of
// them made each deletion rehash the whole cluster: this run took 28 s).
func TestBurstOfSharedHandles(t *testing.T) {
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "burst.c")
	start := time.Now()
	logs, out := runLogged(t, 1, exe)
	t.Logf("logged run: %v; %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(out))
	var n, distinct int
	if _, err := fmt.Sscanf(out[strings.Index(out, "burst:"):], "burst: %d sends, %d distinct handles", &n, &distinct); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if distinct > n/2 {
		t.Logf("this MPI gave the sends %d distinct handles of %d: the shared handle is not exercised", distinct, n)
	}
	l := logs[0]
	var sends []uint32 // the sends' request ids, in order, since the last Waitall
	waits := 0
	for i := 0; i < len(l.Records); i++ {
		r := l.Records[i]
		switch r.Op {
		case trace.OpIsend:
			sends = append(sends, r.Req)
		case trace.OpWaitall:
			subs := l.Records[i+1 : i+1+int(r.Count)]
			if len(subs) != 2*n || len(sends) != n {
				t.Fatalf("Waitall %d: %d completions, %d sends before it; want %d and %d", waits, len(subs), len(sends), 2*n, n)
			}
			for k, id := range sends {
				if s := subs[k]; s.Op != trace.OpReqDone || s.Req != id {
					t.Fatalf("Waitall %d: completion %d is %v of request %d, want the send's request %d", waits, k, s.Op, s.Req, id)
				}
			}
			sends = sends[:0]
			waits++
			i += int(r.Count)
		}
	}
	if waits != 3 {
		t.Fatalf("%d Waitalls logged, want 3", waits)
	}
}
