package report

import (
	"cmp"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
	"github.com/cpath/cpath/traffic"
)

// addTraffic fills the report's communication matrix, communicators and
// message sizes from the run's traffic (nil: none measured, empty lists).
func addTraffic(r *Report, g *graph.PAG, t *traffic.Result) {
	r.CommMatrix = CommMatrix{P2P: []Pair{}, Collective: []Pair{}, OneSided: []Pair{}}
	r.Communicators = []Communicator{}
	r.MessageSizes = MessageSizes{P2P: []SizeBucket{}, Collective: []SizeBucket{}}
	if t == nil {
		return
	}
	r.CommMatrix.P2P = pairs(&t.P2P)
	r.CommMatrix.Collective = pairs(&t.Coll)
	r.CommMatrix.OneSided = pairs(&t.RMA)
	for i, c := range g.Comms {
		var st traffic.Comm
		if i < len(t.Comms) {
			st = t.Comms[i]
		}
		// Every rank has its MPI_COMM_SELF ("s<rank>.0"): listed if used.
		if strings.HasPrefix(c.Name, "s") && st.Calls == 0 {
			continue
		}
		r.Communicators = append(r.Communicators, Communicator{Name: c.Name, Size: len(c.Members), Members: c.Members,
			Calls: st.Calls, TimeNs: st.TimeNs})
	}
	r.MessageSizes.P2P = buckets(&t.P2PSizes)
	r.MessageSizes.Collective = buckets(&t.CollSizes)
}

func pairs(m *traffic.Pairs) []Pair {
	out := make([]Pair, m.Len())
	for i := range out {
		out[i] = Pair{Src: int(m.Src[i]), Dst: int(m.Dst[i]), Count: m.Count[i], Bytes: m.Bytes[i]}
	}
	return out
}

func buckets(h *traffic.Histogram) []SizeBucket {
	bs := h.Buckets()
	out := make([]SizeBucket, len(bs))
	for i, b := range bs {
		out[i] = SizeBucket{Lo: b.Lo, Hi: b.Hi, Count: b.Count}
	}
	return out
}

// topPair is a row of the text report's top pairs.
type topPair struct {
	kind string
	Pair
}

// topPairs returns the n pairs that moved the most bytes, point-to-point,
// collective and one-sided together (ties: more count, then kind, source,
// destination).
func topPairs(m *CommMatrix, n int) []topPair {
	var all []topPair
	for _, k := range []struct {
		kind string
		ps   []Pair
	}{{"p2p", m.P2P}, {"collective", m.Collective}, {"one-sided", m.OneSided}} {
		for _, p := range k.ps {
			all = append(all, topPair{k.kind, p})
		}
	}
	slices.SortFunc(all, func(a, b topPair) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.Count, a.Count), strings.Compare(a.kind, b.kind),
			cmp.Compare(a.Src, b.Src), cmp.Compare(a.Dst, b.Dst))
	})
	return all[:min(n, len(all))]
}

// writeTraffic writes the text report's communication section: the top
// pairs by bytes, the communicators by time and the message sizes.
func writeTraffic(w io.Writer, r *Report, top int) {
	m := &r.CommMatrix
	if len(m.P2P)+len(m.Collective)+len(m.OneSided) > 0 {
		fmt.Fprintf(w, "\nTop pairs by bytes (%d point-to-point, %d collective, %d one-sided pairs; collectives by data flow, one-sided by origin and target, see docs/analysis.md):\n",
			len(m.P2P), len(m.Collective), len(m.OneSided))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "kind\tsource\tdestination\tcount\tbytes\t")
		for _, p := range topPairs(m, top) {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t\n", p.kind, p.Src, p.Dst, p.Count, sizeStr(p.Bytes))
		}
		tw.Flush()
	}
	if len(r.Communicators) > 0 {
		fmt.Fprintln(w, "\nCommunicators (calls and time summed over members):")
		cs := slices.Clone(r.Communicators)
		slices.SortStableFunc(cs, func(a, b Communicator) int {
			return cmp.Or(cmp.Compare(b.TimeNs, a.TimeNs), cmp.Compare(b.Calls, a.Calls))
		})
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "name\tsize\tcalls\ttime\tmembers\t")
		for i, c := range cs {
			if i == top {
				fmt.Fprintf(tw, "(%d more)\t\t\t\t\t\n", len(cs)-top)
				break
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t\n", c.Name, c.Size, c.Calls, ns(c.TimeNs), memberList(c.Members, 8))
		}
		tw.Flush()
		shown := cs
		if top >= 0 && top < len(cs) {
			shown = cs[:top]
		}
		fmt.Fprintln(w, commLegend(shown))
	}
	s := &r.MessageSizes
	if len(s.P2P)+len(s.Collective) > 0 {
		fmt.Fprintln(w, "\nMessage sizes (point-to-point: messages; collective: member calls):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "bytes\tpoint-to-point\tcollective\t")
		counts := map[uint64][2]int64{}
		var los []uint64
		for i, bs := range [][]SizeBucket{s.P2P, s.Collective} {
			for _, b := range bs {
				c, ok := counts[b.Lo]
				if !ok {
					los = append(los, b.Lo)
				}
				c[i] = b.Count
				counts[b.Lo] = c
			}
		}
		slices.Sort(los)
		for _, lo := range los {
			c := counts[lo]
			_, hi := traffic.BucketRange(bits.Len64(lo))
			fmt.Fprintf(tw, "%s\t%d\t%d\t\n", sizeRange(lo, hi), c[0], c[1])
		}
		tw.Flush()
	}
}

// memberList shows up to n world ranks of a member list.
func memberList(ms []int32, n int) string {
	var b strings.Builder
	for i, m := range ms {
		if i == n {
			fmt.Fprintf(&b, " … (%d)", len(ms))
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(int(m)))
	}
	return b.String()
}

// sizeStr shows a byte count in binary units.
func sizeStr(v int64) string {
	const unit = 1024
	if v < unit {
		return fmt.Sprintf("%d B", v)
	}
	f, u := float64(v)/unit, 0
	for f >= unit && u < 5 {
		f /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGTPE"[u])
}

// sizeRange shows a histogram bucket's bounds.
func sizeRange(lo, hi uint64) string {
	if lo == hi {
		return strconv.FormatUint(lo, 10)
	}
	return strconv.FormatUint(lo, 10) + "-" + strconv.FormatUint(hi, 10)
}

// commLegend says how the communicators' names are made, with the letters
// of those listed: a constructor's names after mpisee's.
func commLegend(cs []Communicator) string {
	var letters []byte
	for _, c := range cs {
		if c.Name != "" && !slices.Contains(letters, c.Name[0]) {
			letters = append(letters, c.Name[0])
		}
	}
	slices.Sort(letters)
	var says []string
	for _, l := range letters {
		if n := trace.CommLetterName(l); n != "" {
			says = append(says, string(l)+" "+n)
		}
	}
	return "names (as mpisee's): the constructor's letter, the world rank of the communicator's rank 0, and that\n" +
		"rank's creation counter (an MPI_Comm_idup's: its letter, the parent's name, its number on the parent)\n" +
		"letters: " + strings.Join(says, ", ")
}
