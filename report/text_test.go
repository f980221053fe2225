package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestTextImbalancedCalls: the collective calls table lists the calls
// members waited in, most waiting first, and never one without a wait (for
// a rooted one, a wait by its data flow); a run whose collectives all
// balanced says so in one line.
func TestTextImbalancedCalls(t *testing.T) {
	balanced := Collective{Op: "MPI_Bcast", Comm: "W0.0", Seq: 1, Members: 4, ExecutionNs: 1000}
	small := Collective{Op: "MPI_Allreduce", Comm: "W0.0", Seq: 2, Members: 4, WaitBeforeNs: 2000, Imbalance: 0.2, LastRank: 1, Synchronising: true}
	big := Collective{Op: "MPI_Barrier", Comm: "W0.0", Seq: 3, Members: 4, WaitBeforeNs: 5000, WaitAfterNs: 1000, Imbalance: 0.5, LastRank: 3, Synchronising: true}
	lateLeaf := Collective{Op: "MPI_Reduce", Comm: "W0.0", Seq: 4, Members: 4, WaitBeforeNs: 9000, LastRank: 2} // no member needed the late one
	lateRoot := Collective{Op: "MPI_Gather", Comm: "W0.0", Seq: 5, Members: 4, WaitBeforeNs: 3000, LastRank: 0, BoundedImbalance: 0.4}
	for _, tc := range []struct {
		name  string
		calls []Collective
		want  []string // lines (trimmed prefixes) in order
		not   []string
	}{
		{"ranked, balanced left out", []Collective{balanced, small, big},
			[]string{"Most imbalanced collective calls (waits summed over members):", "operation", "MPI_Barrier", "MPI_Allreduce"},
			[]string{"MPI_Bcast"}},
		{"rooted: by their data flow", []Collective{lateLeaf, lateRoot, small},
			[]string{"Most imbalanced collective calls (waits summed over members):", "operation", "MPI_Gather", "MPI_Allreduce"},
			[]string{"MPI_Reduce"}},
		{"all balanced", []Collective{balanced},
			[]string{"Most imbalanced collective calls: none (no member waited in any of the run's 1)"},
			[]string{"MPI_Bcast", "operation  comm"}},
		{"no collectives", nil, nil, []string{"Most imbalanced"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			WriteText(&b, &Report{Calls: tc.calls}, 10)
			text := b.String()
			at := 0
			for _, w := range tc.want {
				i := strings.Index(text[at:], "\n"+w)
				if i < 0 {
					t.Fatalf("no line %q after offset %d in:\n%s", w, at, text)
				}
				at += i + 1
			}
			for _, n := range tc.not {
				if strings.Contains(text, n) {
					t.Errorf("%q in:\n%s", n, text)
				}
			}
		})
	}
}

// TestCommLegend: the legend under the communicators table names the
// letters of the communicators listed, once each, in order.
func TestCommLegend(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"W0.0"}, "letters: W MPI_COMM_WORLD"},
		{[]string{"k0.20", "W0.0", "D0.6", "D1.2", "dW0.0.7"}, "letters: D MPI_Comm_dup, W MPI_COMM_WORLD, d MPI_Comm_idup, k MPI_Cart_sub"},
		{[]string{"A0.1", "s3.0"}, "letters: A MPI_Comm_accept or MPI_Comm_connect, s MPI_COMM_SELF"},
	} {
		var cs []Communicator
		for _, n := range tc.names {
			cs = append(cs, Communicator{Name: n})
		}
		got := commLegend(cs)
		if last := got[strings.LastIndex(got, "\n")+1:]; last != tc.want {
			t.Errorf("legend of %v ends %q, want %q", tc.names, last, tc.want)
		}
	}
}
