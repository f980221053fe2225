package otf2

// #include <stdint.h>
// #include "cotf2.h"
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// defs are an archive's global definitions, those cpath reads. OTF2's
// references are small dense integers: the tables are slices indexed by
// them.
type defs struct {
	strings   []string
	clock     clockProps
	haveClock bool
	nodes     []treeNode // system tree nodes
	lgroups   []locGroup
	locs      []location // in definition order
	regions   []region
	groups    []group
	comms     []commDef // in definition order
	attrs     map[string]uint32
	params    map[string]uint32
	wins      []rmaWin
	scls      []scl
	locProps  map[uint64]map[string]uint64 // by location, the UINT64 properties
	mpiLocs   []uint64                     // the MPI COMM_LOCATIONS group: location of each world rank
	traceID   uint64
	creator   string
}

type clockProps struct{ resolution, offset, length uint64 }

type treeNode struct {
	name, class uint32
	parent      uint32
}

type locGroup struct {
	name, typ, parent uint32
	defined           bool
}

type location struct {
	id               uint64
	name, typ, group uint32
	events           uint64
}

type region struct {
	name, canonical uint32
	role, paradigm  uint32
	file, line      uint32
	defined         bool
}

type group struct {
	name, typ, paradigm uint32
	members             []uint64
	defined             bool
}

type commDef struct {
	id, name, group, parent uint32
	inter                   bool
	groupB                  uint32
}

type rmaWin struct {
	name, comm uint32
	defined    bool
}

type scl struct {
	file, line uint32
	defined    bool
}

// grow makes s long enough to hold index i.
func grow[T any](s []T, i uint64) []T {
	if i >= 1<<24 {
		return s // not a dense reference: ignored
	}
	for uint64(len(s)) <= i {
		s = append(s, *new(T))
	}
	return s
}

func (d *defs) str(ref uint32) string {
	if int(ref) < len(d.strings) {
		return d.strings[ref]
	}
	return ""
}

// The kinds of cpDef calls (read.c CP_DEF_*).
const (
	defString = 1 + iota
	defClock
	defSTN
	defLG
	defLoc
	defRegion
	defGroup
	defComm
	defInterComm
	defAttr
	defParam
	defRmaWin
	defLocProp
	defSCL
	defParadigm
)

//export cpDef
func cpDef(h C.uintptr_t, kind C.int, id, a, b, c, dd, e, f C.uint64_t, s *C.char, members *C.uint64_t, n C.uint32_t) C.int {
	d := cgo.Handle(h).Value().(*defs)
	i := uint64(id)
	switch kind {
	case defString:
		d.strings = grow(d.strings, i)
		if i < uint64(len(d.strings)) {
			d.strings[i] = C.GoString(s)
		}
	case defClock:
		d.clock, d.haveClock = clockProps{uint64(a), uint64(b), uint64(c)}, true
	case defSTN:
		d.nodes = grow(d.nodes, i)
		if i < uint64(len(d.nodes)) {
			d.nodes[i] = treeNode{uint32(a), uint32(b), uint32(c)}
		}
	case defLG:
		d.lgroups = grow(d.lgroups, i)
		if i < uint64(len(d.lgroups)) {
			d.lgroups[i] = locGroup{uint32(a), uint32(b), uint32(c), true}
		}
	case defLoc:
		d.locs = append(d.locs, location{i, uint32(a), uint32(b), uint32(dd), uint64(c)})
	case defRegion:
		d.regions = grow(d.regions, i)
		if i < uint64(len(d.regions)) {
			d.regions[i] = region{uint32(a), uint32(b), uint32(c), uint32(dd), uint32(e), uint32(f), true}
		}
	case defGroup:
		d.groups = grow(d.groups, i)
		if i < uint64(len(d.groups)) {
			m := make([]uint64, int(n))
			if n > 0 {
				copy(m, unsafe.Slice((*uint64)(unsafe.Pointer(members)), int(n)))
			}
			d.groups[i] = group{uint32(a), uint32(b), uint32(c), m, true}
		}
	case defComm:
		d.comms = append(d.comms, commDef{id: uint32(i), name: uint32(a), group: uint32(b), parent: uint32(c)})
	case defInterComm:
		d.comms = append(d.comms, commDef{id: uint32(i), name: uint32(a), group: uint32(b), groupB: uint32(c), inter: true})
	case defAttr:
		d.attrs[d.str(uint32(a))] = uint32(i)
	case defParam:
		d.params[d.str(uint32(a))] = uint32(i)
	case defRmaWin:
		d.wins = grow(d.wins, i)
		if i < uint64(len(d.wins)) {
			d.wins[i] = rmaWin{uint32(a), uint32(b), true}
		}
	case defLocProp:
		if d.locProps[i] == nil {
			d.locProps[i] = map[string]uint64{}
		}
		if b == C.OTF2_TYPE_UINT64 {
			d.locProps[i][d.str(uint32(a))] = uint64(c)
		}
	case defSCL:
		d.scls = grow(d.scls, i)
		if i < uint64(len(d.scls)) {
			d.scls[i] = scl{uint32(a), uint32(b), true}
		}
	}
	return 0
}

// readDefs reads the global definitions of the archive at anchor.
func readDefs(anchor string) (*defs, error) {
	quietErrors()
	d := &defs{attrs: map[string]uint32{}, params: map[string]uint32{}, locProps: map[uint64]map[string]uint64{}}
	h := cgo.NewHandle(d)
	defer h.Delete()
	cs := cstr(anchor)
	defer free(cs)
	var tid C.uint64_t
	var creator [256]C.char
	if ok, msg := locked(func() bool { return C.cp_read_defs(cs, C.uintptr_t(h), &tid, &creator[0], C.int(len(creator))) == 0 }); !ok {
		return nil, archiveErr(anchor, "cannot read its definitions (%s)", msg)
	}
	d.traceID, d.creator = uint64(tid), C.GoString(&creator[0])
	return d, nil
}
