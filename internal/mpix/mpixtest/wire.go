package mpixtest

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/cpath/cpath/internal/mpix"
)

// Fill sets every exported field reachable from ptr (a pointer) to a
// value other than its zero, most of them distinct: slices and maps get
// two elements, pointers a value. A wire form's round trip of a filled
// value then loses any field its encoding leaves out (one added to the
// type, say). Unexported fields (blank padding among them) stay zero.
func Fill(ptr any) {
	seed := 0
	fill(reflect.ValueOf(ptr).Elem(), &seed)
}

func fill(v reflect.Value, seed *int) {
	*seed++
	n := int64(*seed%100 + 1) // not 0 in any width
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString("s" + string(rune('a'+*seed%26)))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(uint64(n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) + 0.5)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fill(v.Index(i), seed)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := 0; i < 2; i++ {
			fill(v.Index(i), seed)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for i := 0; i < 2; i++ {
			k, x := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, seed)
			fill(x, seed)
			v.SetMapIndex(k, x)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), seed)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).CanSet() {
				fill(v.Field(i), seed)
			}
		}
	default:
		panic("mpixtest.Fill: " + v.Type().String())
	}
}

// Codec is a wire form of T as RoundTrip and Redecode take it: encode is
// the message of a value put by put, decode reads a message by read,
// with the Decoder's error (Done's: bytes left over are one).
func Codec[T any](put func(e *mpix.Encoder, v T), read func(d *mpix.Decoder) T) (encode func(T) []byte, decode func([]byte) (T, error)) {
	encode = func(v T) []byte {
		e := mpix.NewEncoder(nil)
		put(e, v)
		return e.Bytes()
	}
	decode = func(b []byte) (T, error) {
		d := mpix.NewDecoder(b)
		v := read(d)
		return v, d.Done()
	}
	return encode, decode
}

// RoundTrip checks a wire form, encode and decode: in encodes to a
// message that decodes to want, and that message cut short at any
// multiple of 8 bytes (where its items start) is an error.
func RoundTrip[T any](t testing.TB, encode func(T) []byte, decode func([]byte) (T, error), in, want T) {
	t.Helper()
	b := encode(in)
	got, err := decode(b)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%+v came back as %+v (%v)", in, got, err)
	}
	for n := 0; n < len(b); n += 8 {
		if _, err := decode(b[:n]); err == nil {
			t.Errorf("%T cut to %d of %d bytes decoded", in, n, len(b))
		}
	}
}

// Redecode is the body of a fuzz target of a wire form: bytes another
// rank sent either decode to an error or to a value whose message
// decodes and encodes to the same message again (compared as bytes, so
// that a NaN read into a float is no failure); none panics.
func Redecode[T any](t testing.TB, b []byte, encode func(T) []byte, decode func([]byte) (T, error)) {
	t.Helper()
	v, err := decode(b)
	if err != nil {
		return
	}
	m := encode(v)
	again, err := decode(m)
	if err != nil {
		t.Fatalf("%+v, encoded, does not decode: %v", v, err)
	}
	if m2 := encode(again); !bytes.Equal(m, m2) {
		t.Fatalf("%+v came back as %+v", v, again)
	}
}
