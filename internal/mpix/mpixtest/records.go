package mpixtest

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
)

// CheckRecord holds a type a package ships between ranks as raw memory
// (mpix.Bytes, Ship, ShipFlat, PutRecord, PutRecords), given by a value of
// it, to the size its comment gives and to what raw memory on the wire
// needs: no pointers (an address means nothing on another rank) and no
// padding the compiler put in (an explicit blank field instead), so that a
// field added or moved shows here, not as a rank reading another's bytes
// wrong.
func CheckRecord(t testing.TB, name string, v any, size uintptr) {
	t.Helper()
	typ := reflect.TypeOf(v)
	if typ.Size() != size {
		t.Errorf("%s is %d bytes, want %d", name, typ.Size(), size)
	}
	if err := WireLayout(typ); err != nil {
		t.Errorf("%s: %v", name, err)
	}
}

// CheckRecords is CheckRecord for each record type of a package, given
// by a value of it and its size, named by its type.
func CheckRecords(t testing.TB, sizes map[any]uintptr) {
	t.Helper()
	byName := map[string]any{}
	for v := range sizes {
		byName[reflect.TypeOf(v).String()] = v
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		CheckRecord(t, name, byName[name], sizes[byName[name]])
	}
}

// WireLayout returns why values of typ cannot cross the wire as their
// memory, or nil.
func WireLayout(typ reflect.Type) error {
	switch typ.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return nil
	case reflect.Array:
		if err := WireLayout(typ.Elem()); err != nil {
			return fmt.Errorf("%s: %v", typ, err)
		}
		return nil
	case reflect.Struct:
		end := uintptr(0)
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.Offset != end {
				return fmt.Errorf("%d bytes of padding before field %s", f.Offset-end, f.Name)
			}
			if err := WireLayout(f.Type); err != nil {
				return fmt.Errorf("field %s: %v", f.Name, err)
			}
			end = f.Offset + f.Type.Size()
		}
		if end != typ.Size() {
			return fmt.Errorf("%d bytes of padding at the end", typ.Size()-end)
		}
		return nil
	}
	return fmt.Errorf("%s holds a pointer", typ)
}
