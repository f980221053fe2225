package cpath

// topo's exchanges: a part's framing (a header and edges, plain or
// LZ4-compressed), the edges' packed form, and topoComm, which counts the
// rounds and bytes.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/pierrec/lz4/v4"

	"github.com/cpath/cpath/internal/mpix"
)

// A part of an exchange is a header (fixed size at each exchange, maybe
// none) and edges. Encoded in mpix's framed form: empty if both are, else
// a topoPart record, then the header and the edges as in memory (plain),
// or the header and the packed edges, LZ4-compressed, as bytes.
type topoPart struct {
	Mode uint32 // topoPlain or topoLZ4
	_    uint32
	Raw  uint64 // topoLZ4: the bytes the block holds uncompressed
}

const (
	topoPlain = 0
	topoLZ4   = 1
)

const topoPartSize = int(unsafe.Sizeof(topoPart{}))

// topoPlainSize is the bytes of a plain part of hdr bytes and n edges: a
// compressed part counts at it.
func topoPlainSize(hdr, n int) int {
	if hdr == 0 && n == 0 {
		return 0
	}
	return topoPartSize + mpix.FramedSize(hdr) + mpix.FramedSize(topoEdgeSize*n)
}

func topoEncode(hdr []byte, es []topoEdge, compress bool) []byte {
	n := len(hdr) + topoEdgeSize*len(es)
	if n == 0 {
		return nil
	}
	if compress {
		packed := append(slices.Clip(hdr), topoPack(es)...)
		z := make([]byte, lz4.CompressBlockBound(n))
		if m, err := lz4.CompressBlock(packed, z, nil); err == nil && m > 0 && m < n {
			e := mpix.NewEncoder(make([]byte, 0, topoPartSize+mpix.FramedSize(m)))
			mpix.PutRecord(e, topoPart{Mode: topoLZ4, Raw: uint64(n)})
			e.PutBytes(z[:m])
			return e.Bytes()
		}
	}
	b, view := topoPlainPart(hdr, len(es))
	copy(view, es)
	return b
}

// topoPlainPart is a plain part of hdr and n edges to be filled in place
// (topoEncode's plain form, without building the edges first).
func topoPlainPart(hdr []byte, n int) ([]byte, []topoEdge) {
	if len(hdr) == 0 && n == 0 {
		return nil, nil
	}
	e := mpix.NewEncoder(make([]byte, 0, topoPlainSize(len(hdr), n)))
	mpix.PutRecord(e, topoPart{Mode: topoPlain})
	e.PutBytes(hdr)
	es := mpix.PutRecordsInPlace[topoEdge](e, n)
	return e.Bytes(), es
}

func topoDecode(b []byte, hdrSize int) (hdr []byte, es []topoEdge, err error) {
	if len(b) == 0 {
		return nil, nil, nil
	}
	d := mpix.NewDecoder(b)
	h := mpix.ReadRecord[topoPart](d)
	switch {
	case d.Err() != nil:
	case h.Mode == topoPlain:
		hdr = d.ReadBytes()
		es = mpix.ReadRecords[topoEdge](d)
		if d.Err() == nil && len(hdr) != hdrSize {
			return nil, nil, fmt.Errorf("topo: part with a header of %d bytes, want %d", len(hdr), hdrSize)
		}
	case h.Mode == topoLZ4:
		z := d.ReadBytes()
		if d.Err() != nil {
			break
		}
		// An LZ4 block expands at most 255-fold: a larger length is
		// corrupt, and must not allocate.
		if n := h.Raw; n < uint64(hdrSize) || (n-uint64(hdrSize))%topoEdgeSize != 0 || n > 255*uint64(len(z))+16 {
			return nil, nil, fmt.Errorf("topo: compressed part of %d bytes claims %d", len(z), n)
		}
		raw := make([]byte, h.Raw)
		m, err := lz4.UncompressBlock(z, raw)
		if err != nil || uint64(m) != h.Raw {
			return nil, nil, fmt.Errorf("topo: corrupt compressed part (%d of %d bytes): %v", m, h.Raw, err)
		}
		hdr, es = raw[:hdrSize], topoUnpack(raw[hdrSize:])
	default:
		return nil, nil, fmt.Errorf("topo: unknown part mode %d", h.Mode)
	}
	if err := d.Done(); err != nil {
		return nil, nil, fmt.Errorf("topo: %v", err)
	}
	return hdr, es, nil
}

// topoEdgeSize is the bytes of a topoEdge, as shipped.
const topoEdgeSize = 48

// topoPack makes edges compressible before LZ4 (the plain arrays of
// absolute times only halve): each field becomes a small number (the
// start a delta from the previous edge's, the other times offsets from
// it, ids deltas), zigzag-coded, and the bytes are transposed so that
// byte j of every edge is contiguous: the high bytes become runs of zeros.
func topoPack(es []topoEdge) []byte {
	n := len(es)
	out := make([]byte, topoEdgeSize*n)
	var prev topoEdge
	var b [topoEdgeSize]byte
	for i := range es {
		e := &es[i]
		binary.LittleEndian.PutUint64(b[0:], topoZig64(e.S-prev.S))
		binary.LittleEndian.PutUint64(b[8:], topoZig64(e.E-e.S))
		binary.LittleEndian.PutUint64(b[16:], topoZig64(e.S-e.PrevStart))
		binary.LittleEndian.PutUint64(b[24:], topoZig64(e.CallEnd-e.E))
		binary.LittleEndian.PutUint32(b[32:], topoZig32(e.Call-prev.Call))
		binary.LittleEndian.PutUint32(b[36:], topoZig32(e.Call-e.Prev))
		binary.LittleEndian.PutUint32(b[40:], topoZig32(e.Rank-prev.Rank))
		binary.LittleEndian.PutUint32(b[44:], uint32(e.Flags))
		for j, x := range b {
			out[j*n+i] = x
		}
		prev = *e
	}
	return out
}

// topoUnpack inverts topoPack; len(b) is a multiple of topoEdgeSize.
func topoUnpack(b []byte) []topoEdge {
	n := len(b) / topoEdgeSize
	es := make([]topoEdge, n)
	var prev topoEdge
	var x [topoEdgeSize]byte
	for i := range es {
		for j := range x {
			x[j] = b[j*n+i]
		}
		e := &es[i]
		e.S = prev.S + topoUnzig64(binary.LittleEndian.Uint64(x[0:]))
		e.E = e.S + topoUnzig64(binary.LittleEndian.Uint64(x[8:]))
		e.PrevStart = e.S - topoUnzig64(binary.LittleEndian.Uint64(x[16:]))
		e.CallEnd = e.E + topoUnzig64(binary.LittleEndian.Uint64(x[24:]))
		e.Call = prev.Call + topoUnzig32(binary.LittleEndian.Uint32(x[32:]))
		e.Prev = e.Call - topoUnzig32(binary.LittleEndian.Uint32(x[36:]))
		e.Rank = prev.Rank + topoUnzig32(binary.LittleEndian.Uint32(x[40:]))
		e.Flags = int32(binary.LittleEndian.Uint32(x[44:]))
		prev = *e
	}
	return es
}

func topoZig64(x int64) uint64   { return uint64(x<<1) ^ uint64(x>>63) }
func topoUnzig64(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
func topoZig32(x int32) uint32   { return uint32(x<<1) ^ uint32(x>>31) }
func topoUnzig32(u uint32) int32 { return int32(u>>1) ^ -int32(u&1) }

// topoComm wraps the communicator to count the bytes before compression.
type topoComm struct {
	c      mpix.Comm
	raw    int64 // for parts sent to other ranks: their plain size minus their size as sent
	rounds int64 // collective exchanges (the final reduction of the stats not counted)
}

// exchange is Alltoallv of parts (hdr[p], es[p]) encoded, and compressed
// if asked (not the part a rank keeps), decoded on arrival. Every header
// has hdrSize bytes. A part that does not decode is a local failure (ferr),
// which leaves the collective sequence intact; err is an MPI failure.
func (t *topoComm) exchange(hdr [][]byte, es [][]topoEdge, hdrSize int, compress bool) (rh [][]byte, re [][]topoEdge, ferr, err error) {
	me, P := t.c.Rank(), t.c.Size()
	send := make([][]byte, P)
	for p := range send {
		if p != me { // a rank's own part stays as it is
			send[p] = topoEncode(hdr[p], es[p], compress)
			t.raw += int64(topoPlainSize(len(hdr[p]), len(es[p])) - len(send[p]))
		}
	}
	return t.exchangeEncoded(send, hdr[me], es[me], hdrSize)
}

// exchangeEncoded is exchange of parts already encoded (send[me] unused;
// the rank's own part is hdr, es, kept as it is).
func (t *topoComm) exchangeEncoded(send [][]byte, hdr []byte, es []topoEdge, hdrSize int) (rh [][]byte, re [][]topoEdge, ferr, err error) {
	me, P := t.c.Rank(), t.c.Size()
	t.rounds++
	recv, err := t.c.Alltoallv(send)
	if err != nil {
		return nil, nil, nil, err
	}
	rh, re = make([][]byte, P), make([][]topoEdge, P)
	for p, b := range recv {
		if p == me {
			rh[p], re[p] = hdr, es
			continue
		}
		if rh[p], re[p], ferr = topoDecode(b, hdrSize); ferr != nil {
			return nil, nil, ferr, nil
		}
	}
	return rh, re, nil, nil
}

// topoParseEnds reads a header of topoEndsSize bytes.
func topoParseEnds(b []byte) (topoEnds, error) {
	x, err := mpix.FromBytes[topoEnds](b)
	if err != nil || len(x) != 1 {
		return topoEnds{}, errors.New("topo: a rank's message to rank 0 lacks its ends")
	}
	return x[0], nil
}
