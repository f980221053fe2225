package otf2

// #cgo pkg-config: otf2
// #include <stdlib.h>
// #include "cotf2.h"
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// ErrArchive wraps every problem with an archive's files: errors.Is
// tells it apart from I/O errors of the caller's.
var ErrArchive = errors.New("bad OTF2 archive")

var quiet sync.Once

// quietErrors makes the OTF2 library keep its messages (for the one-line
// error cpath gives) rather than print them on stderr.
func quietErrors() { quiet.Do(func() { C.cp_quiet() }) }

// locked makes a call into the OTF2 library on one OS thread and, if it
// fails (call returns false), returns the library's first message about
// it: the library reports errors through a callback, which keeps them
// per thread, and a goroutine may change threads between two cgo calls.
func locked(call func() bool) (ok bool, msg string) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	C.cp_clear_error()
	if call() {
		return true, ""
	}
	return false, libError()
}

// libError is the OTF2 library's first message since it was cleared on
// this thread, as the detail of an error.
func libError() string {
	s := C.GoString(C.cp_last_error())
	if s == "" {
		return "the OTF2 library gave no reason"
	}
	return s
}

// archiveErr is a one-line error about file f of an archive.
func archiveErr(f, format string, a ...any) error {
	return fmt.Errorf("%s: %w: %s", f, ErrArchive, fmt.Sprintf(format, a...))
}

// cstr is a C copy of s, to be freed with C.free.
func cstr(s string) *C.char { return C.CString(s) }

func free(p *C.char) { C.free(unsafe.Pointer(p)) }

// The attributes cpath reads and writes on events, by cp_ev.av index
// (cotf2.h CP_A_*): their names in the archive's definitions.
var attrNames = [C.CP_NATTR]string{
	C.CP_A_SEQ:      "cpath::seq",
	C.CP_A_FLAGS:    "cpath::flags",
	C.CP_A_POLLS:    "cpath::polls",
	C.CP_A_REQ:      "cpath::request",
	C.CP_A_PEER:     "cpath::peer",
	C.CP_A_TAG:      "cpath::tag",
	C.CP_A_BYTES:    "cpath::bytes",
	C.CP_A_ROOT:     "cpath::root",
	C.CP_A_COMM:     "cpath::comm",
	C.CP_A_CRITICAL: "cpath::critical",
	C.CP_A_SCL:      "SOURCE_CODE_LOCATION", // Score-P's name
	C.CP_A_OFFSET:   "cpath::function_offset",
}

// attrDescr say what each attribute holds, for the definitions a viewer
// shows.
var attrDescr = [C.CP_NATTR]string{
	C.CP_A_SEQ:      "cpath: the call's collective sequence number on its communicator (message id of matched probes)",
	C.CP_A_FLAGS:    "cpath: the record's flags (docs/log-format.md, Flags)",
	C.CP_A_POLLS:    "cpath: the calls a run of unproductive polls stands for (0: the poll completed something)",
	C.CP_A_REQ:      "cpath: the tool request id the call names, where no event carries it",
	C.CP_A_PEER:     "cpath: the peer as a world rank, where no event carries it",
	C.CP_A_TAG:      "cpath: the tag (or level, window, file or partition number), where no event carries it",
	C.CP_A_BYTES:    "cpath: the byte count, where no event carries it",
	C.CP_A_ROOT:     "cpath: the root as a world rank (or partition count), where no event carries it",
	C.CP_A_COMM:     "cpath: the call's communicator, where no event carries it",
	C.CP_A_CRITICAL: "cpath: 1 on the MPI call or the computation before it (the enclosing region) on the critical path",
	C.CP_A_SCL:      "Source code location",
	C.CP_A_OFFSET:   "cpath: where in its function (the region around the call) a call site without a source line is",
}

// subParam is the parameter whose ParameterUnsignedInt events carry the
// sub-records no OTF2 event stands for (value: the sub-record's
// operation code).
const subParam = "cpath::subrecord"

// callsProp is the location property giving the calls cpath will read
// from a location of an archive it wrote: they are placed before they
// are read, as a cpath log's trailer lets them be.
const callsProp = "cpath::calls"
