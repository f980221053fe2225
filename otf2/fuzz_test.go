package otf2

import (
	"bytes"
	"io"
	"testing"

	"github.com/cpath/cpath/trace"
)

// fakeRegions are the regions of the archive the fuzz target's events
// refer to: a user function, MPI calls of every class cpath has an
// operation for, and one it has none for.
var fakeRegions = []string{"main", "MPI_Init", "MPI_Send", "MPI_Recv", "MPI_Sendrecv", "MPI_Isend", "MPI_Irecv", "MPI_Wait",
	"MPI_Waitall", "MPI_Test", "MPI_Iprobe", "MPI_Send_init", "MPI_Start", "MPI_Startall", "MPI_Barrier", "MPI_Bcast",
	"MPI_Ibarrier", "MPI_Comm_split", "MPI_Comm_idup", "MPI_Win_create", "MPI_Put", "MPI_Win_post", "MPI_Win_fence",
	"MPI_Finalize", "MPI_Comm_rank"}

// fakeArchive is the definitions of a 2-rank archive, without files:
// MPI_COMM_WORLD, MPI_COMM_SELF, a communicator of rank 1, a window.
func fakeArchive(fromCPath bool) *Archive {
	d := &defs{attrs: map[string]uint32{}, params: map[string]uint32{subParam: 0}, locProps: map[uint64]map[string]uint64{},
		clock: clockProps{resolution: 1e9}, haveClock: true}
	d.strings = append(d.strings, "")
	str := func(s string) uint32 { d.strings = append(d.strings, s); return uint32(len(d.strings) - 1) }
	for i, name := range fakeRegions {
		p := uint32(1) // OTF2_PARADIGM_USER
		if i > 0 {
			p = 4 // OTF2_PARADIGM_MPI
		}
		d.regions = append(d.regions, region{name: str(name), paradigm: p, defined: true})
	}
	d.lgroups = []locGroup{{name: str("rank 0"), typ: 1, defined: true}, {name: str("rank 1"), typ: 1, defined: true}}
	d.locs = []location{{id: 0, typ: 1, group: 0}, {id: 1, typ: 1, group: 1}}
	d.groups = []group{
		{typ: 4, paradigm: 4, members: []uint64{0, 1}, defined: true}, // MPI's locations
		{typ: 5, paradigm: 4, members: []uint64{0, 1}, defined: true},
		{typ: 6, paradigm: 4, defined: true},
		{typ: 5, paradigm: 4, members: []uint64{1}, defined: true},
	}
	d.comms = []commDef{{id: 0, name: str("MPI_COMM_WORLD"), group: 1, parent: undef32}, {id: 1, name: str("MPI_COMM_SELF"), group: 2, parent: undef32},
		{id: 2, name: str("c"), group: 3, parent: 0}}
	d.wins = []rmaWin{{name: str("w"), comm: 0, defined: true}}
	a := &Archive{Anchor: "fuzz.otf2", d: d, fromCPath: fromCPath, subParam: 0}
	if err := a.mapRanks(); err != nil {
		panic(err)
	}
	a.nevents = map[uint64]uint64{} // not counted
	a.mapRegions()
	a.mapComms()
	for i := range a.attrIDs {
		a.attrIDs[i] = uint32(i)
	}
	return a
}

// sliceSource hands out events by batches of up to 3.
type sliceSource struct{ evs []event }

func (s *sliceSource) next() ([]event, uint64, bool, error) {
	n := min(3, len(s.evs))
	b := s.evs[:n]
	s.evs = s.evs[n:]
	return b, uint64(n), len(s.evs) == 0, nil
}
func (s *sliceSource) skipped() [nSkip]uint64 { return [nSkip]uint64{} }
func (s *sliceSource) close()                 {}

// fuzzEvents makes events from bytes, 9 a event: its kind, how long after
// the one before it, its fields (small: they index the archive's
// definitions or name requests) and some of its attributes.
func fuzzEvents(data []byte) []event {
	var evs []event
	t := uint64(1000)
	for ; len(data) >= 9; data = data[9:] {
		b := data[:9]
		t += uint64(b[1])
		e := event{time: t, kind: uint32(b[0])%(nKinds-1) + 1}
		f := []*uint64{&e.a, &e.b, &e.c, &e.d, &e.e, &e.f}
		for i, p := range f {
			*p = uint64(b[2+i] % 8)
		}
		switch e.kind {
		case evEnter, evLeave:
			e.a = uint64(b[2]) % uint64(len(fakeRegions))
		}
		if b[8]&1 != 0 {
			e.amask = uint32(b[8]>>1) << 1
			for i := range e.av {
				e.av[i] = uint64(b[2+i%6]) % 5
			}
		}
		evs = append(evs, e)
	}
	return evs
}

// FuzzConvert feeds the converter made-up events of two ranks (rank 1
// with two threads): whatever they are, it must not fail or panic, and
// hand out records a cpath log can hold: each call followed by exactly
// the sub-records it counts, its times in order, and the same again
// through the log format's writer and reader. (go test -fuzz FuzzConvert
// ./otf2)
func FuzzConvert(f *testing.F) {
	ev := func(kind uint32, dt, a, b, c, d, e byte) []byte {
		return []byte{byte(kind - 1), dt, a, b, c, d, e, 0, 0}
	}
	seed := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	region := func(name string) byte {
		for i, n := range fakeRegions {
			if n == name {
				return byte(i)
			}
		}
		panic(name)
	}
	f.Add(seed(ev(evEnter, 1, 0, 0, 0, 0, 0), ev(evEnter, 5, region("MPI_Send"), 0, 0, 0, 0), ev(evMpiSend, 1, 1, 0, 7, 4, 0),
		ev(evLeave, 5, region("MPI_Send"), 0, 0, 0, 0), ev(evLeave, 1, 0, 0, 0, 0, 0)), false)
	f.Add(seed(ev(evEnter, 1, region("MPI_Irecv"), 0, 0, 0, 0), ev(evMpiIrecvRequest, 1, 3, 0, 0, 0, 0), ev(evLeave, 1, region("MPI_Irecv"), 0, 0, 0, 0),
		ev(evEnter, 9, region("MPI_Wait"), 0, 0, 0, 0), ev(evMpiIrecv, 3, 1, 0, 2, 8, 3), ev(evLeave, 1, region("MPI_Wait"), 0, 0, 0, 0)), false)
	f.Add(seed(ev(evEnter, 1, region("MPI_Bcast"), 0, 0, 0, 0), ev(evMpiCollBegin, 0, 0, 0, 0, 0, 0), ev(evMpiCollEnd, 4, 1, 2, 0, 8, 8),
		ev(evLeave, 1, region("MPI_Bcast"), 0, 0, 0, 0), ev(evEnter, 1, region("MPI_Win_post"), 0, 0, 0, 0), ev(evRmaGroupSync, 1, 3, 0, 1, 0, 0),
		ev(evLeave, 1, region("MPI_Win_post"), 0, 0, 0, 0)), true)
	f.Fuzz(func(t *testing.T, data []byte, fromCPath bool) {
		a := fakeArchive(fromCPath)
		for r := range a.ranks {
			// Rank 1's second thread is made up too: the same events.
			var srcs []eventSource
			if r == 1 {
				a.ranks[1] = []uint64{1, 2}
			}
			for range a.ranks[r] {
				srcs = append(srcs, &sliceSource{fuzzEvents(data)})
			}
			rd := newRankReader(a, r, srcs, nil, 0)
			var recs []trace.Record
			for {
				b, err := rd.Batch()
				recs = append(recs, b...)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			checkRecords(t, r, recs)
		}
	})
}

// checkRecords holds records to what a cpath log holds.
func checkRecords(t *testing.T, r int, recs []trace.Record) {
	t.Helper()
	owed := 0
	lastEnd := map[uint16]int64{}
	for i, x := range recs {
		if x.Op.IsSub() {
			if owed == 0 {
				t.Fatalf("rank %d record %d: a %s no call owes", r, i, x.Op)
			}
			owed--
			continue
		}
		if owed != 0 {
			t.Fatalf("rank %d record %d: a call while %d sub-records are owed", r, i, owed)
		}
		if !x.Op.Valid() || x.End < x.Start || x.Start < lastEnd[x.Thread] {
			t.Fatalf("rank %d record %d: %+v (the thread's last call ended at %d)", r, i, x, lastEnd[x.Thread])
		}
		lastEnd[x.Thread] = x.End
		owed = int(x.Count)
	}
	if owed != 0 {
		t.Fatalf("rank %d: %d sub-records owed at the end", r, owed)
	}
	var b bytes.Buffer
	h := &trace.Header{RunID: "fuzz", Rank: r, Size: 2, Threads: true}
	w, err := trace.NewWriter(&b, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecords(recs); err != nil {
		t.Fatalf("rank %d: the log writer refuses the records: %v", r, err)
	}
	if err := w.Close(trace.Trailer{Status: trace.EndFinalized}); err != nil {
		t.Fatal(err)
	}
	l, err := trace.Read(&b, "fuzz")
	if err != nil {
		t.Fatalf("rank %d: the log reader refuses the records: %v", r, err)
	}
	if len(l.Records) != len(recs) {
		t.Fatalf("rank %d: %d records written, %d read back", r, len(recs), len(l.Records))
	}
}
