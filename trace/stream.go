package trace

import (
	"encoding/binary"
	"hash/crc32"
)

// The body of a log is a sequence of items, each opening with a tag byte
// (see docs/log-format.md):
//
//	0x00          end of the data (the logger's file is zero beyond it);
//	              in a threaded log, when a length follows, a block that
//	              was not committed
//	0x01…0xEF     a record, coded against the state of slot <tag>
//	0xF0 DEF      slot u8, op u8, callsite uvarint: (re)defines a slot
//	0xF1 CAL      tick varint, ns varint: a clock calibration point
//	0xF2 CHUNK    kind uvarint, length uvarint, payload
//	0xF3 SKIP     length u32, then that many bytes to ignore
//	0xF4 CHECK    u32: CRC-32C of every byte since the previous CHECK
//	              (or the start of the body) up to this tag
//	0xF5 BLOCK    length uvarint, then that many bytes: stream uvarint
//	              and items coded in that stream's state
//
// Records, definitions and slots belong to a stream: items outside blocks
// to stream 0, those in a block to the block's. A record: mask uvarint;
// for each bit of mask, in bit order, the field that differs from the
// slot's prediction; then, for a timed record, dstart and duration (zigzag
// varints, clock ticks). Op and CallSite are the slot's. A field not in
// mask takes the predicted value: the slot's last value, and for Seq and
// Req the last value plus the last step.
const (
	tagEnd   = 0x00
	maxSlot  = 0xEF
	tagDef   = 0xF0
	tagCal   = 0xF1
	tagChunk = 0xF2
	tagSkip  = 0xF3
	tagCheck = 0xF4
	tagBlock = 0xF5

	nSlots = maxSlot + 1 // slot 0 is never used

	// MaxStreams bounds the streams of a log (the logger's threads that
	// call MPI at once).
	MaxStreams = 1 << 12
	// MaxCallDepth bounds a call path (CPATH_CALLDEPTH).
	MaxCallDepth = 8
)

// Mask bits of a record, in the order their values follow.
const (
	mPeer = 1 << iota
	mTag
	mBytes
	mSeq
	mReq
	mFlags
	mCount
	mComm
	mRoot
	mThread
	mPath
	mAll = 1<<iota - 1
)

// ChunkModules holds the loaded modules (JSON array of Module), written at
// MPI_Init and again whenever a call site falls outside the known ones.
const ChunkModules = 5

// ChunkUnwrapped holds the counts of the MPI calls the logger does not
// record (UnwrappedCall), written at the end of the log before the
// trailer when the rank made any: for each call, the uvarint length of its
// name, the name, and uvarints of its calls and its time (in the body's
// clock unit: ticks when the header has Ticks).
const ChunkUnwrapped = 6

// ChunkControlVars holds the MPI's eager limits (JSON array of
// ControlVar), read at MPI_Finalize, after the call is recorded: from Open
// MPI's MCA variable registry, else through MPI_T (whose start-up takes
// Open MPI 4.1 about 0.2 s). The reader puts them in Header.EagerLimits.
const ChunkControlVars = 7

// maxChunkPayload bounds a CHUNK item, so that a reader buffers at most that.
const maxChunkPayload = 1 << 22

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// slot is the coding state shared, in mirror image, by encoder and decoder.
type slot struct {
	defined         bool
	op              Op
	callsite        uint64
	flags           Flags
	thread          uint16
	comm            uint32
	peer, tag, root int32
	count           uint32
	bytes           uint64
	seq, seqStep    uint32
	req, reqStep    uint32
	npath           uint8 // the last call path: path[:npath]
	path            [MaxCallDepth]uint64
	pathID          uint32  // decoder only: its index in the reader's paths
	key             slotKey // encoder only
	used            uint64  // encoder only: last use, for replacement
}

type slotKey struct {
	op       Op
	callsite uint64 // the call's callsite (the parent's for a sub-record)
	sub      uint32 // position among the call's sub-records, 0 for the call
}

func (s *slot) reset(op Op, callsite uint64) {
	*s = slot{defined: true, op: op, callsite: callsite, peer: PeerNone, root: PeerNone}
}

func zig64(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzig64(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// pathPred is what a call path's element i is coded against: the slot's
// last path's element i, or, past its end, the element before (the call
// site for the first).
func pathPred(sl *slot, path []uint64, i int) uint64 {
	switch {
	case i < int(sl.npath):
		return sl.path[i]
	case i == 0:
		return sl.callsite
	}
	return path[i-1]
}

// encoder writes records as stream items (the Go twin of the logger's C
// encoder in logger/encode.c; both must produce what decoder reads).
type encoder struct {
	slots   [nSlots]slot
	prevEnd int64
	clock   uint64
	// the call the next sub-records belong to
	parentCS uint64
	subPos   uint32
}

func (e *encoder) slotFor(k slotKey, callsite uint64, dst []byte) (int, []byte) {
	h := k.callsite*0x9E3779B97F4A7C15 ^ uint64(k.op)*0xC2B2AE3D27D4EB4F ^ uint64(k.sub)*0x165667B19E3779F9
	h ^= h >> 29
	s1 := 1 + int(h%maxSlot)
	s2 := 1 + int((h>>32)%maxSlot)
	e.clock++
	for _, s := range [2]int{s1, s2} {
		sl := &e.slots[s]
		if sl.defined && sl.key == k && sl.op == k.op && sl.callsite == callsite {
			sl.used = e.clock
			return s, dst
		}
	}
	s := s1
	if e.slots[s2].used < e.slots[s1].used {
		s = s2
	}
	sl := &e.slots[s]
	sl.reset(k.op, callsite)
	sl.key = k
	sl.used = e.clock
	dst = append(dst, tagDef, byte(s), byte(k.op))
	dst = binary.AppendUvarint(dst, callsite)
	return s, dst
}

// record appends one record's items to dst; path is its call path (nil for
// none, always for a sub-record).
func (e *encoder) record(dst []byte, r *Record, path []uint64) []byte {
	k := slotKey{op: r.Op, callsite: r.CallSite}
	if r.Op.IsSub() {
		k.callsite = e.parentCS
		e.subPos++
		k.sub = min(e.subPos, 64)
	} else {
		e.parentCS = r.CallSite
		e.subPos = 0
	}
	s, dst := e.slotFor(k, r.CallSite, dst)
	sl := &e.slots[s]
	dst = append(dst, byte(s))
	var mask uint64
	var vals [10]uint64
	if r.Peer != sl.peer {
		mask |= mPeer
		vals[0] = zig64(int64(r.Peer))
		sl.peer = r.Peer
	}
	if r.Tag != sl.tag {
		mask |= mTag
		vals[1] = zig64(int64(r.Tag))
		sl.tag = r.Tag
	}
	if r.Bytes != sl.bytes {
		mask |= mBytes
		vals[2] = r.Bytes
		sl.bytes = r.Bytes
	}
	if r.Seq != sl.seq+sl.seqStep {
		mask |= mSeq
		d := r.Seq - sl.seq
		vals[3] = zig64(int64(int32(d)))
		sl.seqStep = d
	}
	sl.seq = r.Seq
	if r.Req != sl.req+sl.reqStep {
		mask |= mReq
		d := r.Req - sl.req
		vals[4] = zig64(int64(int32(d)))
		sl.reqStep = d
	}
	sl.req = r.Req
	if r.Flags != sl.flags {
		mask |= mFlags
		vals[5] = uint64(r.Flags)
		sl.flags = r.Flags
	}
	if r.Count != sl.count {
		mask |= mCount
		vals[6] = uint64(r.Count)
		sl.count = r.Count
	}
	if r.Comm != sl.comm {
		mask |= mComm
		vals[7] = uint64(r.Comm)
		sl.comm = r.Comm
	}
	if r.Root != sl.root {
		mask |= mRoot
		vals[8] = zig64(int64(r.Root))
		sl.root = r.Root
	}
	if r.Thread != sl.thread {
		mask |= mThread
		vals[9] = uint64(r.Thread)
		sl.thread = r.Thread
	}
	samePath := len(path) == int(sl.npath)
	for i := 0; samePath && i < len(path); i++ {
		samePath = path[i] == sl.path[i]
	}
	if !samePath && !r.Op.IsSub() {
		mask |= mPath
	}
	m := mask
	dst = binary.AppendUvarint(dst, mask)
	for i := 0; i < 10 && mask != 0; i, mask = i+1, mask>>1 {
		if mask&1 != 0 {
			dst = binary.AppendUvarint(dst, vals[i])
		}
	}
	if m&mPath != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(path)))
		for i, a := range path {
			dst = binary.AppendUvarint(dst, zig64(int64(a-pathPred(sl, path, i))))
		}
		sl.npath = uint8(copy(sl.path[:], path))
	}
	if !r.Op.IsSub() {
		dst = binary.AppendUvarint(dst, zig64(r.Start-e.prevEnd))
		dst = binary.AppendUvarint(dst, zig64(r.End-r.Start))
		e.prevEnd = r.End
	}
	return dst
}

func appendChunk(dst []byte, kind int, payload []byte) []byte {
	dst = append(dst, tagChunk)
	dst = binary.AppendUvarint(dst, uint64(kind))
	dst = binary.AppendUvarint(dst, uint64(len(payload)))
	return append(dst, payload...)
}

// appendBlock appends a BLOCK of stream holding the items in payload.
func appendBlock(dst []byte, stream int, payload []byte) []byte {
	var sb [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(sb[:], uint64(stream))
	dst = append(dst, tagBlock)
	dst = binary.AppendUvarint(dst, uint64(n+len(payload)))
	dst = append(dst, sb[:n]...)
	return append(dst, payload...)
}
