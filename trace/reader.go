package trace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/pierrec/lz4/v4"
)

// Problems a reader reports. Test with errors.Is; the *Error wrapping them
// names the file and says what exactly is wrong, on one line.
var (
	ErrNotLog    = errors.New("not a cpath log")
	ErrVersion   = errors.New("unsupported log format version")
	ErrEmpty     = errors.New("empty file")
	ErrTruncated = errors.New("truncated")
	ErrCorrupt   = errors.New("corrupt")
)

// Error is a problem with one log file.
type Error struct {
	File   string
	Err    error  // one of ErrNotLog, ErrVersion, ErrEmpty, ErrTruncated, ErrCorrupt
	Detail string // what exactly, for people
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return e.File + ": " + e.Err.Error()
	}
	return e.File + ": " + e.Err.Error() + ": " + e.Detail
}

func (e *Error) Unwrap() error { return e.Err }

// Reader streams the records of one rank's log, chunk by chunk, so that
// memory does not grow with the log unless the caller keeps the records.
type Reader struct {
	name    string
	hdr     Header
	lz      *lz4.Reader
	c       codec
	buf     []byte
	trailer Trailer
	final   *SyncPoint
	subLeft uint32 // sub-records still owed to the last timed record
	nrec    uint64
	done    bool

	fullSubs bool // Skim: the sub-records being read belong to a wanted call
}

// NewReader reads the preamble and header from r. name is used in errors.
func NewReader(r io.Reader, name string) (*Reader, error) {
	fail := func(kind error, f string, a ...any) (*Reader, error) {
		return nil, &Error{File: name, Err: kind, Detail: fmt.Sprintf(f, a...)}
	}
	var pre [preambleSize]byte
	n, err := io.ReadFull(r, pre[:])
	switch {
	case n == 0 && (err == io.EOF || err == nil):
		return fail(ErrEmpty, "0 bytes")
	case n < len(Magic) || !bytes.Equal(pre[:len(Magic)], []byte(Magic)):
		if n >= 4 && !bytes.HasPrefix([]byte(Magic), pre[:min(n, len(Magic))]) {
			return fail(ErrNotLog, "starts with %q, not %q", printable(pre[:min(n, 8)]), Magic)
		}
		if n < len(Magic) && bytes.HasPrefix([]byte(Magic), pre[:n]) {
			return fail(ErrTruncated, "file ends inside the preamble (%d bytes)", n)
		}
		return fail(ErrNotLog, "starts with %q, not %q", printable(pre[:n]), Magic)
	case err != nil:
		return fail(ErrTruncated, "file ends inside the preamble (%d bytes)", n)
	}
	if v := binary.LittleEndian.Uint16(pre[8:]); v != Version {
		return fail(ErrVersion, "format version %d, this cpath reads version %d", v, Version)
	}
	hl := binary.LittleEndian.Uint32(pre[12:])
	if hl > maxHeaderSize {
		return fail(ErrCorrupt, "header length %d exceeds %d", hl, maxHeaderSize)
	}
	hb := make([]byte, hl+4)
	if _, err := io.ReadFull(r, hb); err != nil {
		return fail(ErrTruncated, "file ends inside the %d-byte header", hl)
	}
	js, sum := hb[:hl], binary.LittleEndian.Uint32(hb[hl:])
	if crc32.ChecksumIEEE(js) != sum {
		return fail(ErrCorrupt, "header checksum mismatch")
	}
	rd := &Reader{name: name}
	if err := json.Unmarshal(js, &rd.hdr); err != nil {
		return fail(ErrCorrupt, "header: %v", err)
	}
	if rd.hdr.Version != Version || rd.hdr.Size <= 0 || rd.hdr.Rank < 0 || rd.hdr.Rank >= rd.hdr.Size {
		return fail(ErrCorrupt, "header: version %d, rank %d of %d", rd.hdr.Version, rd.hdr.Rank, rd.hdr.Size)
	}
	rd.c = newCodec(rd.hdr.T0)
	rd.lz = lz4.NewReader(r)
	if err := rd.lz.Apply(lz4.ConcurrencyOption(1)); err != nil {
		return nil, err
	}
	return rd, nil
}

func printable(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 32 || c > 126 {
			c = '.'
		}
		out[i] = c
	}
	return string(out)
}

// Header returns the log header. After the stream has been read to the end,
// Clock.Final holds the offset measured at MPI_Finalize, if any.
func (r *Reader) Header() *Header { return &r.hdr }

// Trailer returns how the run ended; Status is EndMissing until the trailer
// has been read, and stays so for a rank that was killed.
func (r *Reader) Trailer() Trailer { return r.trailer }

func (r *Reader) errf(kind error, f string, a ...any) error {
	return &Error{File: r.name, Err: kind, Detail: fmt.Sprintf(f, a...)}
}

// streamErr classifies an error of the LZ4 stream: running out of bytes is
// truncation (a rank that died mid-write), anything else is corruption.
func (r *Reader) streamErr(err error, what string) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return r.errf(ErrTruncated, "log ends inside %s after %d records", what, r.nrec)
	}
	return r.errf(ErrCorrupt, "%s after %d records: %v", what, r.nrec, err)
}

// Next decodes the records of the next record chunk and appends them to
// dst. It returns io.EOF at the clean end of the log; a log cut short returns
// an *Error wrapping ErrTruncated, after every complete chunk.
func (r *Reader) Next(dst []Record) ([]Record, error) {
	buf, raw, err := r.chunk()
	if err != nil {
		return dst, err
	}
	return r.decodeChunk(dst, buf, raw)
}

// chunk reads chunks up to the next record chunk and returns its payload,
// taking in the clock and trailer chunks on the way.
func (r *Reader) chunk() (buf []byte, raw bool, err error) {
	for !r.done {
		var ch [chunkHeaderSize]byte
		if n, err := io.ReadFull(r.lz, ch[:]); err != nil {
			if n == 0 && err == io.EOF {
				r.done = true
				break
			}
			r.done = true
			return nil, false, r.streamErr(err, "a chunk header")
		}
		kind := binary.LittleEndian.Uint32(ch[0:])
		size := binary.LittleEndian.Uint32(ch[4:])
		if size > maxChunkRecords*RecordSize+32 {
			r.done = true
			return nil, false, r.errf(ErrCorrupt, "chunk of %d bytes after %d records", size, r.nrec)
		}
		if cap(r.buf) < int(size) {
			r.buf = make([]byte, size)
		}
		buf := r.buf[:size]
		if _, err := io.ReadFull(r.lz, buf); err != nil {
			r.done = true
			return nil, false, r.streamErr(err, "a chunk")
		}
		switch kind {
		case ChunkRecords:
			if size%RecordSize != 0 {
				r.done = true
				return nil, false, r.errf(ErrCorrupt, "record chunk of %d bytes after %d records", size, r.nrec)
			}
			return buf, false, nil
		case ChunkRawRecords:
			if size < 32 || (size-32)%RecordSize != 0 {
				r.done = true
				return nil, false, r.errf(ErrCorrupt, "raw record chunk of %d bytes after %d records", size, r.nrec)
			}
			return buf, true, nil
		case ChunkClockFinal:
			if size != 24 {
				r.done = true
				return nil, false, r.errf(ErrCorrupt, "clock chunk of %d bytes", size)
			}
			le := binary.LittleEndian
			r.final = &SyncPoint{int64(le.Uint64(buf[0:])), int64(le.Uint64(buf[8:])), int64(le.Uint64(buf[16:]))}
			r.hdr.Clock.Final = r.final
		case ChunkTrailer:
			if size != 24 {
				r.done = true
				return nil, false, r.errf(ErrCorrupt, "trailer chunk of %d bytes", size)
			}
			le := binary.LittleEndian
			r.trailer = Trailer{EndStatus(le.Uint32(buf[0:])), int32(le.Uint32(buf[4:])), le.Uint64(buf[8:]), le.Uint64(buf[16:])}
		default:
			r.done = true
			return nil, false, r.errf(ErrCorrupt, "unknown chunk kind %d after %d records", kind, r.nrec)
		}
	}
	return nil, false, io.EOF
}

// Skim reads the rest of the log as Next does, and checks it the same way,
// but decodes in full only the calls for which want(op) is true and their
// sub-records, handing them to fn in log order; it returns the number of
// calls (records other than sub-records) it read. The clean end of the log
// is a nil error; damage is the error Next would return, after the calls
// before it. Skimming a log costs little more than decompressing it: a
// reader that needs the number of calls (or the communicators, or the clock
// measured at MPI_Finalize) before the records themselves can skim the log
// first and read it again.
func (r *Reader) Skim(want func(Op) bool, fn func(*Record)) (calls int, err error) {
	var full [256]bool
	for o := range full {
		full[o] = want(Op(o))
	}
	for {
		buf, raw, err := r.chunk()
		if err == io.EOF {
			return calls, nil
		}
		if err != nil {
			return calls, err
		}
		n, err := r.skimChunk(buf, raw, &full, fn)
		calls += n
		if err != nil {
			return calls, err
		}
	}
}

func (r *Reader) skimChunk(buf []byte, raw bool, full *[256]bool, fn func(*Record)) (calls int, err error) {
	le := binary.LittleEndian
	var rec Record
	if raw {
		// The logger's emergency path: rare and short, decoded in full.
		recs, err := r.decodeChunk(nil, buf, true)
		for i := range recs {
			calls += r.skimmed(&recs[i], full, fn)
		}
		return calls, err
	}
	for i := 0; i+RecordSize <= len(buf); i += RecordSize {
		b := buf[i : i+RecordSize]
		op := Op(b[0])
		sub := opClass[op] == ClassSub
		if full[op] || sub && r.fullSubs {
			r.c.decode(b, &rec)
			if !r.valid(rec.Op, rec.Count, rec.Start, rec.End) {
				r.done = true
				return calls, r.check(&rec)
			}
			r.nrec++
			calls += r.skimmed(&rec, full, fn)
			continue
		}
		// Keep the decoder's state as decode would, without the rest.
		if s := le.Uint32(b[24:]); s != 0 {
			p := r.c.seqRef(le.Uint32(b[4:]))
			*p += uint32(unzig(s - 1))
		}
		if q := le.Uint32(b[28:]); q != 0 && Flags(b[1])&FlagNewReq != 0 {
			r.c.lastReq += uint32(unzig(q - 1))
		}
		var start, end int64
		if !sub {
			ds := int64(uint64(le.Uint32(b[48:])) | uint64(le.Uint32(b[56:]))<<32)
			du := int64(uint64(le.Uint32(b[52:])) | uint64(le.Uint32(b[60:]))<<32)
			start = r.c.prevEnd + ds
			end = start + du
			r.c.prevEnd = end
			r.fullSubs = false
		}
		if count := le.Uint32(b[20:]); !r.valid(op, count, start, end) {
			r.done = true
			return calls, r.checkRec(op, count, start, end)
		}
		r.nrec++
		if !sub {
			calls++
		}
	}
	return calls, nil
}

// skimmed hands a record decoded in full to fn if it is a wanted call or
// one of its sub-records, and returns 1 for a call.
func (r *Reader) skimmed(rec *Record, full *[256]bool, fn func(*Record)) int {
	if rec.Op.IsSub() {
		if r.fullSubs {
			fn(rec)
		}
		return 0
	}
	r.fullSubs = full[rec.Op]
	if r.fullSubs {
		fn(rec)
	}
	return 1
}

func (r *Reader) decodeChunk(dst []Record, buf []byte, raw bool) ([]Record, error) {
	var tick0, ns0, tick1, ns1 int64
	if raw {
		le := binary.LittleEndian
		tick0, ns0 = int64(le.Uint64(buf[0:])), int64(le.Uint64(buf[8:]))
		tick1, ns1 = int64(le.Uint64(buf[16:])), int64(le.Uint64(buf[24:]))
		buf = buf[32:]
	}
	n := len(buf) / RecordSize
	base := len(dst)
	if cap(dst)-base >= n {
		dst = dst[:base+n] // every field is decoded: no need to clear
	} else {
		dst = append(dst, make([]Record, n)...)
	}
	out := dst[base:]
	for i := range out {
		rec := &out[i]
		if raw {
			decodeRaw(buf[i*RecordSize:], rec)
			if !rec.Op.IsSub() {
				rec.Start = ticksToNs(rec.Start, tick0, ns0, tick1, ns1)
				rec.End = ticksToNs(rec.End, tick0, ns0, tick1, ns1)
				r.c.prevEnd = rec.End
			}
		} else {
			r.c.decode(buf[i*RecordSize:], rec)
		}
		if !r.valid(rec.Op, rec.Count, rec.Start, rec.End) {
			r.done = true
			return dst[:base+i], r.check(rec)
		}
		r.nrec++
	}
	return dst, nil
}

// valid is check's common case, inlined into the decoding loops: true for
// a record check accepts (and accounts for), false for one it rejects,
// which check then describes.
func (r *Reader) valid(op Op, count uint32, start, end int64) bool {
	if cls := opClass[op]; cls == ClassSub {
		if r.subLeft == 0 {
			return false
		}
		r.subLeft--
		return true
	} else if cls == classInvalid || r.subLeft != 0 || end < start || count > 1<<24 {
		return false
	}
	r.subLeft = count
	return true
}

// opClass is Op.Class by table for the reader's inner loops, with
// classInvalid for codes that are not valid operations.
var opClass = func() (t [256]Class) {
	for o := range t {
		t[o] = classInvalid
		if Op(o).Valid() {
			t[o] = Op(o).Class()
		}
	}
	return t
}()

const classInvalid Class = 255

// Incomplete reports, once Next has returned io.EOF, a log that ends inside
// a call's sub-records: an *Error wrapping ErrTruncated, or nil.
func (r *Reader) Incomplete() error {
	if r.subLeft != 0 {
		return r.errf(ErrTruncated, "log ends %d sub-records short", r.subLeft)
	}
	return nil
}

// ticksToNs maps a raw timestamp through the calibration line of a raw chunk.
func ticksToNs(t, tick0, ns0, tick1, ns1 int64) int64 {
	if tick1 == tick0 {
		return ns0 + (t - tick0)
	}
	return ns0 + int64(float64(t-tick0)*float64(ns1-ns0)/float64(tick1-tick0))
}

// check rejects records no logger writes, so that garbage that passed the
// checksums (or a foreign writer) cannot reach the analyzer.
func (r *Reader) check(rec *Record) error { return r.checkRec(rec.Op, rec.Count, rec.Start, rec.End) }

// checkRec is check on a record's operation, sub-record count and times
// (ignored for sub-records).
func (r *Reader) checkRec(op Op, count uint32, start, end int64) error {
	cls := opClass[op]
	if cls == classInvalid {
		return r.errf(ErrCorrupt, "record %d has unknown operation code %d", r.nrec, op)
	}
	if cls == ClassSub {
		if r.subLeft == 0 {
			return r.errf(ErrCorrupt, "record %d: %v without a call before it", r.nrec, op)
		}
		r.subLeft--
		return nil
	}
	if r.subLeft != 0 {
		return r.errf(ErrCorrupt, "record %d: %d sub-records missing before it", r.nrec, r.subLeft)
	}
	if end < start {
		return r.errf(ErrCorrupt, "record %d (%v) ends %d ns before it starts", r.nrec, op, start-end)
	}
	if count > 1<<24 {
		return r.errf(ErrCorrupt, "record %d (%v) claims %d sub-records", r.nrec, op, count)
	}
	r.subLeft = count
	return nil
}

// Log is one rank's log read whole.
type Log struct {
	Path    string
	Header  Header
	Records []Record
	Trailer Trailer
	Comms   []Comm
	// Damage is set when the log ends early: a rank that died while writing
	// leaves a cut frame. Records holds every complete chunk before it.
	Damage error
}

// Complete reports whether the rank finalized and its log is intact.
func (l *Log) Complete() bool { return l.Damage == nil && l.Trailer.Status == EndFinalized }

// ReadFile reads a whole log. A foreign, version-mismatched, empty or
// corrupt file is an error; a truncated one is returned with Damage set.
func ReadFile(path string) (*Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(bufio.NewReaderSize(f, 1<<20), path)
}

// Read reads a whole log from r; name is used in errors.
func Read(r io.Reader, name string) (*Log, error) {
	rd, err := NewReader(r, name)
	if err != nil {
		return nil, err
	}
	l := &Log{Path: name}
	for {
		l.Records, err = rd.Next(l.Records)
		if err == io.EOF {
			break
		}
		if err != nil {
			if !errors.Is(err, ErrTruncated) {
				return nil, err
			}
			l.Damage = err
			break
		}
	}
	if l.Damage == nil {
		l.Damage = rd.Incomplete()
	}
	l.Header = rd.hdr
	l.Trailer = rd.trailer
	l.Comms = BuildComms(&l.Header, l.Records)
	return l, nil
}
