package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// TestUnwrapped: the counts of calls not recorded come back in the header,
// with their times in ns (in a log timed in ticks, at the rate of its
// calibration points); a payload that does not decode is corrupt.
func TestUnwrapped(t *testing.T) {
	calls := []UnwrappedCall{{Name: "MPI_Buffer_detach", Calls: 3, Ns: 1500}, {Name: "MPI_Allreduce_init", Calls: 1 << 40, Ns: 0}}
	l := endedLog(t, testHeader(), func(w *Writer) error { return w.WriteUnwrapped(calls) })
	if !reflect.DeepEqual(l.Header.Unwrapped, calls) || !l.Complete() {
		t.Errorf("unwrapped calls %+v (complete %v), want %+v", l.Header.Unwrapped, l.Complete(), calls)
	}

	// In ticks: ticksLog's rate from its calibration points.
	recs := []Record{{Op: OpSend, Start: 3000, End: 3100, Peer: 1, Root: PeerNone}}
	data := ticksLog(t, recs, 0)
	var pl []byte
	pl = binary.AppendUvarint(pl, 9)
	pl = append(pl, "MPI_Psync"...)
	pl = binary.AppendUvarint(pl, 2)
	pl = binary.AppendUvarint(pl, 999_000)
	data = insertChunk(t, data, ChunkUnwrapped, pl)
	l, err := Read(bytes.NewReader(data), "t.cplog")
	if err != nil {
		t.Fatal(err)
	}
	want := []UnwrappedCall{{Name: "MPI_Psync", Calls: 2, Ns: 499_100}} // 999000 ticks at 499100/999000 ns per tick
	if !reflect.DeepEqual(l.Header.Unwrapped, want) {
		t.Errorf("in ticks: %+v, want %+v", l.Header.Unwrapped, want)
	}

	for _, bad := range [][]byte{
		{0},                  // empty name
		{5, 'M', 'P'},        // name cut
		{1, 'M', 2},          // time missing
		{1, 'M', 0x80, 0x80}, // count cut
	} {
		_, err := Read(bytes.NewReader(insertChunk(t, ticksLog(t, recs, 1), ChunkUnwrapped, bad)), "rank-000002.cplog")
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("payload %v: error %v, want corrupt", bad, err)
		}
	}
}

// endedLog writes a finalized log of one call with header h, end writing
// its end's chunks before the trailer, and reads it back.
func endedLog(t *testing.T, h *Header, end func(w *Writer) error) *Log {
	t.Helper()
	var b bytes.Buffer
	w, err := NewWriter(&b, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecords([]Record{{Op: OpBarrier, Start: 1_000_000, End: 1_000_100, Seq: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := end(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(Trailer{Status: EndFinalized}); err != nil {
		t.Fatal(err)
	}
	l, err := Read(bytes.NewReader(b.Bytes()), "x.cplog")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// insertChunk puts a chunk before the trailer of a ticksLog log (as the
// logger writes it).
func insertChunk(t *testing.T, data []byte, kind int, payload []byte) []byte {
	t.Helper()
	tr := appendChunk(nil, ChunkTrailer, make([]byte, trailerLen))[:3] // tag, kind, length
	i := bytes.LastIndex(data, tr)
	if i < 0 {
		t.Fatal("no trailer")
	}
	out := append([]byte{}, data[:i]...)
	out = appendChunk(out, kind, payload)
	return append(out, data[i:]...)
}

// TestControlVars: the eager limits the logger writes at MPI_Finalize come
// back in the header, in place of any the header itself held (older
// loggers read them at MPI_Init); a payload that is not their JSON is
// corrupt.
func TestControlVars(t *testing.T) {
	vars := []ControlVar{{Name: "btl_vader_eager_limit", Value: 4096}, {Name: "btl_self_eager_limit", Value: 1024}}
	h := testHeader()
	h.EagerLimits = []ControlVar{{Name: "btl_vader_eager_limit", Value: 1}}
	l := endedLog(t, h, func(w *Writer) error { return w.WriteControlVars(vars) })
	if !reflect.DeepEqual(l.Header.EagerLimits, vars) || !l.Complete() {
		t.Errorf("eager limits %+v (complete %v), want %+v", l.Header.EagerLimits, l.Complete(), vars)
	}
	recs := []Record{{Op: OpSend, Start: 3000, End: 3100, Peer: 1, Root: PeerNone}}
	for _, bad := range [][]byte{{}, []byte("[{"), []byte(`{"name":"x"}`)} {
		_, err := Read(bytes.NewReader(insertChunk(t, ticksLog(t, recs, 1), ChunkControlVars, bad)), "rank-000002.cplog")
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("payload %q: error %v, want corrupt", bad, err)
		}
	}
}
