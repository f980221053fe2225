package mpix

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"unsafe"
)

// The framed form, for what is not one flat array: a header record and an
// array behind it, strings, lists of lists. A message is items one after
// another:
//
//   - a record (PutRecord): its bytes as in memory;
//   - records (PutRecords), a string (PutString), bytes (PutBytes): a
//     uint64 count (of records, of bytes), then their bytes;
//   - a list (PutList): a uint64, the number of elements that follow,
//     each put as its items.
//
// Every item starts at a multiple of 8 bytes from the message's start
// (padding follows what ends elsewhere), so that the records of a message
// received into an aligned buffer are read in place, as FromBytes reads
// them. A message names no types: sender and receiver run the same binary,
// and the receiver reads the items back in the order they were put. It may
// end in unframed bytes, appended to what Bytes returns and read by
// ReadRest: text made in place behind a header.

// wireAlign is the alignment of every item of a message.
const wireAlign = 8

func padded(n int) int { return (n + wireAlign - 1) &^ (wireAlign - 1) }

// FramedSize is the bytes an item of n bytes (a string, bytes, or records
// of n bytes in all) takes in a message, its count included: for senders
// that account for a message they do not build.
func FramedSize(n int) int { return wireAlign + padded(n) }

// Encoder builds a message of the framed form.
type Encoder struct {
	buf   []byte
	start int // where the message starts in buf: the padding counts from here
}

// NewEncoder returns an Encoder that appends its message to buf (nil for a
// new buffer; b[:0] to reuse b's memory).
func NewEncoder(buf []byte) *Encoder { return &Encoder{buf: buf, start: len(buf)} }

// Bytes returns buf with the message appended.
func (e *Encoder) Bytes() []byte { return e.buf }

func (e *Encoder) pad() {
	for (len(e.buf)-e.start)%wireAlign != 0 {
		e.buf = append(e.buf, 0)
	}
}

func (e *Encoder) count(n int) { e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(n)) }

// PutList puts xs as a list: its length, then each element by put, which
// must put at least one item (the Decoder bounds a list's length by the
// bytes left).
func PutList[T any](e *Encoder, xs []T, put func(e *Encoder, x *T)) {
	e.count(len(xs))
	for i := range xs {
		put(e, &xs[i])
	}
}

// PutString puts s.
func (e *Encoder) PutString(s string) {
	e.count(len(s))
	e.buf = append(e.buf, s...)
	e.pad()
}

// PutBytes puts b.
func (e *Encoder) PutBytes(b []byte) {
	e.count(len(b))
	e.buf = append(e.buf, b...)
	e.pad()
}

// PutRecord puts x, a fixed-size plain value (no pointers), as in memory.
func PutRecord[T any](e *Encoder, x T) {
	e.buf = append(e.buf, unsafe.Slice((*byte)(unsafe.Pointer(&x)), unsafe.Sizeof(x))...)
	e.pad()
}

// PutRecords puts xs, fixed-size plain values, and their count.
func PutRecords[T any](e *Encoder, xs []T) {
	e.count(len(xs))
	e.buf = append(e.buf, Bytes(xs)...)
	e.pad()
}

// PutRecordsInPlace puts n fixed-size plain values and their count, as
// PutRecords does, and returns them to be filled in place: what is sent
// in millions need not be built first and then copied into the message.
// They are valid until the next put; the encoder's buffer must have been
// made for it (NewEncoder(make(…)): its items are then aligned).
func PutRecordsInPlace[T any](e *Encoder, n int) []T {
	e.count(n)
	if n == 0 {
		return nil
	}
	var x T
	at, size := len(e.buf), n*int(unsafe.Sizeof(x))
	e.buf = slices.Grow(e.buf, size)[:at+size]
	p := unsafe.Pointer(&e.buf[at])
	if uintptr(p)%unsafe.Alignof(x) != 0 {
		panic("mpix: PutRecordsInPlace on a misaligned buffer")
	}
	xs := unsafe.Slice((*T)(p), n)
	clear(xs)
	e.pad()
	return xs
}

// Decoder reads a message of the framed form back. The bytes come from
// another rank, so every read checks them: a read past the message's end,
// or a count larger than what is left, is an error, kept and returned by
// Err and Done; every read after it returns a zero value, so that a
// caller may read a whole message and check once.
type Decoder struct {
	b   []byte
	off int
	err error
}

// NewDecoder returns a Decoder reading the message b.
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

// Err returns the first error a read met, or nil.
func (d *Decoder) Err() error { return d.err }

// Done returns the first error a read met, or one if bytes of the message
// were left unread.
func (d *Decoder) Done() error {
	if d.err == nil && d.off != len(d.b) {
		d.err = fmt.Errorf("mpix: %d bytes left over after byte %d of a %d-byte message", len(d.b)-d.off, d.off, len(d.b))
	}
	return d.err
}

func (d *Decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("mpix: message of %d bytes, at byte %d: "+format, append([]any{len(d.b), d.off}, args...)...)
	}
}

// take returns the next n bytes and moves past them and their padding.
// what and t name the item in an error (t, if not nil, is its type):
// they are formatted only then, reads being many.
func (d *Decoder) take(n int, what string, t reflect.Type) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || padded(n) > len(d.b)-d.off {
		d.fail("%s of %d bytes runs past the end", name(what, t), n)
		return nil
	}
	b := d.b[d.off : d.off+n : d.off+n]
	d.off += padded(n)
	return b
}

func name(what string, t reflect.Type) string {
	if t == nil {
		return what
	}
	return what + " " + t.String()
}

// count reads a count of items of size bytes each (at least 1) and checks
// that so many fit in what is left.
func (d *Decoder) count(size int, what string, t reflect.Type) int {
	if d.err != nil {
		return 0
	}
	if len(d.b)-d.off < wireAlign {
		d.fail("the count of %s runs past the end", name(what, t))
		return 0
	}
	n := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += wireAlign
	if left := len(d.b) - d.off; n > uint64(left/size) {
		d.fail("%d %s of %d bytes each do not fit in the %d bytes left", n, name(what, t), size, left)
		return 0
	}
	return int(n)
}

// Fail records a check of what was read that failed (an index out of
// range, lengths that disagree) as the Decoder's error, if it has none
// yet: Err and Done return it.
func (d *Decoder) Fail(format string, args ...any) { d.fail(format, args...) }

// ReadList reads a list PutList put, each element by read: nil for none.
// It stops at the first error, the rest of the list left zero.
func ReadList[T any](d *Decoder, read func(d *Decoder, x *T)) []T {
	n := d.count(wireAlign, "list elements", nil) // each takes 8 bytes at least
	if n == 0 {
		return nil
	}
	xs := make([]T, n)
	for i := 0; i < n && d.err == nil; i++ {
		read(d, &xs[i])
	}
	return xs
}

// ReadString reads a string (PutString), copying it.
func (d *Decoder) ReadString() string { return string(d.ReadBytes()) }

// ReadBytes reads bytes (PutBytes): nil for none, else the message's own
// memory.
func (d *Decoder) ReadBytes() []byte {
	n := d.count(1, "bytes", nil)
	if n == 0 {
		return nil
	}
	return d.take(n, "bytes", nil)
}

// ReadRest returns the unframed bytes that end the message (the message's
// own memory) and reads past them.
func (d *Decoder) ReadRest() []byte {
	if d.err != nil {
		return nil
	}
	b := d.b[d.off:]
	d.off = len(d.b)
	return b
}

// ReadRecord reads a record (PutRecord).
func ReadRecord[T any](d *Decoder) T {
	var x T
	if b := d.take(int(unsafe.Sizeof(x)), "a record", reflect.TypeFor[T]()); b != nil {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&x)), unsafe.Sizeof(x)), b)
	}
	return x
}

// ReadRecords reads records (PutRecords): nil for none, else as FromBytes
// gives them, in the message's own memory where it is aligned for T.
func ReadRecords[T any](d *Decoder) []T {
	var z T
	sz := int(unsafe.Sizeof(z))
	if sz == 0 {
		d.fail("%T records have no size", z)
		return nil
	}
	n := d.count(sz, "records", reflect.TypeFor[T]())
	if n == 0 {
		return nil
	}
	xs, err := FromBytes[T](d.take(n*sz, "records", reflect.TypeFor[T]()))
	if err != nil {
		d.fail("%v", err) // cannot happen: n*sz bytes
	}
	return xs
}

// Gather gathers a message of the framed form from every rank on rank 0,
// each put by put, and reads them back there by read, by rank; the other
// ranks get nil. A message read short, with bytes left over or failing
// read's checks is an error naming its rank.
func Gather[T any](c Comm, put func(e *Encoder), read func(d *Decoder) T) ([]T, error) {
	e := NewEncoder(nil)
	put(e)
	got, err := c.Gatherv(e.Bytes())
	if err != nil || c.Rank() != 0 {
		return nil, err
	}
	out := make([]T, len(got))
	for q, b := range got {
		d := NewDecoder(b)
		out[q] = read(d)
		if err := d.Done(); err != nil {
			return nil, fmt.Errorf("rank %d's %T: %v", q, out[q], err)
		}
	}
	return out, nil
}

// Offsets is where each part starts when parts of sizes are laid out one
// after another (an Alltoallv's displacements).
func Offsets(sizes []int) []int {
	off := make([]int, len(sizes))
	at := 0
	for p, k := range sizes {
		off[p] = at
		at += k
	}
	return off
}
