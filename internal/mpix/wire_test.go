package mpix_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
)

// head is a header record, with explicit padding.
type head struct {
	At    int64
	Rank  int32
	Flags uint8
	_     [3]byte
}

// sample is a message of every kind of item, in a fixed order.
type sample struct {
	Head  head
	IDs   []int32 // an odd count leaves padding behind them
	Name  string
	Blob  []byte
	Lists [][]uint64
	Tail  []byte // unframed, last
}

func (s *sample) put(e *mpix.Encoder) {
	mpix.PutRecord(e, s.Head)
	mpix.PutRecords(e, s.IDs)
	e.PutString(s.Name)
	e.PutBytes(s.Blob)
	mpix.PutList(e, s.Lists, func(e *mpix.Encoder, l *[]uint64) { mpix.PutRecords(e, *l) })
}

func (s *sample) encode() []byte {
	e := mpix.NewEncoder(nil)
	s.put(e)
	return append(e.Bytes(), s.Tail...)
}

func readSample(d *mpix.Decoder) sample {
	var s sample
	s.Head = mpix.ReadRecord[head](d)
	s.IDs = mpix.ReadRecords[int32](d)
	s.Name = d.ReadString()
	s.Blob = d.ReadBytes()
	s.Lists = mpix.ReadList(d, func(d *mpix.Decoder, l *[]uint64) { *l = mpix.ReadRecords[uint64](d) })
	s.Tail = d.ReadRest()
	if len(s.Tail) == 0 {
		s.Tail = nil
	}
	return s
}

var samples = []sample{
	{},
	{Head: head{At: -1 << 62, Rank: 3, Flags: 0x81}, IDs: []int32{1, -2, 3}, Name: "W0.0", Blob: []byte{0, 1, 2, 3, 4, 5, 6, 7, 8},
		Lists: [][]uint64{{1 << 63}, nil, {2, 3}}, Tail: []byte(`{"ph":"X"}`)},
	{IDs: []int32{7, 8}, Name: strings.Repeat("é", 9), Lists: [][]uint64{nil}},
}

func TestWireRecords(t *testing.T) {
	mpixtest.CheckRecord(t, "head", head{}, 16)
}

func TestFramedRoundTrip(t *testing.T) {
	for i, s := range samples {
		b := s.encode()
		if len(b)%8 != len(s.Tail)%8 {
			t.Errorf("sample %d: %d bytes with %d unframed: the items are not padded to 8", i, len(b), len(s.Tail))
		}
		d := mpix.NewDecoder(b)
		got := readSample(d)
		if err := d.Done(); err != nil {
			t.Errorf("sample %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("sample %d: read back %+v, want %+v", i, got, s)
		}
	}
}

// TestFramedInPlace: in an aligned buffer the records are read where they
// lie, as FromBytes reads them; a message appended behind an odd number of
// bytes pads from its own start, so it reads back from there.
func TestFramedInPlace(t *testing.T) {
	xs := []int64{4, 5, 6}
	e := mpix.NewEncoder(nil)
	e.PutString("abc")
	mpix.PutRecords(e, xs)
	b := e.Bytes()
	got := mpix.ReadRecords[int64](func() *mpix.Decoder { d := mpix.NewDecoder(b); d.ReadString(); return d }())
	if !reflect.DeepEqual(got, xs) {
		t.Fatalf("got %v, want %v", got, xs)
	}
	if p := uintptr(unsafe.Pointer(&got[0])); p < uintptr(unsafe.Pointer(&b[0])) || p >= uintptr(unsafe.Pointer(&b[0]))+uintptr(len(b)) {
		t.Errorf("the records were copied out of an aligned message")
	}

	prefix := []byte("xyz")
	e = mpix.NewEncoder(prefix)
	samples[1].put(e)
	msg := e.Bytes()[len(prefix):]
	d := mpix.NewDecoder(append([]byte(nil), msg...))
	want := samples[1]
	want.Tail = nil
	if s := readSample(d); d.Done() != nil || !reflect.DeepEqual(s, want) {
		t.Errorf("a message behind %d bytes read back as %+v (%v)", len(prefix), s, d.Err())
	}
}

// TestPutRecordsInPlace: records filled in place read back as PutRecords
// puts them, the same bytes; none is an empty list.
func TestPutRecordsInPlace(t *testing.T) {
	for _, n := range []int{0, 1, 3} {
		xs := make([]head, n)
		for i := range xs {
			xs[i] = head{At: int64(i) << 40, Rank: int32(i), Flags: uint8(i)}
		}
		want := mpix.NewEncoder(make([]byte, 0, 8))
		want.PutString("abc")
		mpix.PutRecords(want, xs)
		e := mpix.NewEncoder(make([]byte, 0, 8))
		e.PutString("abc")
		copy(mpix.PutRecordsInPlace[head](e, n), xs)
		if !bytes.Equal(e.Bytes(), want.Bytes()) {
			t.Errorf("%d records: %x, want %x", n, e.Bytes(), want.Bytes())
		}
	}
}

// TestFramedMalformed: every message cut short, and every count made too
// large, is an error, not a panic nor a huge allocation; bytes left over
// are an error of Done; reads after an error give zero values.
func TestFramedMalformed(t *testing.T) {
	s := samples[1]
	s.Tail = nil
	b := s.encode()
	for n := 0; n < len(b); n++ {
		d := mpix.NewDecoder(b[:n])
		readSample(d)
		if d.Done() == nil {
			t.Errorf("the message cut to %d of %d bytes read without error", n, len(b))
		}
	}
	// The counts: of IDs at byte 16, of the name's bytes after the IDs.
	for _, at := range []int{16, 40} {
		bad := append([]byte(nil), b...)
		copy(bad[at:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
		d := mpix.NewDecoder(bad)
		got := readSample(d)
		if err := d.Err(); err == nil || !strings.Contains(err.Error(), "do not fit") {
			t.Errorf("a count of 2^63-1 at byte %d: %v", at, err)
		}
		if got.Lists != nil || got.Blob != nil {
			t.Errorf("reads after the error gave %+v", got)
		}
	}
	e := mpix.NewEncoder(nil)
	e.PutString("W0.0")
	d := mpix.NewDecoder(append(e.Bytes(), 0, 0, 0, 0, 0, 0, 0, 0))
	if d.ReadString() != "W0.0" || d.Err() != nil || d.Done() == nil {
		t.Errorf("8 bytes left over: Err %v, Done %v", d.Err(), d.Done())
	}
	d = mpix.NewDecoder(make([]byte, 8))
	if x := mpix.ReadRecord[head](d); x != (head{}) || d.Err() == nil {
		t.Errorf("a 16-byte record from 8 bytes: %+v, %v", x, d.Err())
	}
}

func TestFramedSize(t *testing.T) {
	for n := 0; n < 20; n++ {
		e := mpix.NewEncoder(nil)
		e.PutBytes(make([]byte, n))
		if got := len(e.Bytes()); got != mpix.FramedSize(n) {
			t.Errorf("%d bytes take %d, FramedSize says %d", n, got, mpix.FramedSize(n))
		}
		e = mpix.NewEncoder(nil)
		mpix.PutRecords(e, make([]int32, n))
		if got := len(e.Bytes()); got != mpix.FramedSize(4*n) {
			t.Errorf("%d int32s take %d, FramedSize says %d", n, got, mpix.FramedSize(4*n))
		}
	}
}

func TestWireLayout(t *testing.T) {
	type gap struct {
		A int32
		B int64
	}
	type tail struct {
		A int64
		B bool
	}
	type ptr struct{ P *int }
	type nested struct {
		X [2]gap
	}
	for _, tc := range []struct {
		v    any
		want string // in the error; "" for none
	}{
		{head{}, ""}, {[4]int32{}, ""}, {gap{}, "4 bytes of padding before field B"},
		{tail{}, "7 bytes of padding at the end"}, {ptr{}, "holds a pointer"}, {nested{}, "field X"},
		{struct{ S string }{}, "holds a pointer"}, {struct{ S []int32 }{}, "holds a pointer"},
	} {
		err := mpixtest.WireLayout(reflect.TypeOf(tc.v))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%T: %v, want %q", tc.v, err, tc.want)
		}
	}
}

// FuzzDecoder: any bytes read as a sample give an error or values that
// encode back to a message reading the same; none panics.
func FuzzDecoder(f *testing.F) {
	for _, s := range samples {
		b := s.encode()
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add(bytes.Repeat([]byte{0xff}, 40))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := mpix.NewDecoder(b)
		s := readSample(d)
		if d.Done() != nil {
			return
		}
		d2 := mpix.NewDecoder(s.encode())
		if again := readSample(d2); d2.Done() != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("%+v came back as %+v (%v)", s, again, d2.Err())
		}
	})
}

// TestGather: rank 0 reads every rank's message back, by rank, and the
// others get nil; a message failing read's check (Fail) is an error
// naming its rank.
func TestGather(t *testing.T) {
	for _, P := range []int{1, 3} {
		got := make([][]sample, P)
		errs := make([]error, P)
		mpixtest.Run(P, func(c mpix.Comm) {
			s := samples[c.Rank()%len(samples)]
			s.Tail = nil
			got[c.Rank()], errs[c.Rank()] = mpix.Gather(c, s.put, readSample)
		})
		for r := range P {
			if errs[r] != nil || (r == 0) != (got[r] != nil) {
				t.Fatalf("P %d: rank %d got %d messages (%v)", P, r, len(got[r]), errs[r])
			}
		}
		for q, s := range got[0] {
			want := samples[q]
			want.Tail = nil
			if !reflect.DeepEqual(s, want) {
				t.Errorf("P %d: rank %d's message read back as %+v, want %+v", P, q, s, want)
			}
		}
	}
	errs := make([]error, 2)
	mpixtest.Run(2, func(c mpix.Comm) {
		name := []string{"W0.0", "bad"}[c.Rank()]
		_, errs[c.Rank()] = mpix.Gather(c, func(e *mpix.Encoder) { e.PutString(name) }, func(d *mpix.Decoder) string {
			s := d.ReadString()
			if s == "bad" {
				d.Fail("a bad name")
			}
			return s
		})
	})
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "rank 1's string") || !strings.Contains(errs[0].Error(), "a bad name") || errs[1] != nil {
		t.Errorf("rank 1's bad name: %v", errs)
	}
}
