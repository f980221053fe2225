package trace

import (
	"encoding/binary"
	"io"
)

// trailerLen is the size of the Trailer chunk's payload.
const trailerLen = 32

// tailLen is the size of a log's end when it is the trailer chunk and its
// CHECK: tag, kind and length (one byte each), the payload, then the CHECK.
const tailLen = 3 + trailerLen + 5

func decodeTrailer(buf []byte) Trailer {
	le := binary.LittleEndian
	return Trailer{EndStatus(le.Uint32(buf[0:])), int32(le.Uint32(buf[4:])), le.Uint64(buf[8:]), le.Uint64(buf[16:]), le.Uint64(buf[24:])}
}

// TailCalls reads the number of calls from the trailer at the end of a log
// of size bytes, without reading the records: a reader that must place the
// calls before it reads them (the analyzer numbers every rank's calls in
// one table) then reads each log once. ok is false when the log does not
// end with a checked trailer (a rank killed, or ended by a signal while a
// thread was inside the logger): such a log must be counted by reading it
// (Skim). A count above the log's size in bytes is not one either. The
// count is only as good as those bytes: a reader that relies on it checks
// it against the calls it read (graph.Build does).
func TailCalls(r io.ReaderAt, size int64) (calls uint64, ok bool) {
	if size < tailLen {
		return 0, false
	}
	var b [tailLen]byte
	if _, err := r.ReadAt(b[:], size-tailLen); err != nil {
		return 0, false
	}
	if b[0] != tagChunk || b[1] != ChunkTrailer || b[2] != trailerLen || b[3+trailerLen] != tagCheck {
		return 0, false
	}
	calls = decodeTrailer(b[3:]).Calls
	if calls > uint64(size) { // every call takes a byte at least: not a count to place calls by
		return 0, false
	}
	return calls, true
}
