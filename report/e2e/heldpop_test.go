//go:build mpi

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// heldpop.c's arguments: rounds, and each rank's computation a round.
const (
	heldPopN = 6
	heldPopC = 100 * time.Millisecond
)

// TestHeldSendPOP runs heldpop.c, whose sends MPI may hold until the
// receiver enters MPI, and checks POP's split of communication efficiency
// against its design (POP's ideal network delivers a message as soon as it
// is sent): a send held only by its receiver's progress (receive posted
// early, or a message small enough to go eagerly) is transfer loss, not
// serialisation; a rendezvous whose receive was posted late waited for
// the receive, a dependency the ideal run keeps.
func TestHeldSendPOP(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	exe := mpitest.Compile(t, t.TempDir(), "mpicc", "heldpop.c", "-Wall")
	bin := cpathBin(t)
	t.Setenv("OMPI_MCA_hwloc_base_binding_policy", "none")
	for _, c := range []struct {
		post, send string
		bytes      int
		// held: the design needs the sends held (the gate measures it in
		// the logs; a small late send may go eagerly or not, by the MPI's
		// buffers: either way nothing waits in the ideal run); minSer,
		// maxSer bound serialisation, maxTr transfer.
		held                  bool
		minSer, maxSer, maxTr float64
	}{
		{"early", "send", 1 << 20, true, 0.95, 1, 0.6},
		{"early", "ssend", 1 << 10, true, 0.95, 1, 0.6},
		{"late", "send", 1 << 10, false, 0.95, 1, 1},
		{"late", "send", 1 << 20, true, 0, 0.6, 1},
		{"late", "ssend", 1 << 10, true, 0, 0.6, 1},
	} {
		t.Run(fmt.Sprintf("%s/%s/%d", c.post, c.send, c.bytes), func(t *testing.T) {
			var gate []string
			var logDir string
			for i := 1; i <= attempts; i++ {
				logDir = filepath.Join(t.TempDir(), fmt.Sprintf("logs%d", i))
				out := mpitest.RunEnv(t, 2, nil, lib, logDir, filepath.Dir(exe), exe,
					c.post, c.send, fmt.Sprint(heldPopN), us(heldPopC), fmt.Sprint(c.bytes))
				gate = heldPopGate(timelines(mpitest.ReadLogs(t, logDir, 2)), c.post == "early", c.held)
				if len(gate) == 0 {
					break
				}
				t.Logf("attempt %d did not follow the design (load average %s):\n  %s\n%s", i, mpitest.LoadAverage(), strings.Join(gate, "\n  "), out)
			}
			if len(gate) > 0 {
				designMissed(t, "the machine did not run heldpop.c as designed (load average %s), so POP was not compared:\n  %s",
					mpitest.LoadAverage(), strings.Join(gate, "\n  "))
			}
			for _, a := range []analyzer{{"dag", 0}, {"dag", 2}} {
				t.Run(a.String(), func(t *testing.T) {
					rep := analyze(t, bin, logDir, a)
					if rep.POP == nil {
						t.Fatal("no POP factors in the report")
					}
					ser, tr := rep.POP.SerialisationEfficiency, rep.POP.TransferEfficiency
					t.Logf("serialisation %.3f, transfer %.3f, communication %.3f", ser, tr, rep.POP.CommunicationEfficiency)
					if ser < c.minSer || ser > c.maxSer {
						t.Errorf("serialisation efficiency %.3f, designed within [%.2f, %.2f]", ser, c.minSer, c.maxSer)
					}
					if tr > c.maxTr {
						t.Errorf("transfer efficiency %.3f, designed at most %.2f", tr, c.maxTr)
					}
				})
			}
		})
	}
}

// heldPopGate checks a run's logs against heldpop.c's design: every round
// rank 0's send started after an early receive was posted, or before a
// late one; a send the design needs held blocked for most of the
// receiver's computation.
func heldPopGate(tl [][]call, early, held bool) []string {
	var sends, posts []call
	for _, c := range tl[0] {
		if c.Op == trace.OpSend || c.Op == trace.OpSsend {
			sends = append(sends, c)
		}
	}
	for _, c := range tl[1] {
		if c.Op == trace.OpIrecv {
			posts = append(posts, c)
		}
	}
	if len(sends) != heldPopN || len(posts) != heldPopN {
		return []string{fmt.Sprintf("%d sends and %d receives in the logs, designed %d", len(sends), len(posts), heldPopN)}
	}
	var bad []string
	for i, s := range sends {
		if early != (posts[i].Start < s.Start) {
			bad = append(bad, fmt.Sprintf("round %d: the receive was posted %v after the send started, designed %s",
				i, time.Duration(posts[i].Start-s.Start), map[bool]string{true: "before", false: "after"}[early]))
		}
		if blocked := time.Duration(s.End - s.Start); held && blocked < heldPopC*3/4 {
			bad = append(bad, fmt.Sprintf("round %d: the send blocked %v, designed held for the receiver's %v", i, blocked, heldPopC))
		}
	}
	return bad
}
