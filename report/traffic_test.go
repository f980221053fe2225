package report

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestHeatmapBlock: one rank per cell up to HeatmapCells ranks, then the
// least power of two that keeps the cells at most HeatmapCells.
func TestHeatmapBlock(t *testing.T) {
	for _, tc := range []struct{ ranks, block int }{
		{1, 1}, {2, 1}, {256, 1}, {257, 2}, {512, 2}, {513, 4}, {1000, 4}, {1024, 4}, {1025, 8}, {100000, 512},
	} {
		if got := HeatmapBlock(tc.ranks); got != tc.block {
			t.Errorf("HeatmapBlock(%d) = %d, want %d", tc.ranks, got, tc.block)
		}
	}
}

// ringReport is a report of ranks ranks where each sends to its right
// neighbour and rank 0 broadcasts.
func ringReport(ranks int) *Report {
	r := &Report{Run: RunInfo{Ranks: ranks}}
	for s := 0; s < ranks; s++ {
		r.CommMatrix.P2P = append(r.CommMatrix.P2P, Pair{Src: s, Dst: (s + 1) % ranks, Count: 2, Bytes: int64(64 * (s + 1))})
		if s > 0 {
			r.CommMatrix.Collective = append(r.CommMatrix.Collective, Pair{Src: 0, Dst: s, Count: 1, Bytes: 8})
		}
	}
	return r
}

// TestWriteHeatmap: from 2 to 1024 ranks, and with nothing sent, the
// heatmap is a PNG that decodes or an SVG that parses, with its axis
// labels; a file name of another format is refused.
func TestWriteHeatmap(t *testing.T) {
	for _, ranks := range []int{1, 2, 65, 300, 1024} {
		for _, format := range []string{"png", "svg"} {
			r := ringReport(ranks)
			if ranks == 1 {
				r.CommMatrix = CommMatrix{} // nothing sent
			}
			var b bytes.Buffer
			if err := WriteHeatmap(&b, r, "m."+format); err != nil {
				t.Fatalf("%d ranks, %s: %v", ranks, format, err)
			}
			if format == "png" {
				img, err := png.Decode(&b)
				if err != nil {
					t.Fatalf("%d ranks: PNG: %v", ranks, err)
				}
				if bd := img.Bounds(); bd.Dx() < 600 || bd.Dy() < 500 {
					t.Errorf("%d ranks: %v pixels", ranks, bd)
				}
				continue
			}
			svg := b.String()
			d := xml.NewDecoder(strings.NewReader(svg))
			for {
				_, err := d.Token()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("%d ranks: SVG is not XML: %v", ranks, err)
				}
			}
			want := []string{"<svg", "destination rank", "source rank", "bytes per cell"}
			if b := HeatmapBlock(ranks); b > 1 {
				want = append(want, "cells of "+itoa(b)+" ranks")
			}
			for _, s := range want {
				if !strings.Contains(svg, s) {
					t.Errorf("%d ranks: no %q in the SVG", ranks, s)
				}
			}
		}
	}
	for _, name := range []string{"m.jpg", "m", "m.png.gz"} {
		if err := WriteHeatmap(io.Discard, ringReport(2), name); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestWriteCSV: every table is a file with its header; cells that need
// quoting (a call site with a comma) read back as they were; the
// communication tables hold the report's rows.
func TestWriteCSV(t *testing.T) {
	r := ringReport(3)
	r.CriticalPath.Segments = []Segment{{Rank: 1, Kind: "compute", Op: "MPI_Send", StartNs: 5, EndNs: 9, Callsite: `dir, "x"/a.c:4`, Function: "f"}}
	r.CriticalPath.ByCallsite = byCallsite(r.CriticalPath.Segments, r.CriticalPath.LengthNs, nil)
	r.Processes = []Process{{Rank: 0, NumCalls: 3, BoundedImbalance: 0.25}}
	r.POP = &POP{POPFactors: POPFactors{LoadBalance: 0.5, WindowNs: [2]int64{10, 90}},
		Phases: []POPPhase{{Phase: 1, Level: new(int32), POPFactors: POPFactors{TransferEfficiency: 0.75}}}}
	r.WhatIf = []WhatIf{{Scenario: "transfers=0", Description: "free transfers", RuntimeNs: 80, GainNs: 20, Gain: 0.2, Default: true}}
	r.Communicators = []Communicator{{Name: "W0.0", Size: 3, Members: []int32{0, 1, 2}, Calls: 4, TimeNs: 50}}
	r.MessageSizes = MessageSizes{P2P: []SizeBucket{{64, 127, 1}, {128, 255, 2}}}
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := WriteCSV(dir, r); err != nil {
		t.Fatal(err)
	}
	read := func(name string) [][]string {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return rows
	}
	for i, name := range CSVFiles() {
		if rows := read(name); len(rows) == 0 || !reflect.DeepEqual(rows[0], csvTables[i].header) {
			t.Errorf("%s: header %v", name, rows)
		}
	}
	for name, want := range map[string][][]string{
		"segments.csv": {{"rank", "kind", "op", "start_ns", "end_ns", "callsite", "function"}, {"1", "compute", "MPI_Send", "5", "9", `dir, "x"/a.c:4`, "f"}},
		"pop.csv": {csvTables[len(csvTables)-2].header, {"run", "", "0.5", "0", "0", "0", "0", "10", "90", "0"},
			{"1", "0", "0", "0", "0", "0.75", "0", "0", "0", "0"}},
		"what_if.csv": {csvTables[len(csvTables)-1].header, {"transfers=0", "free transfers", "80", "20", "0.2", "true"}},
		"comm_matrix.csv": {{"kind", "src", "dst", "count", "bytes"}, {"p2p", "0", "1", "2", "64"}, {"p2p", "1", "2", "2", "128"},
			{"p2p", "2", "0", "2", "192"}, {"collective", "0", "1", "1", "8"}, {"collective", "0", "2", "1", "8"}},
		"communicators.csv": {{"name", "size", "members", "calls", "time_ns"}, {"W0.0", "3", "0 1 2", "4", "50"}},
		"message_sizes.csv": {{"kind", "lo", "hi", "count"}, {"p2p", "64", "127", "1"}, {"p2p", "128", "255", "2"}},
		"by_callsite.csv":   {{"rank", "callsite", "function", "ops", "ns", "stretches", "share", "via", "depth_reached"}, {"1", `dir, "x"/a.c:4`, "f", "MPI_Send", "4", "1", "0", "", "false"}},
		"processes.csv": {csvTables[slices.IndexFunc(csvTables, func(t csvTable) bool { return t.name == "processes" })].header, {"0", "0", "0", "0", "0", "0", "0", "0.25", "3", "0", "0"},
			{"total", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"}},
	} {
		if got := read(name); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
	}
	// A directory that cannot be made.
	if err := WriteCSV(filepath.Join(dir, "segments.csv", "x"), r); err == nil || err.Error() != "not a directory" {
		t.Errorf("CSV under a file: %v", err)
	}
}

// TestTopPairs: the text report's top pairs are the pairs with the most
// bytes, point-to-point, collective and one-sided together, at most top
// of them.
func TestTopPairs(t *testing.T) {
	m := &CommMatrix{
		P2P:        []Pair{{0, 1, 5, 100}, {1, 0, 1, 300}, {2, 0, 9, 50}},
		Collective: []Pair{{0, 2, 2, 300}, {1, 2, 1, 200}},
		OneSided:   []Pair{{2, 1, 4, 400}},
	}
	got := topPairs(m, 4)
	want := []topPair{{"one-sided", Pair{2, 1, 4, 400}}, {"collective", Pair{0, 2, 2, 300}}, {"p2p", Pair{1, 0, 1, 300}}, {"collective", Pair{1, 2, 1, 200}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	var b strings.Builder
	r := &Report{CommMatrix: *m, Communicators: []Communicator{{Name: "W0.0", Size: 3, Members: []int32{0, 1, 2}, Calls: 7, TimeNs: 2000}}}
	writeTraffic(&b, r, 3)
	out := b.String()
	for _, s := range []string{"Top pairs by bytes (3 point-to-point, 2 collective, 1 one-sided pairs", "one-sided   2       1            4      400 B",
		"collective  0       2            2      300 B", "p2p         1       0            1      300 B", "W0.0  3     7      2.0 µs  0 1 2"} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in\n%s", s, out)
		}
	}
	if strings.Contains(out, "200 B") {
		t.Errorf("more than 2 rows:\n%s", out)
	}
}
