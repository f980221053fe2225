package otf2

// #include <stdlib.h>
// #include "cotf2.h"
import "C"

import (
	"errors"
	"unsafe"
)

// The event layout and numbering the C side shares with Go (event.go):
// a mismatch does not compile.
var (
	_ [unsafe.Sizeof(C.cp_ev{}) - unsafe.Sizeof(event{})]struct{}
	_ [unsafe.Sizeof(event{}) - unsafe.Sizeof(C.cp_ev{})]struct{}
	_ [C.CP_NKINDS - nKinds]struct{}
	_ [nKinds - C.CP_NKINDS]struct{}
	_ [C.CP_NATTR - nAttr]struct{}
	_ [nAttr - C.CP_NATTR]struct{}
	_ [C.CP_NSKIP - nSkip]struct{}
	_ [nSkip - C.CP_NSKIP]struct{}
	_ [C.CP_PROGRAM_BEGIN - evProgramBegin]struct{}
	_ [evProgramBegin - C.CP_PROGRAM_BEGIN]struct{}
	_ [C.CP_A_OFFSET - aOffset]struct{}
	_ [aOffset - C.CP_A_OFFSET]struct{}
)

// cSource reads a location's events through the OTF2 library, into a
// buffer in C memory (the library keeps pointers into the reader).
type cSource struct {
	c   *C.cp_reader
	buf *C.cp_ev
	evs []event // buf, as Go sees it
}

// openSource opens location loc of the archive at anchor for reading,
// after its local definitions, which give its clock offsets (the first
// ones and the last, and how many there are in all).
func openSource(a *Archive, loc uint64) (*cSource, []clockOffset, uint64, error) {
	quietErrors()
	c := (*C.cp_reader)(C.calloc(1, C.size_t(unsafe.Sizeof(C.cp_reader{}))))
	buf := (*C.cp_ev)(C.calloc(batchEvents, C.size_t(unsafe.Sizeof(C.cp_ev{}))))
	s := &cSource{c: c, buf: buf, evs: unsafe.Slice((*event)(unsafe.Pointer(buf)), batchEvents)}
	for i, id := range a.attrIDs {
		c.attr_id[i] = C.uint32_t(id)
	}
	c.own_metric = undef32
	if a.fromCPath {
		c.own_metric = 0 // the class Export defines (exportdefs.go)
	}
	cs := cstr(a.Anchor)
	defer free(cs)
	var code C.int
	ok, msg := locked(func() bool { code = C.cp_reader_open(c, cs, C.uint64_t(loc), buf, batchEvents); return code == 0 })
	if !ok {
		s.close()
		if code == -2 {
			return nil, nil, 0, archiveErr(a.Anchor, "location %d: cannot read its local definitions (%s)", loc, msg)
		}
		return nil, nil, 0, archiveErr(a.evtFile(loc), "cannot open the events of location %d (%s)", loc, msg)
	}
	offs := make([]clockOffset, int(c.noff))
	for i := range offs {
		offs[i] = clockOffset{uint64(c.off_time[i]), int64(c.off_value[i]), float64(c.off_stddev[i])}
	}
	return s, offs, uint64(c.noff_all), nil
}

func (s *cSource) next() ([]event, uint64, bool, error) {
	var n C.uint64_t
	if ok, msg := locked(func() bool { return C.cp_reader_read(s.c, &n) == 0 }); !ok {
		return nil, 0, false, errors.New(msg)
	}
	// A read short of the batch is the last: OTF2 reads no further.
	return s.evs[:int(s.c.n)], uint64(n), n < batchEvents, nil
}

func (s *cSource) skipped() [nSkip]uint64 {
	var out [nSkip]uint64
	for i := range out {
		out[i] = uint64(s.c.skipped[i])
	}
	return out
}

func (s *cSource) close() {
	if s.c != nil {
		C.cp_reader_close(s.c)
		C.free(unsafe.Pointer(s.c))
		C.free(unsafe.Pointer(s.buf))
		s.c, s.buf, s.evs = nil, nil, nil
	}
}
