package trace

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
)

var errVarint = errors.New("varint overflows 64 bits")

// byteSrc reads the stream byte by byte from its own buffer and keeps the
// CRC-32C of the bytes consumed since the last CHECK.
type byteSrc struct {
	r        io.Reader
	buf      []byte
	pos      int
	crcFrom  int // buf[crcFrom:pos] is not yet in crc
	crc      uint32
	err      error
	consumed int64
}

// fill makes at least n unread bytes available, if the input has them.
func (b *byteSrc) fill(n int) bool {
	for len(b.buf)-b.pos < n {
		if b.err != nil {
			return false
		}
		// fold the consumed bytes into the CRC, drop them
		b.crc = crc32.Update(b.crc, castagnoli, b.buf[b.crcFrom:b.pos])
		rest := copy(b.buf[:cap(b.buf)], b.buf[b.pos:])
		b.consumed += int64(b.pos)
		b.buf, b.pos, b.crcFrom = b.buf[:rest], 0, 0
		if cap(b.buf)-rest < n || cap(b.buf) < 1<<16 {
			nb := make([]byte, rest, max(2*cap(b.buf), n+rest, 1<<16))
			copy(nb, b.buf)
			b.buf = nb
		}
		m, err := b.r.Read(b.buf[rest:cap(b.buf)])
		b.buf = b.buf[:rest+m]
		if err != nil {
			b.err = err
		}
	}
	return true
}

func (b *byteSrc) byte() (byte, error) {
	if b.pos >= len(b.buf) && !b.fill(1) {
		return 0, io.EOF
	}
	c := b.buf[b.pos]
	b.pos++
	return c, nil
}

func (b *byteSrc) uvarint() (uint64, error) {
	// Where the buffer holds the longest varint, decode it in place: the
	// byte-by-byte loop below, with its refill check per byte, is for the
	// last bytes of a buffer.
	if rest := b.buf[b.pos:]; len(rest) >= binary.MaxVarintLen64 {
		x, n := binary.Uvarint(rest)
		if n <= 0 {
			return 0, errVarint
		}
		b.pos += n
		return x, nil
	}
	var x uint64
	for s := uint(0); ; s += 7 {
		c, err := b.byte()
		if err != nil {
			return 0, io.ErrUnexpectedEOF
		}
		if s == 63 && c > 1 {
			return 0, errVarint
		}
		if c < 0x80 {
			return x | uint64(c)<<s, nil
		}
		x |= uint64(c&0x7f) << s
	}
}

// uvarintAt decodes the varint at b[i:], which holds at least
// binary.MaxVarintLen64 bytes, and returns it and the index after it, or
// -1 for a varint that overflows 64 bits.
func uvarintAt(b []byte, i int) (uint64, int) {
	if c := b[i]; c < 0x80 {
		return uint64(c), i + 1
	}
	x, n := binary.Uvarint(b[i:])
	if n <= 0 {
		return 0, -1
	}
	return x, i + n
}

// read returns the next n bytes (valid until the next call).
func (b *byteSrc) read(n int) ([]byte, error) {
	if !b.fill(n) {
		return nil, io.ErrUnexpectedEOF
	}
	p := b.buf[b.pos : b.pos+n]
	b.pos += n
	return p, nil
}

// crcBefore returns the CRC of the bytes consumed since the last reset,
// less the last k (the tag just read).
func (b *byteSrc) crcBefore(k int) uint32 {
	b.crc = crc32.Update(b.crc, castagnoli, b.buf[b.crcFrom:b.pos-k])
	b.crcFrom = b.pos - k
	return b.crc
}

// resetCRC starts a new checked stretch after the bytes consumed so far.
func (b *byteSrc) resetCRC() {
	b.crc = 0
	b.crcFrom = b.pos
}

// offset returns the offset in the input of the next byte.
func (b *byteSrc) offset() int64 { return b.consumed + int64(b.pos) }

// peek returns the next byte without consuming it.
func (b *byteSrc) peek() (byte, bool) {
	if b.pos >= len(b.buf) && !b.fill(1) {
		return 0, false
	}
	return b.buf[b.pos], true
}

// skip consumes n bytes without holding them all at once.
func (b *byteSrc) skip(n uint64) error {
	for n > 0 {
		if b.pos >= len(b.buf) && !b.fill(1) {
			return io.ErrUnexpectedEOF
		}
		k := uint64(len(b.buf) - b.pos)
		if k > n {
			k = n
		}
		b.pos += int(k)
		n -= k
	}
	return nil
}
