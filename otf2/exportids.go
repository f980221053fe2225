package otf2

// #include "cotf2.h"
import "C"

import (
	"cmp"
	"slices"
	"strings"

	"github.com/cpath/cpath/trace"
)

// finalIDs are the definitions' ids in the archive. The ranks, written
// side by side, number regions, source locations, communicators, groups
// and windows as they first meet them; the archive numbers them in an
// order of their own (by name), and each location's mapping tables map
// the events' ids to those, so that an export is the same whatever the
// ranks' timing, and regions are numbered densely, as readers want.
type finalIDs struct {
	region map[uint32]uint32 // by the events' id: the operations' codes, then NumOps+i for function i
	scl    []uint32          // by index in sclList
	funcs  []uint32          // by index in funcList: its place among the functions' regions
	comm   []uint32          // by index in commList
	group  []uint32          // by index in grpList (ids from 1)
	win    []uint32          // by index in winList
}

// order returns, for n things, the position of each in the order less
// sorts them in.
func order(n int, cmpf func(i, j int) int) []uint32 {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, cmpf)
	pos := make([]uint32, n)
	for p, i := range idx {
		pos[i] = uint32(p)
	}
	return pos
}

// number gives the definitions their ids in the archive: the MPI
// operations' regions in code order, then the functions' by name; the
// communicators of the analysis's table (ExportInput.Comms) in its
// order, then any other by name; the rest by what they are.
func (x *exporter) number() *finalIDs {
	f := &finalIDs{region: map[uint32]uint32{}}
	for op := range x.opUsed {
		if x.opUsed[op] {
			f.region[uint32(op)] = uint32(len(f.region))
		}
	}
	base := uint32(len(f.region))
	f.funcs = order(len(x.funcList), func(i, j int) int {
		a, b := x.funcList[i], x.funcList[j]
		return cmp.Or(strings.Compare(a.name, b.name), cmp.Compare(b2i(a.code), b2i(b.code)))
	})
	for i, p := range f.funcs {
		f.region[uint32(int(trace.NumOps)+i)] = base + p
	}
	f.scl = order(len(x.sclList), func(i, j int) int {
		a, b := x.sclList[i], x.sclList[j]
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	fixed := len(x.in.Comms)
	f.comm = order(len(x.commList), func(i, j int) int {
		switch {
		case i < fixed || j < fixed:
			return cmp.Compare(i, j)
		}
		return strings.Compare(x.commList[i].name, x.commList[j].name)
	})
	f.group = order(len(x.grpList), func(i, j int) int { return slices.Compare(x.grpList[i], x.grpList[j]) })
	f.win = order(len(x.winList), func(i, j int) int {
		a, b := x.winList[i], x.winList[j]
		return cmp.Or(cmp.Compare(f.comm[a.comm], f.comm[b.comm]), cmp.Compare(a.seq, b.seq))
	})
	return f
}

// inverse lists the things of order's positions pos by position: the
// order to write their definitions in.
func inverse(pos []uint32) []int {
	out := make([]int, len(pos))
	for i, p := range pos {
		out[p] = i
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// idMap is one mapping table of the locations' definitions.
type idMap struct {
	kind C.OTF2_MappingType
	m    *C.OTF2_IdMap
}

// maps are the mapping tables from the events' ids to the archive's.
func (f *finalIDs) maps() []idMap {
	table := func(kind C.OTF2_MappingType, pairs func(add func(local, global uint32))) idMap {
		m := C.OTF2_IdMap_Create(C.OTF2_ID_MAP_SPARSE, 64)
		n := 0
		pairs(func(local, global uint32) {
			C.OTF2_IdMap_AddIdPair(m, C.uint64_t(local), C.uint64_t(global))
			n++
		})
		if n == 0 {
			// An empty table does not read back (its capacity is 0).
			C.OTF2_IdMap_Free(m)
			return idMap{kind, nil}
		}
		return idMap{kind, m}
	}
	list := func(ids []uint32, first uint32) func(add func(local, global uint32)) {
		return func(add func(local, global uint32)) {
			for i, g := range ids {
				add(uint32(i)+first, g)
			}
		}
	}
	all := []idMap{
		table(C.OTF2_MAPPING_REGION, func(add func(local, global uint32)) {
			for l, g := range f.region {
				add(l, g)
			}
		}),
		table(C.OTF2_MAPPING_SOURCE_CODE_LOCATION, list(f.scl, 0)),
		table(C.OTF2_MAPPING_COMM, list(f.comm, 0)),
		table(C.OTF2_MAPPING_GROUP, func(add func(local, global uint32)) {
			add(0, 0) // MPI's locations group
			for i, p := range f.group {
				add(uint32(i)+1, p+1)
			}
		}),
		table(C.OTF2_MAPPING_RMA_WIN, list(f.win, 0)),
	}
	var out []idMap
	for _, m := range all {
		if m.m != nil {
			out = append(out, m)
		}
	}
	return out
}
