package trace

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/pierrec/lz4/v4"
)

// Chunk kinds: the payloads of CHUNK items in the stream.
const (
	ChunkRecords    = 1 // version 1 only: coded records
	ChunkRawRecords = 2 // version 1 only: raw records in ticks
	ChunkClockFinal = 3 // the SyncPoint measured at MPI_Finalize (3×i64)
	ChunkTrailer    = 4 // status u32, info i32, records u64, dropped u64, calls u64
)

const (
	preambleSize  = 16 // magic, version u16, flags u16, header length u32
	maxHeaderSize = 1 << 20
)

// Writer writes one rank's log: the preamble and header at once, then each
// WriteRecords call as one Write of stream items ending with a CHECK, so a
// rank that dies later leaves every earlier batch intact and verifiable.
// Records are given with times in ns: the header it writes has no Ticks.
type Writer struct {
	w       io.Writer
	e       encoder          // stream 0
	streams map[int]*encoder // the others (WriteBlock)
	t0      int64
	paths   [][]uint64 // by Record.Path; paths[0] is nil
	pend    []byte
	crc     uint32 // CRC-32C of the body bytes since the last CHECK
	records uint64
	calls   uint64 // records other than sub-records
	written int64
}

// NewWriter writes the preamble and header to w and returns a Writer for the
// records. h.Version is set to Version and h.Ticks cleared (the Writer's
// records are in ns).
func NewWriter(w io.Writer, h *Header) (*Writer, error) {
	h.Version = Version
	h.Ticks = nil
	pre, err := EncodeHeader(h)
	if err != nil {
		return nil, err
	}
	wr := &Writer{w: w, t0: h.T0, paths: [][]uint64{nil}}
	wr.e.prevEnd = h.T0
	n, err := w.Write(pre)
	wr.written += int64(n)
	return wr, err
}

// EncodeHeader returns the preamble, the JSON header and its CRC: the bytes
// that open a log of this version. h.Version is set to Version.
func EncodeHeader(h *Header) ([]byte, error) {
	h.Version = Version
	js, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if len(js) > maxHeaderSize {
		return nil, fmt.Errorf("trace: header of %d bytes exceeds %d", len(js), maxHeaderSize)
	}
	pre := make([]byte, preambleSize, preambleSize+len(js)+4)
	copy(pre, Magic)
	binary.LittleEndian.PutUint16(pre[8:], Version)
	binary.LittleEndian.PutUint32(pre[12:], uint32(len(js)))
	pre = append(pre, js...)
	pre = binary.LittleEndian.AppendUint32(pre, crc32.ChecksumIEEE(js))
	return pre, nil
}

// Written returns the number of bytes written to the underlying writer.
func (w *Writer) Written() int64 { return w.written }

// Records returns the number of records written so far.
func (w *Writer) Records() uint64 { return w.records }

// AddPath adds a call path (at most MaxCallDepth addresses) and returns
// the Record.Path of records that carry it.
func (w *Writer) AddPath(path []uint64) uint32 {
	w.paths = append(w.paths, append([]uint64(nil), path[:min(len(path), MaxCallDepth)]...))
	return uint32(len(w.paths) - 1)
}

func (w *Writer) path(r *Record) []uint64 {
	if int(r.Path) < len(w.paths) {
		return w.paths[r.Path]
	}
	return nil
}

// WriteRecords appends records to the log and writes them out.
func (w *Writer) WriteRecords(recs []Record) error {
	for i := range recs {
		w.pend = w.e.record(w.pend, &recs[i], w.path(&recs[i]))
	}
	w.count(recs)
	return w.Flush()
}

// WriteBlock appends records coded in stream n (0 ≤ n < MaxStreams) as one
// block, as the logger's threads write them, and writes them out.
func (w *Writer) WriteBlock(n int, recs []Record) error {
	e := &w.e
	if n != 0 {
		if w.streams[n] == nil {
			if w.streams == nil {
				w.streams = map[int]*encoder{}
			}
			w.streams[n] = &encoder{prevEnd: w.t0}
		}
		e = w.streams[n]
	}
	var items []byte
	for i := range recs {
		items = e.record(items, &recs[i], w.path(&recs[i]))
	}
	w.pend = appendBlock(w.pend, n, items)
	w.count(recs)
	return w.Flush()
}

// count adds recs to the records and calls written, for the trailer.
func (w *Writer) count(recs []Record) {
	w.records += uint64(len(recs))
	for i := range recs {
		if !recs[i].Op.IsSub() {
			w.calls++
		}
	}
}

// WriteClockFinal records the clock offset measured at MPI_Finalize.
func (w *Writer) WriteClockFinal(p SyncPoint) error {
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(p.LocalNs))
	binary.LittleEndian.PutUint64(b[8:], uint64(p.OffsetNs))
	binary.LittleEndian.PutUint64(b[16:], uint64(p.ErrNs))
	w.pend = appendChunk(w.pend, ChunkClockFinal, b[:])
	return nil
}

// WriteModules records the modules loaded in the process.
func (w *Writer) WriteModules(mods []Module) error {
	js, err := json.Marshal(mods)
	if err != nil {
		return err
	}
	w.pend = appendChunk(w.pend, ChunkModules, js)
	return nil
}

// WriteControlVars records the MPI's eager limits, as the logger does at
// MPI_Finalize (ChunkControlVars).
func (w *Writer) WriteControlVars(vars []ControlVar) error {
	js, err := json.Marshal(vars)
	if err != nil {
		return err
	}
	w.pend = appendChunk(w.pend, ChunkControlVars, js)
	return nil
}

// WriteUnwrapped records the counts of calls not recorded (the logger's
// Unwrapped chunk, with the times in ns).
func (w *Writer) WriteUnwrapped(calls []UnwrappedCall) error {
	var b []byte
	for _, c := range calls {
		b = binary.AppendUvarint(b, uint64(len(c.Name)))
		b = append(b, c.Name...)
		b = binary.AppendUvarint(b, c.Calls)
		b = binary.AppendUvarint(b, uint64(max(c.Ns, 0)))
	}
	w.pend = appendChunk(w.pend, ChunkUnwrapped, b)
	return nil
}

// Close writes the trailer and flushes. It does not close the underlying
// writer.
func (w *Writer) Close(t Trailer) error {
	t.Records, t.Calls = w.records, w.calls
	var b [trailerLen]byte
	binary.LittleEndian.PutUint32(b[0:], uint32(t.Status))
	binary.LittleEndian.PutUint32(b[4:], uint32(t.Info))
	binary.LittleEndian.PutUint64(b[8:], t.Records)
	binary.LittleEndian.PutUint64(b[16:], t.Dropped)
	binary.LittleEndian.PutUint64(b[24:], t.Calls)
	w.pend = appendChunk(w.pend, ChunkTrailer, b[:])
	return w.Flush()
}

// Flush writes the pending items, closed by a CHECK, with a single Write.
func (w *Writer) Flush() error {
	if len(w.pend) == 0 {
		return nil
	}
	sum := crc32.Update(w.crc, castagnoli, w.pend)
	w.pend = append(w.pend, tagCheck)
	w.pend = binary.LittleEndian.AppendUint32(w.pend, sum)
	w.crc = 0
	n, err := w.w.Write(w.pend)
	w.written += int64(n)
	w.pend = w.pend[:0]
	return err
}

// RawFrameHeader returns the 7-byte LZ4 frame descriptor (independent 4 MiB
// blocks, no checksums) that version-1 loggers put before the uncompressed
// blocks they wrote when a rank died. Version 2 does not use LZ4.
func RawFrameHeader() []byte {
	var b bytes.Buffer
	zw := lz4.NewWriter(&b)
	_ = zw.Apply(lz4.BlockSizeOption(lz4.Block4Mb), lz4.BlockChecksumOption(false), lz4.ChecksumOption(false))
	_ = zw.Close() // an empty frame: header, then the 4-byte end mark
	return b.Bytes()[:7]
}
