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

// Chunk kinds inside the decompressed stream. Each chunk is an 8-byte header
// (kind u32, payload length u32) and its payload.
const (
	ChunkRecords    = 1 // n coded records
	ChunkRawRecords = 2 // tick calibration (4×i64) and n records in the logger's memory layout, times in ticks
	ChunkClockFinal = 3 // the SyncPoint measured at MPI_Finalize (3×i64)
	ChunkTrailer    = 4 // status u32, info i32, records u64, dropped u64
)

const (
	chunkHeaderSize = 8
	maxChunkRecords = 1 << 16 // records per chunk: bounds what a reader must buffer
	preambleSize    = 16      // magic, version u16, flags u16, header length u32
	maxHeaderSize   = 1 << 20
)

// Writer writes one rank's log: the preamble and header at once, then each
// WriteRecords call as one self-contained LZ4 frame written with a single
// Write, so a rank that dies later leaves every earlier frame intact.
type Writer struct {
	w       io.Writer
	lz      *lz4.Writer
	frame   bytes.Buffer // the compressed frame being built
	pend    []byte       // uncompressed chunks waiting for the next frame
	c       codec
	records uint64
	written int64
}

// NewWriter writes the preamble and header to w and returns a Writer for the
// records. h.Version is set to Version.
func NewWriter(w io.Writer, h *Header) (*Writer, error) {
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
	wr := &Writer{w: w, c: newCodec(h.T0)}
	wr.lz = lz4.NewWriter(&wr.frame)
	// Block checksums let the reader reject a corrupt block before it hands
	// out any record from it; 1 MiB blocks bound the memory on both sides.
	if err := wr.lz.Apply(lz4.BlockSizeOption(lz4.Block1Mb), lz4.BlockChecksumOption(true),
		lz4.ChecksumOption(false), lz4.ConcurrencyOption(1)); err != nil {
		return nil, err
	}
	n, err := w.Write(pre)
	wr.written += int64(n)
	return wr, err
}

// Written returns the number of bytes written to the underlying writer.
func (w *Writer) Written() int64 { return w.written }

// Records returns the number of records written so far.
func (w *Writer) Records() uint64 { return w.records }

func (w *Writer) chunk(kind, n int) []byte {
	off := len(w.pend)
	w.pend = append(w.pend, make([]byte, chunkHeaderSize+n)...)
	binary.LittleEndian.PutUint32(w.pend[off:], uint32(kind))
	binary.LittleEndian.PutUint32(w.pend[off+4:], uint32(n))
	return w.pend[off+chunkHeaderSize:]
}

// WriteRecords appends records to the log and writes them out as one frame.
func (w *Writer) WriteRecords(recs []Record) error {
	for len(recs) > 0 {
		n := min(len(recs), maxChunkRecords)
		dst := w.chunk(ChunkRecords, n*RecordSize)
		for i := range recs[:n] {
			w.c.encode(dst[i*RecordSize:], &recs[i])
		}
		w.records += uint64(n)
		recs = recs[n:]
	}
	return w.Flush()
}

// WriteClockFinal records the clock offset measured at MPI_Finalize.
func (w *Writer) WriteClockFinal(p SyncPoint) error {
	dst := w.chunk(ChunkClockFinal, 24)
	binary.LittleEndian.PutUint64(dst[0:], uint64(p.LocalNs))
	binary.LittleEndian.PutUint64(dst[8:], uint64(p.OffsetNs))
	binary.LittleEndian.PutUint64(dst[16:], uint64(p.ErrNs))
	return nil
}

// Close writes the trailer and flushes. It does not close the underlying
// writer.
func (w *Writer) Close(t Trailer) error {
	t.Records = w.records
	dst := w.chunk(ChunkTrailer, 24)
	binary.LittleEndian.PutUint32(dst[0:], uint32(t.Status))
	binary.LittleEndian.PutUint32(dst[4:], uint32(t.Info))
	binary.LittleEndian.PutUint64(dst[8:], t.Records)
	binary.LittleEndian.PutUint64(dst[16:], t.Dropped)
	return w.Flush()
}

// Flush compresses the pending chunks into one LZ4 frame and writes it with
// a single Write.
func (w *Writer) Flush() error {
	if len(w.pend) == 0 {
		return nil
	}
	w.frame.Reset()
	w.lz.Reset(&w.frame)
	if _, err := w.lz.Write(w.pend); err != nil {
		return err
	}
	if err := w.lz.Close(); err != nil {
		return err
	}
	w.pend = w.pend[:0]
	n, err := w.w.Write(w.frame.Bytes())
	w.written += int64(n)
	return err
}

// RawFrameHeader returns the 7-byte LZ4 frame descriptor (independent 4 MiB
// blocks, no checksums) that the logger's signal-safe C path puts before the
// uncompressed blocks it writes when a rank dies.
func RawFrameHeader() []byte {
	var b bytes.Buffer
	zw := lz4.NewWriter(&b)
	_ = zw.Apply(lz4.BlockSizeOption(lz4.Block4Mb), lz4.BlockChecksumOption(false), lz4.ChecksumOption(false))
	_ = zw.Close() // an empty frame: header, then the 4-byte end mark
	return b.Bytes()[:7]
}
