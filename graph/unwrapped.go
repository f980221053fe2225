package graph

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cpath/cpath/trace"
)

// UnwrappedCalls is one MPI function that blocks, synchronises or
// communicates but that the logger does not record, over a run's ranks
// (from each log's trace.Header.Unwrapped): its time is in the logs as
// computation, and the graph lacks whatever it waited for.
type UnwrappedCalls struct {
	Name      string   `json:"name"`       // "MPI_Comm_set_info"
	Calls     uint64   `json:"calls"`      // over all ranks
	Ns        int64    `json:"ns"`         // time inside them, over all ranks
	Ranks     []int    `json:"ranks"`      // the ranks that made them, ascending
	RankCalls []uint64 `json:"rank_calls"` // their calls, by rank of Ranks
	RankNs    []int64  `json:"rank_ns"`    // their time, by rank of Ranks
}

// MergeUnwrapped gathers the ranks' counts (byRank[r]: rank r's), the
// functions with the most calls first, then by name.
func MergeUnwrapped(byRank [][]trace.UnwrappedCall) []UnwrappedCalls {
	var out []UnwrappedCalls
	at := map[string]int{}
	for r, calls := range byRank {
		for _, c := range calls {
			i, ok := at[c.Name]
			if !ok {
				i = len(out)
				at[c.Name] = i
				out = append(out, UnwrappedCalls{Name: c.Name})
			}
			u := &out[i]
			u.Calls += c.Calls
			u.Ns += c.Ns
			if n := len(u.Ranks); n > 0 && u.Ranks[n-1] == r { // a rank that named it twice
				u.RankCalls[n-1] += c.Calls
				u.RankNs[n-1] += c.Ns
				continue
			}
			u.Ranks = append(u.Ranks, r)
			u.RankCalls = append(u.RankCalls, c.Calls)
			u.RankNs = append(u.RankNs, c.Ns)
		}
	}
	slices.SortFunc(out, func(a, b UnwrappedCalls) int {
		if a.Calls != b.Calls {
			if a.Calls > b.Calls {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// UnwrappedNote says which calls were not recorded: "unwrapped MPI calls
// (not recorded; their time counts as computation): MPI_X ×N on ranks 0-3
// (1.2ms), …", "" for none.
func UnwrappedNote(us []UnwrappedCalls) string {
	if len(us) == 0 {
		return ""
	}
	return listNote("unwrapped MPI calls (not recorded; their time counts as computation): ", len(us), func(i int) string {
		u := us[i]
		ranks := "rank"
		if len(u.Ranks) > 1 {
			ranks = "ranks"
		}
		return fmt.Sprintf("%s ×%d on %s %s (%v)", u.Name, u.Calls, ranks, RankList(u.Ranks), time.Duration(u.Ns).Round(time.Microsecond))
	})
}

// listNote is a note listing n items after head, comma-separated.
func listNote(head string, n int, item func(i int) string) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(item(i))
	}
	return b.String()
}

// UnwrappedNsByRank is the time each of ranks ranks spent in unwrapped
// calls.
func UnwrappedNsByRank(us []UnwrappedCalls, ranks int) []int64 {
	ns := make([]int64, ranks)
	for _, u := range us {
		for k, r := range u.Ranks {
			if r >= 0 && r < ranks {
				ns[r] += u.RankNs[k]
			}
		}
	}
	return ns
}
