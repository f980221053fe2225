//go:build mpi

package e2e

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/trace"
)

// trafficPlan is what traffic.c does, as its header says: the ring's
// messages per rank (count, size) are its arguments, the rest is fixed.
type trafficPlan struct {
	ring [4][2]int64 // rank r sends ring[r][0] messages of ring[r][1] bytes to r+1
}

func (pl trafficPlan) args() []string {
	var a []string
	for _, x := range pl.ring {
		a = append(a, fmt.Sprint(x[0]), fmt.Sprint(x[1]))
	}
	return a
}

// flowSend is count messages (or collective instances) of bytes each from
// src to dst.
type flowSend struct {
	src, dst     int
	count, bytes int64
}

// p2p are the plan's point-to-point messages.
func (pl trafficPlan) p2p() []flowSend {
	var fs []flowSend
	for r, x := range pl.ring {
		fs = append(fs, flowSend{r, (r + 1) % 4, x[0], x[1]})
	}
	return append(fs,
		flowSend{0, 2, 5, 4},                         // Isend + Waitall
		flowSend{1, 3, 1, 16}, flowSend{3, 1, 1, 16}, // Sendrecv
		flowSend{3, 2, 2, 256}, // persistent
	)
}

// collective are the plan's collective data flows by docs/analysis.md's
// attribution, and sizes the member calls' bytes.
func (pl trafficPlan) collective() (flows []flowSend, sizes []uint64) {
	all := []int{0, 1, 2, 3}
	for i := 0; i < 2; i++ { // MPI_Allreduce of 8 doubles on world, twice: every ordered pair
		for _, s := range all {
			for _, d := range all {
				if s != d {
					flows = append(flows, flowSend{s, d, 1, 64})
				}
			}
			sizes = append(sizes, 64)
		}
	}
	for _, d := range all { // MPI_Bcast of 3 ints from 2: 2 → each other rank
		if d != 2 {
			flows = append(flows, flowSend{2, d, 1, 12})
		}
		sizes = append(sizes, 12)
	}
	for _, h := range [][2]int{{0, 2}, {1, 3}} { // the halves
		// MPI_Allreduce of 1 int: both ways.
		flows = append(flows, flowSend{h[0], h[1], 1, 4}, flowSend{h[1], h[0], 1, 4})
		// MPI_Bcast of 100 bytes from the half's rank 0 (its lower world rank).
		flows = append(flows, flowSend{h[0], h[1], 1, 100})
		sizes = append(sizes, 4, 4, 100, 100)
	}
	return flows, sizes
}

// matrix sums flows into the report's sparse matrix form.
func matrix(fs []flowSend) []report.Pair {
	var ps []report.Pair
	for _, f := range fs {
		i := slices.IndexFunc(ps, func(p report.Pair) bool { return p.Src == f.src && p.Dst == f.dst })
		if i < 0 {
			ps = append(ps, report.Pair{Src: f.src, Dst: f.dst})
			i = len(ps) - 1
		}
		ps[i].Count += f.count
		ps[i].Bytes += f.count * f.bytes
	}
	slices.SortFunc(ps, func(a, b report.Pair) int { return a.Src*4 + a.Dst - (b.Src*4 + b.Dst) })
	return ps
}

// histogram is the log2 histogram of sizes, counted each times, from the
// first non-empty bucket to the last: [0,0], then [2^k, 2^(k+1)-1].
func histogram(sizes []uint64, times []int64) []report.SizeBucket {
	var n [65]int64
	for i, s := range sizes {
		k := bits.Len64(s)
		n[k] += times[i]
	}
	lo, hi := -1, -1
	for k, c := range n {
		if c > 0 {
			if lo < 0 {
				lo = k
			}
			hi = k
		}
	}
	out := []report.SizeBucket{}
	for k := lo; lo >= 0 && k <= hi; k++ {
		b := report.SizeBucket{Count: n[k]}
		if k > 0 {
			b.Lo, b.Hi = 1<<(k-1), 1<<k-1
		}
		out = append(out, b)
	}
	return out
}

// TestTraffic runs traffic.c under the logger and holds the report's
// communication matrix, message sizes and communicators to its design,
// exactly, with one analyzer process and with an MPI job of two (the same
// answer); the CSV files parse back to the JSON report's tables; the
// heatmap is a PNG that decodes and an SVG that parses.
func TestTraffic(t *testing.T) {
	const np = 4
	lib := mpitest.LoggerLib(t)
	bin := cpathBin(t)
	work := t.TempDir()
	exe := mpitest.Compile(t, work, "mpicc", "traffic.c", "-Wall")
	logDir := filepath.Join(work, "logs")
	// Sizes in distinct buckets, one of them 0 bytes and one above the
	// rendezvous threshold (64 KiB).
	plan := trafficPlan{ring: [4][2]int64{{3, 10}, {2, 1000}, {1, 70000}, {4, 0}}}
	mpitest.Run(t, np, lib, logDir, work, exe, plan.args()...)
	logs := mpitest.ReadLogs(t, logDir, np)

	p2p := plan.p2p()
	wantP2P := matrix(p2p)
	var p2pSizes []uint64
	var p2pTimes []int64
	for _, f := range p2p {
		p2pSizes, p2pTimes = append(p2pSizes, uint64(f.bytes)), append(p2pTimes, f.count)
	}
	collFlows, collSizes := plan.collective()
	wantColl := matrix(collFlows)
	wantSizes := report.MessageSizes{P2P: histogram(p2pSizes, p2pTimes),
		Collective: histogram(collSizes, slices.Repeat([]int64{1}, len(collSizes)))}
	// The communicators, named as mpisee does: world, and the halves by the
	// world rank that leads them and its first creation. Calls on world per
	// rank: Barrier ×2, Comm_split, the ring's sends and receives,
	// Allreduce ×2, Bcast, and rank 0 5 Isend, rank 1 and 3 a Sendrecv,
	// rank 2 5 Irecv and 2 Recv, rank 3 Send_init, Start ×2 and
	// Request_free; on each half Allreduce, Bcast, Comm_free.
	worldCalls := int64(0)
	for r := 0; r < np; r++ {
		worldCalls += 2 + 1 + 2 + 1 + plan.ring[r][0] + plan.ring[(r+3)%4][0]
	}
	worldCalls += 5 + 1 + 1 + 5 + 2 + 4
	wantComms := []report.Communicator{
		{Name: "W0.0", Size: 4, Members: []int32{0, 1, 2, 3}, Calls: worldCalls},
		{Name: "S0.1", Size: 2, Members: []int32{0, 2}, Calls: 6},
		{Name: "S1.1", Size: 2, Members: []int32{1, 3}, Calls: 6},
	}
	// Their time: the calls' durations in the logs, on the global clock.
	commTime := map[string]int64{}
	for _, l := range logs {
		clk := &l.Header.Clock
		for _, rec := range l.Records {
			if rec.Op.IsSub() || rec.Op.Class() == trace.ClassOther || rec.Comm == trace.CommNone || int(rec.Comm) >= len(l.Comms) {
				continue
			}
			commTime[l.Comms[rec.Comm].Name] += clk.Global(rec.End) - clk.Global(rec.Start)
		}
	}

	var ref *report.Report
	for _, P := range []int{1, 2} {
		t.Run(fmt.Sprintf("P%d", P), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			csvDir := filepath.Join(out, "csv") // two levels that do not exist yet
			args := []string{"analyze", "--json", "-", "--json-segments", "--csv", csvDir, "--matrix", filepath.Join(filepath.Dir(out), "m.png"), logDir}
			if P == 2 {
				args[len(args)-2] = filepath.Join(filepath.Dir(out), "m.svg")
			}
			rep := runTraffic(t, bin, P, args)
			if rep.Run.Messages != 19 || rep.Run.Unmatched != 0 {
				t.Errorf("%d messages matched, %d unmatched; want 19, 0", rep.Run.Messages, rep.Run.Unmatched)
			}
			if !reflect.DeepEqual(rep.CommMatrix.P2P, wantP2P) {
				t.Errorf("point-to-point matrix\n got %v\nwant %v", rep.CommMatrix.P2P, wantP2P)
			}
			if !reflect.DeepEqual(rep.CommMatrix.Collective, wantColl) {
				t.Errorf("collective matrix\n got %v\nwant %v", rep.CommMatrix.Collective, wantColl)
			}
			if !reflect.DeepEqual(rep.MessageSizes, wantSizes) {
				t.Errorf("message sizes\n got %v\nwant %v", rep.MessageSizes, wantSizes)
			}
			var gotComms []report.Communicator
			for _, c := range rep.Communicators {
				if want := commTime[c.Name]; c.TimeNs < want || c.TimeNs > want+want/100+int64(c.Calls)*1000 {
					// The clock correction may only lengthen a call.
					t.Errorf("%s: %d ns in its calls, the logs say %d", c.Name, c.TimeNs, want)
				}
				c.TimeNs = 0
				gotComms = append(gotComms, c)
			}
			if !reflect.DeepEqual(gotComms, wantComms) {
				t.Errorf("communicators (time left out)\n got %+v\nwant %+v", gotComms, wantComms)
			}
			checkTrafficCSV(t, csvDir, rep)
			if P == 1 {
				checkPNG(t, filepath.Join(filepath.Dir(out), "m.png"))
				ref = rep
				return
			}
			checkSVG(t, filepath.Join(filepath.Dir(out), "m.svg"))
			if ref != nil && (!reflect.DeepEqual(rep.CommMatrix, ref.CommMatrix) || !reflect.DeepEqual(rep.MessageSizes, ref.MessageSizes) ||
				!reflect.DeepEqual(rep.Communicators, ref.Communicators)) {
				t.Errorf("the MPI job of two reports other traffic than one process")
			}
		})
	}
}

// runTraffic runs cpath with args, under mpirun -np P if P > 1, and
// decodes the JSON report it prints.
func runTraffic(t *testing.T, bin string, P int, args []string) *report.Report {
	t.Helper()
	_, rep := runJSON(t, bin, P, args)
	return rep
}

// readCSV reads a CSV file whole: its header and rows.
func readCSV(t *testing.T, name string) (header []string, rows [][]string) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(name), err)
	}
	if len(all) == 0 {
		t.Fatalf("%s: empty, not even a header", filepath.Base(name))
	}
	return all[0], all[1:]
}

// checkTrafficCSV: every table is a CSV file with a header that parses;
// the traffic tables and the per-process table hold the JSON report's
// rows.
func checkTrafficCSV(t *testing.T, dir string, rep *report.Report) {
	t.Helper()
	for _, name := range report.CSVFiles() {
		readCSV(t, filepath.Join(dir, name))
	}
	num := func(s string) int64 {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("CSV: %q is not a number", s)
		}
		return v
	}
	h, rows := readCSV(t, filepath.Join(dir, "comm_matrix.csv"))
	if strings.Join(h, ",") != "kind,src,dst,count,bytes" {
		t.Errorf("comm_matrix.csv header %v", h)
	}
	got := map[string][]report.Pair{}
	for _, r := range rows {
		got[r[0]] = append(got[r[0]], report.Pair{Src: int(num(r[1])), Dst: int(num(r[2])), Count: num(r[3]), Bytes: num(r[4])})
	}
	if !reflect.DeepEqual(got["p2p"], rep.CommMatrix.P2P) || !reflect.DeepEqual(got["collective"], rep.CommMatrix.Collective) {
		t.Errorf("comm_matrix.csv %v, the JSON report %v", got, rep.CommMatrix)
	}
	_, rows = readCSV(t, filepath.Join(dir, "message_sizes.csv"))
	sizes := map[string][]report.SizeBucket{}
	for _, r := range rows {
		sizes[r[0]] = append(sizes[r[0]], report.SizeBucket{Lo: uint64(num(r[1])), Hi: uint64(num(r[2])), Count: num(r[3])})
	}
	if !reflect.DeepEqual(sizes["p2p"], rep.MessageSizes.P2P) || !reflect.DeepEqual(sizes["collective"], rep.MessageSizes.Collective) {
		t.Errorf("message_sizes.csv %v, the JSON report %v", sizes, rep.MessageSizes)
	}
	_, rows = readCSV(t, filepath.Join(dir, "communicators.csv"))
	var comms []report.Communicator
	for _, r := range rows {
		c := report.Communicator{Name: r[0], Size: int(num(r[1])), Calls: num(r[3]), TimeNs: num(r[4]), Members: []int32{}}
		for _, m := range strings.Fields(r[2]) {
			c.Members = append(c.Members, int32(num(m)))
		}
		comms = append(comms, c)
	}
	if !reflect.DeepEqual(comms, rep.Communicators) {
		t.Errorf("communicators.csv %+v, the JSON report %+v", comms, rep.Communicators)
	}
	_, rows = readCSV(t, filepath.Join(dir, "processes.csv"))
	if len(rows) != len(rep.Processes)+1 || rows[len(rows)-1][0] != "total" {
		t.Errorf("processes.csv: %d rows, want %d ranks and the total", len(rows), len(rep.Processes))
	}
	_, rows = readCSV(t, filepath.Join(dir, "segments.csv"))
	if len(rows) != len(rep.CriticalPath.Segments) {
		t.Errorf("segments.csv: %d rows, the JSON report %d segments", len(rows), len(rep.CriticalPath.Segments))
	}
}

// checkPNG: the heatmap decodes as a PNG of a sensible size.
func checkPNG(t *testing.T, name string) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 300 {
		t.Errorf("%s: %v, too small to read", name, b)
	}
}

// checkSVG: the heatmap parses as XML whose root is an svg element, with
// the axis labels in it.
func checkSVG(t *testing.T, name string) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: not XML: %v", name, err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element %q, want svg", name, root)
	}
	for _, s := range []string{"destination rank", "source rank", "point-to-point bytes", "collective bytes"} {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("%s: no %q in it", name, s)
		}
	}
}
