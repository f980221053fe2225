package trace

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"testing"
)

// readAll reads a log with Next, as Read does, and returns the records
// before the first error, the error and the reader.
func readAll(data []byte) ([]Record, error, *Reader) {
	rd, err := NewReader(bytes.NewReader(data), "x.cplog")
	if err != nil {
		return nil, err, nil
	}
	var recs []Record
	for {
		recs, err = rd.Next(recs)
		if err == io.EOF {
			return recs, nil, rd
		}
		if err != nil {
			return recs, err, rd
		}
	}
}

// batchAll reads a log with Batch, keeping copies of the records it hands
// out in place.
func batchAll(data []byte) ([]Record, error) {
	rd, err := NewReader(bytes.NewReader(data), "x.cplog")
	if err != nil {
		return nil, err
	}
	var recs []Record
	for {
		b, err := rd.Batch()
		recs = append(recs, b...)
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
	}
}

// skimAll skims a log; fn collects the records it is handed.
func skimAll(data []byte, want func(Op) bool) (int, []Record, error, *Reader) {
	rd, err := NewReader(bytes.NewReader(data), "x.cplog")
	if err != nil {
		return 0, nil, err, nil
	}
	var recs []Record
	calls, err := rd.Skim(want, func(r *Record) { recs = append(recs, *r) })
	return calls, recs, err, rd
}

// TestSkim: skimming a log finds what reading it does (the calls, the same
// error at the same place, the clock, the trailer), and hands over exactly
// the wanted calls and their sub-records, decoded as Next decodes them;
// Batch hands out what Next does, with the same error.
func TestSkim(t *testing.T) {
	comms := []Record{
		{Op: OpCommSplit, Start: 1, End: 2, Comm: CommWorld, Req: 2, Tag: 1, Root: 1, Count: 2, Seq: 1},
		{Op: OpMember, Peer: 1}, {Op: OpMember, Peer: 3},
		{Op: OpBarrier, Start: 3, End: 4, Comm: 2, Seq: 1},
		{Op: OpCommDup, Start: 5, End: 6, Comm: 2, Req: 3, Tag: 2, Root: 1, Count: 2, Seq: 2},
		{Op: OpMember, Peer: 1}, {Op: OpMember, Peer: 3},
	}
	recs := append(append(haloRecords(3000, 9), comms...), haloRecords(500, 10)...)
	for i := range recs[len(recs)-500*6:] {
		r := &recs[len(recs)-500*6+i]
		if !r.Op.IsSub() {
			r.Start += 1 << 40
			r.End += 1 << 40
		}
	}
	good := writeLog(t, recs, &Trailer{Status: EndFinalized, Info: 3})
	logs := map[string][]byte{"good": good, "no trailer": writeLog(t, haloRecords(100, 4), nil), "cut": good[:len(good)*2/3],
		"ticks": ticksLog(t, haloRecords(50, 5), 100)}
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 150; i++ {
		b := bytes.Clone(good)
		for k := 0; k <= i%3; k++ {
			b[100+rng.Intn(len(b)-100)] ^= byte(1 + rng.Intn(255))
		}
		logs[fmt.Sprintf("flipped %d", i)] = b
	}
	wants := map[string]func(Op) bool{
		"comms": func(o Op) bool { return o.Class() == ClassCommCreate },
		"all":   func(Op) bool { return true },
		"none":  func(Op) bool { return false },
	}
	errs := 0
	for name, data := range logs {
		for wname, want := range wants {
			all, rerr, rrd := readAll(data)
			calls, got, serr, srd := skimAll(data, want)
			if fmt.Sprint(rerr) != fmt.Sprint(serr) {
				t.Fatalf("%s, %s: Skim error %v, Next error %v", name, wname, serr, rerr)
			}
			if rrd == nil {
				continue
			}
			if ball, berr := batchAll(data); fmt.Sprint(berr) != fmt.Sprint(rerr) || !reflect.DeepEqual(ball, all) {
				t.Fatalf("%s: Batch read %d records and %v, Next %d and %v", name, len(ball), berr, len(all), rerr)
			}
			if rerr != nil {
				errs++
			}
			n := 0
			var wanted []Record
			keep := false
			for _, r := range all {
				if !r.Op.IsSub() {
					n++
					keep = want(r.Op)
				}
				if keep {
					wanted = append(wanted, r)
				}
			}
			if calls != n {
				t.Fatalf("%s, %s: Skim counted %d calls, Next read %d", name, wname, calls, n)
			}
			if !reflect.DeepEqual(got, wanted) {
				t.Fatalf("%s, %s: Skim handed %d records, want %d", name, wname, len(got), len(wanted))
			}
			if srd.Trailer() != rrd.Trailer() || !reflect.DeepEqual(srd.Header(), rrd.Header()) ||
				fmt.Sprint(srd.Incomplete()) != fmt.Sprint(rrd.Incomplete()) {
				t.Fatalf("%s, %s: trailer, header or end differ", name, wname)
			}
		}
	}
	if errs == 0 {
		t.Fatal("no damaged log was found damaged")
	}
}
