package trace

// Decoding one record item: its mask, the fields that changed from its
// slot's last record, its times and call path, and the checks that keep
// records no logger writes from the analyzer.

import (
	"cmp"
	"encoding/binary"
)

// maxRecordBytes bounds a record item without a call path: its mask, ten
// fields, and a call's start and duration, each a varint.
const maxRecordBytes = 13 * binary.MaxVarintLen64

// record decodes a record item of slot s.
func (r *Reader) record(s int, rec *Record) error {
	st := r.cur
	sl := &st.slots[s]
	if !sl.defined {
		return r.errf(ErrCorrupt, "record %d uses undefined slot %d", r.nrec, s)
	}
	src := &r.src
	timed := !sl.op.IsSub()
	var vals [12]uint64 // by mask bit (but mPath), then a call's start and duration deltas
	var mask uint64
	decoded := false
	if rest := src.buf[src.pos:]; len(rest) >= maxRecordBytes {
		// The common case, the whole record in the buffer and no call
		// path: decoded in place, without a refill check per varint.
		// Anything else, a bad mask too, takes the path below.
		var i int
		if mask, i = uvarintAt(rest, 0); i > 0 && mask <= mAll && mask&mPath == 0 {
			for k, m := 0, mask; m != 0 && i > 0; k, m = k+1, m>>1 {
				if m&1 != 0 {
					vals[k], i = uvarintAt(rest, i)
				}
			}
			if timed && i > 0 {
				vals[10], i = uvarintAt(rest, i)
			}
			if timed && i > 0 {
				vals[11], i = uvarintAt(rest, i)
			}
			if i <= 0 {
				return r.srcErr(errVarint, "a record")
			}
			src.pos += i
			decoded = true
		}
	}
	if !decoded {
		var err error
		if mask, err = src.uvarint(); err != nil {
			return r.srcErr(err, "a record")
		}
		if mask > mAll {
			return r.errf(ErrCorrupt, "record %d has field mask %#x", r.nrec, mask)
		}
		for i, m := 0, mask&(mPath-1); m != 0; i, m = i+1, m>>1 {
			if m&1 != 0 {
				if vals[i], err = src.uvarint(); err != nil {
					return r.srcErr(err, "a record")
				}
			}
		}
		if mask&mPath != 0 {
			if err := r.readPath(sl); err != nil {
				return err
			}
		}
		if timed {
			ds, err1 := src.uvarint()
			du, err2 := src.uvarint()
			if err := cmp.Or(err1, err2); err != nil {
				return r.srcErr(err, "a record")
			}
			vals[10], vals[11] = ds, du
		}
	}
	if mask&mPeer != 0 {
		sl.peer = int32(unzig64(vals[0]))
	}
	if mask&mTag != 0 {
		sl.tag = int32(unzig64(vals[1]))
	}
	if mask&mBytes != 0 {
		sl.bytes = vals[2]
	}
	if mask&mSeq != 0 {
		sl.seqStep = uint32(unzig64(vals[3]))
	}
	sl.seq += sl.seqStep
	if mask&mReq != 0 {
		sl.reqStep = uint32(unzig64(vals[4]))
	}
	sl.req += sl.reqStep
	if mask&mFlags != 0 {
		sl.flags = Flags(vals[5])
	}
	if mask&mCount != 0 {
		sl.count = uint32(vals[6])
	}
	if mask&mComm != 0 {
		sl.comm = uint32(vals[7])
	}
	if mask&mRoot != 0 {
		sl.root = int32(unzig64(vals[8]))
	}
	if mask&mThread != 0 {
		sl.thread = uint16(vals[9])
	}
	// Field by field: a composite literal is built aside and copied.
	rec.Op, rec.CallSite, rec.Flags, rec.Thread, rec.Comm = sl.op, sl.callsite, sl.flags, sl.thread, sl.comm
	rec.Peer, rec.Tag, rec.Root, rec.Count, rec.Bytes = sl.peer, sl.tag, sl.root, sl.count, sl.bytes
	rec.Seq, rec.Req, rec.Path = sl.seq, sl.req, sl.pathID
	rec.Start, rec.End = 0, 0
	if timed {
		start := st.prevEnd + unzig64(vals[10])
		end := start + unzig64(vals[11])
		st.prevEnd = end
		rec.Start, rec.End = start, end // in ticks until fill converts them
	}
	if !r.valid(rec.Op, rec.Count, rec.Start, rec.End) {
		return r.check(rec)
	}
	r.nrec++
	return nil
}

// readPath reads a record's new call path into its slot.
func (r *Reader) readPath(sl *slot) error {
	src := &r.src
	if sl.op.IsSub() {
		return r.errf(ErrCorrupt, "record %d: a call path on a %v sub-record", r.nrec, sl.op)
	}
	n, err := src.uvarint()
	if err != nil {
		return r.srcErr(err, "a call path")
	}
	if n > MaxCallDepth {
		return r.errf(ErrCorrupt, "record %d has a call path of %d addresses", r.nrec, n)
	}
	var p [MaxCallDepth]uint64
	for i := 0; i < int(n); i++ {
		d, err := src.uvarint()
		if err != nil {
			return r.srcErr(err, "a call path")
		}
		p[i] = pathPred(sl, p[:], i) + uint64(unzig64(d))
	}
	sl.npath = uint8(copy(sl.path[:], p[:n]))
	sl.pathID = r.internPath(p[:n])
	return nil
}

// valid is check's common case, inlined into the decoding loops: true for
// a record check accepts (and accounts for), false for one it rejects,
// which check then describes.
func (r *Reader) valid(op Op, count uint32, start, end int64) bool {
	st := r.cur
	if cls := opClass[op]; cls == ClassSub {
		if st.subLeft == 0 {
			return false
		}
		st.subLeft--
		return true
	} else if cls == classInvalid || st.subLeft != 0 || end < start || count > 1<<24 {
		return false
	}
	st.subLeft = count
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

// check rejects records no logger writes, so that garbage that passed the
// checksums (or a foreign writer) cannot reach the analyzer.
func (r *Reader) check(rec *Record) error { return r.checkRec(rec.Op, rec.Count, rec.Start, rec.End) }

// checkRec is check on a record's operation, sub-record count and times
// (ignored for sub-records).
func (r *Reader) checkRec(op Op, count uint32, start, end int64) error {
	st := r.cur
	cls := opClass[op]
	if cls == classInvalid {
		return r.errf(ErrCorrupt, "record %d has unknown operation code %d", r.nrec, op)
	}
	if cls == ClassSub {
		if st.subLeft == 0 {
			return r.errf(ErrCorrupt, "record %d: %v without a call before it", r.nrec, op)
		}
		st.subLeft--
		return nil
	}
	if st.subLeft != 0 {
		return r.errf(ErrCorrupt, "record %d: %d sub-records missing before it", r.nrec, st.subLeft)
	}
	if end < start {
		return r.errf(ErrCorrupt, "record %d (%v) ends %d ns before it starts", r.nrec, op, start-end)
	}
	if count > 1<<24 {
		return r.errf(ErrCorrupt, "record %d (%v) claims %d sub-records", r.nrec, op, count)
	}
	st.subLeft = count
	return nil
}
