package trace

import "encoding/binary"

// The on-disk record is the in-memory Record with three fields delta-coded,
// so that a regular pattern (say Irecv, Irecv, Isend, Isend, Waitall) repeats
// byte for byte but for the timing fields, which sit together at the end
// (their low halves first) so LZ4 sees one short literal run per record:
//
//	 0 op u8 · 1 flags u8 · 2 thread u16 · 4 comm u32 · 8 peer i32 · 12 tag i32
//	16 root i32 · 20 count u32 · 24 seq (coded) · 28 req (coded)
//	32 bytes u64 · 40 callsite u64
//	48 dstart lo · 52 duration lo · 56 dstart hi · 60 duration hi
//
// dstart is Start minus the End of the previous timed record (T0 for the
// first); sub-records store zero time and do not move that reference.
// seq is coded against the last seq on the same communicator, req against
// the last request id created; 0 stays 0 so calls without either repeat.

// codec holds the delta state shared, in mirror image, by encoder and decoder.
type codec struct {
	prevEnd int64
	lastReq uint32
	lastSeq []uint32 // by communicator index
}

func newCodec(t0 int64) codec { return codec{prevEnd: t0} }

func zig(d int32) uint32   { return uint32(d<<1) ^ uint32(d>>31) }
func unzig(u uint32) int32 { return int32(u>>1) ^ -int32(u&1) }

func (c *codec) seqRef(comm uint32) *uint32 {
	if comm == CommNone {
		comm = 0
	}
	if int(comm) >= len(c.lastSeq) {
		if comm > 1<<20 { // more communicators than any program creates: don't grow unbounded on bad input
			return new(uint32)
		}
		n := make([]uint32, comm+16)
		copy(n, c.lastSeq)
		c.lastSeq = n
	}
	return &c.lastSeq[comm]
}

func (c *codec) encode(dst []byte, r *Record) {
	le := binary.LittleEndian
	dst[0] = byte(r.Op)
	dst[1] = byte(r.Flags)
	le.PutUint16(dst[2:], r.Thread)
	le.PutUint32(dst[4:], r.Comm)
	le.PutUint32(dst[8:], uint32(r.Peer))
	le.PutUint32(dst[12:], uint32(r.Tag))
	le.PutUint32(dst[16:], uint32(r.Root))
	le.PutUint32(dst[20:], r.Count)
	var seq, req uint32
	if r.Seq != 0 {
		p := c.seqRef(r.Comm)
		seq = zig(int32(r.Seq-*p)) + 1
		*p = r.Seq
	}
	if r.Req != 0 {
		req = zig(int32(r.Req-c.lastReq)) + 1
		if r.Flags&FlagNewReq != 0 {
			c.lastReq = r.Req
		}
	}
	le.PutUint32(dst[24:], seq)
	le.PutUint32(dst[28:], req)
	le.PutUint64(dst[32:], r.Bytes)
	le.PutUint64(dst[40:], r.CallSite)
	var ds, du uint64
	if !r.Op.IsSub() {
		ds = uint64(r.Start - c.prevEnd)
		du = uint64(r.End - r.Start)
		c.prevEnd = r.End
	}
	le.PutUint32(dst[48:], uint32(ds))
	le.PutUint32(dst[52:], uint32(du))
	le.PutUint32(dst[56:], uint32(ds>>32))
	le.PutUint32(dst[60:], uint32(du>>32))
}

func (c *codec) decode(src []byte, r *Record) {
	le := binary.LittleEndian
	_ = src[63]
	r.Op = Op(src[0])
	r.Flags = Flags(src[1])
	r.Thread = le.Uint16(src[2:])
	r.Comm = le.Uint32(src[4:])
	r.Peer = int32(le.Uint32(src[8:]))
	r.Tag = int32(le.Uint32(src[12:]))
	r.Root = int32(le.Uint32(src[16:]))
	r.Count = le.Uint32(src[20:])
	r.Seq, r.Req = 0, 0
	if s := le.Uint32(src[24:]); s != 0 {
		p := c.seqRef(r.Comm)
		r.Seq = *p + uint32(unzig(s-1))
		*p = r.Seq
	}
	if q := le.Uint32(src[28:]); q != 0 {
		r.Req = c.lastReq + uint32(unzig(q-1))
		if r.Flags&FlagNewReq != 0 {
			c.lastReq = r.Req
		}
	}
	r.Bytes = le.Uint64(src[32:])
	r.CallSite = le.Uint64(src[40:])
	if r.Op.IsSub() {
		r.Start, r.End = 0, 0
		return
	}
	ds := int64(uint64(le.Uint32(src[48:])) | uint64(le.Uint32(src[56:]))<<32)
	du := int64(uint64(le.Uint32(src[52:])) | uint64(le.Uint32(src[60:]))<<32)
	r.Start = c.prevEnd + ds
	r.End = r.Start + du
	c.prevEnd = r.End
}

// decodeRaw reads a record in the logger's in-memory layout (absolute
// values), as the logger's emergency path writes it from a signal handler.
func decodeRaw(src []byte, r *Record) {
	le := binary.LittleEndian
	_ = src[63]
	r.Start = int64(le.Uint64(src[0:]))
	r.End = int64(le.Uint64(src[8:]))
	r.CallSite = le.Uint64(src[16:])
	r.Bytes = le.Uint64(src[24:])
	r.Op = Op(src[32])
	r.Flags = Flags(src[33])
	r.Thread = le.Uint16(src[34:])
	r.Comm = le.Uint32(src[36:])
	r.Peer = int32(le.Uint32(src[40:]))
	r.Tag = int32(le.Uint32(src[44:]))
	r.Root = int32(le.Uint32(src[48:]))
	r.Count = le.Uint32(src[52:])
	r.Seq = le.Uint32(src[56:])
	r.Req = le.Uint32(src[60:])
}
