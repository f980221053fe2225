package trace

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"sort"
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

// Reader streams the records of one rank's log, so that memory does not
// grow with the log unless the caller keeps the records.
type Reader struct {
	name    string
	hdr     Header
	src     byteSrc
	cur     *stream   // the stream of the items being read
	streams []*stream // by number; stream 0 holds the items outside blocks
	// blockEnd is the offset where the block being read ends, -1 outside
	// blocks; afterHole is set after a block that was not committed.
	blockEnd  int64
	afterHole bool
	prevEnd0  int64 // a stream's first prevEnd
	paths     [][]uint64
	pathIDs   map[pathKey]uint32
	trailer   Trailer
	final     *SyncPoint
	nrec      uint64
	done      bool
	ended     bool  // the trailer has been read
	err       error // the error that ended the log, for Next after the records before it
	// pend holds the decoded records: pend[:nready] are ready (verified,
	// times in ns), and pend[:readyAt] of them were handed out. Records
	// are handed out in place, not copied on to a ready list.
	pend    []Record
	nver    int    // pend[:nver] is verified by a CHECK
	nconv   int    // pend[:nconv] has times in ns
	nready  int    // min(nver, nconv) when last released
	readyAt int    // pend[:readyAt] were handed out
	nrecVer uint64 // nrec at the last CHECK
	groups  []callGroup
	sortBuf []Record

	// tick → ns, without Ticks the identity: through the calibration
	// points (the header's first), piecewise linearly; after the last, at
	// rate, measured from the first point to the last.
	ticks bool
	cals  []calPoint
	seg   int // the segment of the last conversion
	rate  float64
}

// calPoint is a calibration point: tick was ns, and from there to the
// next point a tick is slope ns.
type calPoint struct {
	tick, ns int64
	slope    float64
}

// stream is the decoding state of one stream of records.
type stream struct {
	slots   [nSlots]slot
	prevEnd int64  // End of the last timed record, in stream units (ticks or ns)
	subLeft uint32 // sub-records still owed to the last timed record
}

// pathKey is a call path as a map key: its length, then its addresses.
type pathKey [MaxCallDepth + 1]uint64

// maxBlock bounds a block's length.
const maxBlock = 1 << 30

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
	if rd.hdr.CallDepth < 0 || rd.hdr.CallDepth > MaxCallDepth {
		return fail(ErrCorrupt, "header: call depth %d (at most %d)", rd.hdr.CallDepth, MaxCallDepth)
	}
	rd.src = byteSrc{r: r, buf: make([]byte, 0, 1<<16)}
	rd.prevEnd0 = rd.hdr.T0
	rd.blockEnd = -1
	rd.paths = [][]uint64{nil}
	if t := rd.hdr.Ticks; t != nil {
		if !(t.NsPerTick > 0) || t.NsPerTick > 1e6 {
			return fail(ErrCorrupt, "header: ticks of %v ns", t.NsPerTick)
		}
		rd.ticks = true
		rd.prevEnd0 = t.Tick
		rd.cals = []calPoint{{tick: t.Tick, ns: t.Ns}}
		rd.rate = t.NsPerTick
	}
	rd.cur = rd.stream(0)
	return rd, nil
}

// stream returns stream number n, made on its first use.
func (r *Reader) stream(n int) *stream {
	for len(r.streams) <= n {
		r.streams = append(r.streams, nil)
	}
	if r.streams[n] == nil {
		r.streams[n] = &stream{prevEnd: r.prevEnd0}
	}
	return r.streams[n]
}

// Paths returns the call paths read so far (see Record.Path): Paths()[i]
// is path i, return addresses from the caller of the call's function
// outwards; Paths()[0] is nil.
func (r *Reader) Paths() [][]uint64 { return r.paths }

func (r *Reader) internPath(p []uint64) uint32 {
	if len(p) == 0 {
		return 0
	}
	var k pathKey
	k[0] = uint64(len(p))
	copy(k[1:], p)
	if id, ok := r.pathIDs[k]; ok {
		return id
	}
	if r.pathIDs == nil {
		r.pathIDs = map[pathKey]uint32{}
	}
	id := uint32(len(r.paths))
	r.pathIDs[k] = id
	r.paths = append(r.paths, append([]uint64(nil), p...))
	return id
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

// Next decodes the next records (up to a few thousand) and appends them to
// dst. It returns io.EOF at the clean end of the log; a log cut short
// returns an *Error wrapping ErrTruncated, after every complete record.
func (r *Reader) Next(dst []Record) ([]Record, error) {
	if err := r.await(); err != nil {
		return dst, err
	}
	n := min(r.nready-r.readyAt, 4096)
	dst = append(dst, r.pend[r.readyAt:r.readyAt+n]...)
	r.readyAt += n
	return dst, nil
}

// Batch is Next without the copy: it returns the next ready records (a
// few thousand) in place, valid until the reader's next call. It returns
// io.EOF at the clean end of the log, and the error of a damaged one
// after every record before it, as Next does.
func (r *Reader) Batch() ([]Record, error) {
	if err := r.await(); err != nil {
		return nil, err
	}
	recs := r.pend[r.readyAt:r.nready]
	r.readyAt = r.nready
	return recs, nil
}

// await decodes until some records are ready to hand out, or returns
// the error that ended the log (io.EOF at its clean end) once every
// record before it was handed out.
func (r *Reader) await() error {
	for r.readyAt == r.nready {
		if r.done {
			if r.err != nil {
				err := r.err
				r.err = nil
				return err
			}
			return io.EOF
		}
		r.compact()
		r.fill()
	}
	return nil
}

// compact drops the records handed out, moving the rest (those not yet
// verified or converted) to the front of pend.
func (r *Reader) compact() {
	n := r.readyAt
	if n == 0 {
		return
	}
	rest := copy(r.pend, r.pend[n:])
	r.pend = r.pend[:rest]
	r.nver -= n
	r.nconv -= n
	r.nready -= n
	r.readyAt = 0
}

// fill decodes items until some records are ready or the log ends. A
// record is ready once a CHECK has verified it and, in a log timed in
// ticks, the next calibration point has come, so that its times are
// interpolated between the two points around them, as the clock ran. At a
// clean end of the data (a zero byte or the end of the file between items:
// a rank killed while logging) the records not yet verified are kept; when
// the log is cut inside an item or fails a check, they are dropped, with
// the error.
func (r *Reader) fill() {
	const batch = 4096
	for !r.done && r.nready-r.readyAt < batch {
		// Decoded in place, into pend's spare room: pend itself grows only
		// by a record that came whole.
		if len(r.pend) == cap(r.pend) {
			r.pend = slices.Grow(r.pend, max(batch, len(r.pend)/4))
		}
		ok, err := r.item(&r.pend[:len(r.pend)+1][len(r.pend)])
		if err != nil {
			r.done = true
			if errors.Is(err, io.EOF) {
				r.nver = len(r.pend)
			} else {
				r.err = err
				r.pend = r.pend[:r.nver]
				r.nrec = r.nrecVer
				if e, ok := err.(*Error); ok && errors.Is(err, ErrTruncated) {
					e.Detail = fmt.Sprintf("log ends inside an item after %d records", r.nrec)
				}
			}
			r.convert(len(r.pend)) // along the last rate
			r.release()
			return
		}
		if ok {
			r.pend = r.pend[:len(r.pend)+1]
			if len(r.pend) >= maxPend { // no checks or calibration points: take them as they are
				r.nver = len(r.pend)
				if r.hdr.Threads {
					// The last call waits for sub-records that may follow.
					for r.nver > 0 && r.pend[r.nver-1].Op.IsSub() {
						r.nver--
					}
					r.nver = max(r.nver-1, r.nready)
				}
				r.nrecVer = r.nrec - uint64(len(r.pend)-r.nver)
				r.convert(len(r.pend))
				r.release()
			}
		}
	}
}

// maxPend bounds the records held waiting for a check or a calibration
// point.
const maxPend = 1 << 20

// convert converts the times of pend[nconv:n] from ticks to ns along the
// current line.
func (r *Reader) convert(n int) {
	for i := r.nconv; i < n; i++ {
		rec := &r.pend[i]
		if !rec.Op.IsSub() {
			rec.Start, rec.End = r.toNs(rec.Start), r.toNs(rec.End)
		}
	}
	r.nconv = max(r.nconv, n)
}

// release makes the verified, converted records ready. In a threaded log
// it first puts them in the order their calls ended (see inEndOrder).
func (r *Reader) release() {
	n := max(r.nready, min(r.nver, r.nconv))
	if r.hdr.Threads && n-r.nready > 1 {
		r.inEndOrder(r.pend[r.nready:n])
	}
	r.nready = n
}

// inEndOrder sorts recs, calls with their sub-records, by the calls' ends,
// keeping the log's order among equal ends. The threads of a threaded log
// write their calls into regions of the log claimed ahead (docs/
// log-format.md, "Threads"), so the log holds each thread's calls in its
// order, but another thread's calls of the same time span may lie before
// or after them; the calls between two CHECKs all ended between the two,
// so sorting what each CHECK releases gives the order the calls ended in,
// as the analysis expects (a message's ends are matched in that order).
func (r *Reader) inEndOrder(recs []Record) {
	groups := r.groups[:0]
	sorted := true
	last := int64(math.MinInt64)
	for i := range recs {
		if recs[i].Op.IsSub() && i > 0 {
			groups[len(groups)-1].n++
			continue
		}
		key := recs[i].End
		if recs[i].Op.IsSub() { // sub-records of a call released before: they stay first
			key = math.MinInt64
		}
		if key < last {
			sorted = false
		}
		last = key
		groups = append(groups, callGroup{at: int32(i), n: 1, end: key})
	}
	r.groups = groups
	if sorted {
		return
	}
	slices.SortStableFunc(groups, func(a, b callGroup) int { return cmp.Compare(a.end, b.end) })
	r.sortBuf = append(r.sortBuf[:0], recs...)
	at := 0
	for _, g := range groups {
		at += copy(recs[at:], r.sortBuf[g.at:g.at+g.n])
	}
}

// callGroup is a call and its sub-records in the records being sorted.
type callGroup struct {
	at, n int32
	end   int64
}

// Skim reads the rest of the log as Next does, and checks it the same way,
// but hands to fn only the calls for which want(op) is true and their
// sub-records, in log order; it returns the number of calls (records other
// than sub-records) it read. The clean end of the log is a nil error;
// damage is the error Next would return, after the calls before it. A
// reader that needs the number of calls before the records themselves, of
// a log that does not end with its trailer (TailCalls), can skim the log
// first and read it again.
func (r *Reader) Skim(want func(Op) bool, fn func(*Record)) (calls int, err error) {
	var full [256]bool
	for o := range full {
		full[o] = want(Op(o))
	}
	wanted := false
	for {
		if err := r.await(); err != nil {
			if err == io.EOF {
				err = nil
			}
			return calls, err
		}
		for i := r.readyAt; i < r.nready; i++ { // from what Next has not handed out
			rec := &r.pend[i]
			if rec.Op.IsSub() {
				if wanted {
					fn(rec)
				}
				continue
			}
			calls++
			wanted = full[rec.Op]
			if wanted {
				fn(rec)
			}
		}
		r.readyAt = r.nready
	}
}

// item reads one stream item. It returns true with a record in rec, false
// for an item that is not a record, io.EOF at the end of the data, or an
// *Error.
func (r *Reader) item(rec *Record) (bool, error) {
	src := &r.src
	inBlock := false
	if r.blockEnd >= 0 {
		switch off := src.offset(); {
		case off == r.blockEnd:
			r.blockEnd, r.cur = -1, r.streams[0]
		case off > r.blockEnd:
			return false, r.errf(ErrCorrupt, "an item crosses the end of its block after %d records", r.nrec)
		default:
			inBlock = true
		}
	}
	tag, err := src.byte()
	if err != nil {
		if inBlock {
			return false, r.srcErr(io.ErrUnexpectedEOF, "a block")
		}
		return false, io.EOF // the end of the file: the end of the data
	}
	if r.ended && tag != tagCheck {
		return false, io.EOF // nothing but the CHECK follows the trailer
	}
	if r.afterHole {
		// A block not committed is followed by another block or the end
		// of the data; anything else means its length was not all written.
		r.afterHole = false
		if tag != tagBlock && tag != tagEnd {
			return false, io.EOF
		}
	}
	if inBlock && tag == tagEnd {
		// A thread's region: its calls end here, the rest of it is
		// unused (zero), or its thread died in the call it was writing.
		if src.skip(uint64(r.blockEnd-src.offset())) != nil {
			return false, io.EOF // cut short: the end of the data
		}
		return false, nil
	}
	if inBlock && (tag == tagSkip || tag == tagBlock) {
		return false, r.errf(ErrCorrupt, "item %#x inside a block after %d records", tag, r.nrec)
	}
	switch {
	case tag == tagEnd:
		if r.hdr.Threads {
			return false, r.hole()
		}
		return false, io.EOF
	case tag == tagBlock:
		n, err := src.uvarint()
		if err != nil {
			return false, r.srcErr(err, "a block")
		}
		start := src.offset()
		sn, err := src.uvarint()
		if err != nil {
			return false, r.srcErr(err, "a block")
		}
		if n > maxBlock || sn >= MaxStreams || src.offset() > start+int64(n) {
			return false, r.errf(ErrCorrupt, "block of %d bytes of stream %d after %d records", n, sn, r.nrec)
		}
		r.blockEnd = start + int64(n)
		r.cur = r.stream(int(sn))
		return false, nil
	case tag <= maxSlot:
		return true, r.record(int(tag), rec)
	case tag == tagDef:
		s, err1 := src.byte()
		op, err2 := src.byte()
		cs, err3 := src.uvarint()
		// The first error (here and below): the reads after a bad number
		// are not where the log says, and end wherever the buffer does.
		if err := cmp.Or(err1, err2, err3); err != nil {
			return false, r.srcErr(err, "a slot definition")
		}
		if s == 0 || s > maxSlot {
			return false, r.errf(ErrCorrupt, "slot %d defined after %d records", s, r.nrec)
		}
		if opClass[op] == classInvalid {
			return false, r.errf(ErrCorrupt, "record %d has unknown operation code %d", r.nrec, op)
		}
		r.cur.slots[s].reset(Op(op), cs)
		return false, nil
	case tag == tagCal:
		t, err1 := src.uvarint()
		n, err2 := src.uvarint()
		if err := cmp.Or(err1, err2); err != nil {
			return false, r.srcErr(err, "a calibration point")
		}
		r.calibrate(unzig64(t), unzig64(n))
		return false, nil
	case tag == tagChunk:
		kind, err1 := src.uvarint()
		size, err2 := src.uvarint()
		if err := cmp.Or(err1, err2); err != nil {
			return false, r.srcErr(err, "a chunk header")
		}
		if size > maxChunkPayload {
			return false, r.errf(ErrCorrupt, "chunk of %d bytes after %d records", size, r.nrec)
		}
		buf, err := src.read(int(size))
		if err != nil {
			return false, r.srcErr(err, "a chunk")
		}
		return false, r.chunk(kind, buf)
	case tag == tagSkip:
		b, err := src.read(4)
		if err != nil {
			return false, r.srcErr(err, "a skip")
		}
		n := binary.LittleEndian.Uint32(b)
		if n > maxChunkPayload {
			return false, r.errf(ErrCorrupt, "skip of %d bytes after %d records", n, r.nrec)
		}
		if _, err := src.read(int(n)); err != nil {
			return false, r.srcErr(err, "a skip")
		}
		return false, nil
	case tag == tagCheck:
		sum := src.crcBefore(1)
		b, err := src.read(4)
		if err != nil {
			return false, r.srcErr(err, "a checksum")
		}
		if want := binary.LittleEndian.Uint32(b); want != sum {
			return false, r.errf(ErrCorrupt, "checksum mismatch after %d records", r.nrec)
		}
		src.resetCRC()
		r.nver, r.nrecVer = len(r.pend), r.nrec
		if !r.ticks {
			r.nconv = len(r.pend)
		}
		r.release()
		if r.ended {
			return false, io.EOF
		}
		return false, nil
	}
	return false, r.errf(ErrCorrupt, "unknown item %#x after %d records", tag, r.nrec)
}

// hole reads what follows a zero byte in a threaded log: the end of the
// data (another zero, or the end of the file), or the length of a block
// whose thread died before committing it, which it skips.
func (r *Reader) hole() error {
	src := &r.src
	if c, ok := src.peek(); !ok || c == 0 {
		return io.EOF
	}
	n, err := src.uvarint()
	if err != nil || n > maxBlock || src.skip(n) != nil {
		return io.EOF // cut short: the end of the data
	}
	r.afterHole = true
	return nil
}

func (r *Reader) srcErr(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return r.errf(ErrTruncated, "log ends inside %s after %d records", what, r.nrec)
	}
	if errors.Is(err, errVarint) {
		return r.errf(ErrCorrupt, "bad number in %s after %d records", what, r.nrec)
	}
	return r.errf(ErrCorrupt, "%s after %d records: %v", what, r.nrec, err)
}

func (r *Reader) chunk(kind uint64, buf []byte) error {
	le := binary.LittleEndian
	switch kind {
	case ChunkClockFinal:
		if len(buf) != 24 {
			return r.errf(ErrCorrupt, "clock chunk of %d bytes", len(buf))
		}
		r.final = &SyncPoint{int64(le.Uint64(buf[0:])), int64(le.Uint64(buf[8:])), int64(le.Uint64(buf[16:]))}
		r.hdr.Clock.Final = r.final
	case ChunkTrailer:
		if len(buf) != trailerLen {
			return r.errf(ErrCorrupt, "trailer chunk of %d bytes", len(buf))
		}
		r.trailer = decodeTrailer(buf)
		r.ended = true // only its CHECK may follow
	case ChunkModules:
		var mods []Module
		if err := json.Unmarshal(buf, &mods); err != nil {
			return r.errf(ErrCorrupt, "module chunk: %v", err)
		}
		r.hdr.Modules = append(r.hdr.Modules, mods...)
	case ChunkControlVars:
		var vars []ControlVar
		if err := json.Unmarshal(buf, &vars); err != nil {
			return r.errf(ErrCorrupt, "control-variable chunk: %v", err)
		}
		r.hdr.EagerLimits = vars
	case ChunkUnwrapped:
		calls, err := r.unwrapped(buf)
		if err != nil {
			return r.errf(ErrCorrupt, "unwrapped-calls chunk: %v", err)
		}
		r.hdr.Unwrapped = append(r.hdr.Unwrapped, calls...)
	default:
		return r.errf(ErrCorrupt, "unknown chunk kind %d after %d records", kind, r.nrec)
	}
	return nil
}

// unwrapped decodes an Unwrapped chunk, the times into ns at the log's
// rate (the chunk comes at the end, after the last calibration point).
func (r *Reader) unwrapped(b []byte) ([]UnwrappedCall, error) {
	var calls []UnwrappedCall
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	for len(b) > 0 {
		n, ok1 := next()
		if !ok1 || n == 0 || n > 64 || n > uint64(len(b)) {
			return nil, errors.New("bad name")
		}
		name := string(b[:n])
		b = b[n:]
		c, ok2 := next()
		t, ok3 := next()
		if !ok2 || !ok3 || t > math.MaxInt64 {
			return nil, errors.New("bad count")
		}
		ns := int64(t)
		if r.ticks {
			ns = int64(math.Round(float64(t) * r.rate))
		}
		calls = append(calls, UnwrappedCall{Name: name, Calls: c, Ns: ns})
	}
	return calls, nil
}

// calibrate takes in a calibration point: the records before it get
// their times, each through the segment between the two points around its
// own time (with threads a record written after a point may have started,
// or even ended, before it: converting by the tick, not by the place in
// the log, keeps every thread's times in order); later records wait for
// the next point. A point that does not follow the last in both tick and
// ns is ignored.
func (r *Reader) calibrate(tick, ns int64) {
	if !r.ticks {
		return
	}
	last := &r.cals[len(r.cals)-1]
	if tick <= last.tick || ns <= last.ns {
		return
	}
	last.slope = float64(ns-last.ns) / float64(tick-last.tick)
	first := &r.cals[0]
	r.rate = float64(ns-first.ns) / float64(tick-first.tick)
	r.cals = append(r.cals, calPoint{tick: tick, ns: ns})
	r.convert(len(r.pend))
	r.release()
}

func (r *Reader) toNs(t int64) int64 {
	if !r.ticks {
		return t
	}
	c := r.cals
	n := len(c)
	if n == 1 || t >= c[n-1].tick {
		return c[n-1].ns + int64(math.Round(float64(t-c[n-1].tick)*r.rate))
	}
	i := r.seg
	if i >= n-1 || t < c[i].tick || t >= c[i+1].tick {
		i = max(0, sort.Search(n, func(k int) bool { return c[k].tick > t })-1)
		r.seg = i
	}
	return c[i].ns + int64(math.Round(float64(t-c[i].tick)*c[i].slope))
}

// Incomplete reports, once Next has returned io.EOF, a log that ends inside
// a call's sub-records: an *Error wrapping ErrTruncated, or nil.
func (r *Reader) Incomplete() error {
	for _, st := range r.streams {
		if st != nil && st.subLeft != 0 {
			return r.errf(ErrTruncated, "log ends %d sub-records short", st.subLeft)
		}
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

// Log is one rank's log read whole.
type Log struct {
	Path    string
	Header  Header
	Records []Record
	Trailer Trailer
	Comms   []Comm
	// Paths are the call paths the records name (Record.Path); Paths[0]
	// is nil.
	Paths [][]uint64
	// Damage is set when the log ends early: a rank that died while writing
	// leaves a cut frame. Records holds every complete chunk before it.
	Damage error
}

// CallPath returns rec's call path (nil for none).
func (l *Log) CallPath(rec *Record) []uint64 {
	if int(rec.Path) >= len(l.Paths) {
		return nil
	}
	return l.Paths[rec.Path]
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
	l.Paths = rd.paths
	l.Comms = BuildComms(&l.Header, l.Records)
	return l, nil
}
