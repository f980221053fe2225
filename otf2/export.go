package otf2

// #include <stdlib.h>
// #include "cotf2.h"
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/par"
	"github.com/cpath/cpath/trace"
	"github.com/cpath/cpath/trace/symbol"
)

// What Marks says of a call: its own time (the MPI call) or the
// computation before it on its thread lies on the critical path.
const (
	MarkCall   uint8 = 1
	MarkBefore uint8 = 2
)

// ExportInput is what Export writes: a run's logs, and from its
// analysis the communicators (their definitions' order) and the
// critical path's marks by call.
type ExportInput struct {
	Run       *graph.Run
	Comms     []graph.CommInfo // the run's communicators: their names, in the order of their definitions
	RankStart []int32          // rank r's k-th call is RankStart[r]+k in Marks
	Marks     []uint8          // by call: MarkCall, MarkBefore
}

// ExportStats says what Export wrote, and what it could not.
type ExportStats struct {
	Anchor      string
	Ranks       int
	Locations   int
	Calls       uint64
	Events      uint64
	NotExported []trace.NotMapped
}

// exporter holds the definitions the ranks' events refer to, assigned
// as the ranks (written side by side) first need them.
type exporter struct {
	in   ExportInput
	arch *C.OTF2_Archive
	tab  *symbol.Table

	mu       sync.Mutex
	strs     map[string]uint32
	strList  []string
	funcs    map[exportFunc]uint32 // function regions: id NumOps+i in the events
	ids      *finalIDs             // the definitions' ids in the archive (exportids.go)
	funcList []exportFunc
	opUsed   [trace.NumOps]bool
	scls     map[trace.Func]uint32
	sclList  []trace.Func
	comms    map[string]uint32 // by name: definition (index in commList)
	commList []exportComm
	groups   map[string]uint32 // RMA access and exposure groups by members: id
	grpList  [][]int32
	wins     map[winKey]uint32
	winList  []winKey // a window: its communicator and creating collective
	locs     []exportLoc
	skipped  map[string]uint64
	hosts    []string // by rank
	minTime  int64
	maxTime  int64
}

// exportComm is a communicator's definition: its members, and the other
// group of an intercommunicator.
type exportComm struct {
	name            string
	members, remote []int32
	defined         bool
}

// exportFunc is the region of the calls made from a function, or from
// a module no symbol names (code: role CODE, named after the module).
type exportFunc struct {
	name string
	code bool
}

type winKey struct {
	comm uint32
	seq  uint32
}

// exportLoc is a location written: its definition.
type exportLoc struct {
	id         uint64
	rank       int
	thread     uint16
	events     uint64
	calls      uint64
	clock      trace.Clock
	unwrapped  []trace.UnwrappedCall
	props      []rankProp // the rank's first location: what its header says besides (rankProps)
	first      bool
	start, end int64
}

// Export writes in.Run as the OTF2 archive dir/traces.otf2 (with
// dir/traces/ and dir/traces.def): the ranks' threads as locations, each
// call an MPI region's visit with its events, the computation before it
// a visit of the function that made the call (where known), the
// critical path marked (docs/otf2.md). dir must not hold an archive.
func Export(dir string, in ExportInput) (*ExportStats, error) {
	quietErrors()
	anchor := filepath.Join(dir, "traces.otf2")
	for _, p := range []string{anchor, filepath.Join(dir, "traces.def"), filepath.Join(dir, "traces")} {
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("%s: already there: export into a directory without an archive", p)
		}
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	cd, cn := cstr(dir), cstr("traces")
	defer free(cd)
	defer free(cn)
	x := &exporter{in: in, tab: symbol.NewTable(), strs: map[string]uint32{}, funcs: map[exportFunc]uint32{},
		scls: map[trace.Func]uint32{}, comms: map[string]uint32{}, groups: map[string]uint32{}, wins: map[winKey]uint32{},
		skipped: map[string]uint64{}, minTime: 1<<63 - 1, maxTime: -1 << 63}
	if ok, msg := locked(func() bool { x.arch = C.cp_archive_create(cd, cn); return x.arch != nil }); !ok {
		return nil, fmt.Errorf("%s: cannot create an OTF2 archive (%s)", anchor, msg)
	}
	for _, c := range in.Comms {
		intern(x.comms, &x.commList, c.Name, exportComm{name: c.Name})
	}
	R := len(in.Run.Files)
	x.hosts = make([]string, R)
	locs := make([][]exportLoc, R)
	errs := make([]error, R)
	par.Do(R, func(r int) { locs[r], errs[r] = x.rank(r) })
	if err := firstError(errs); err != nil {
		C.OTF2_Archive_Close(x.arch)
		return nil, err
	}
	st := &ExportStats{Anchor: anchor, Ranks: R}
	for _, ls := range locs {
		x.locs = append(x.locs, ls...)
	}
	for _, l := range x.locs {
		st.Events += l.events
		st.Calls += l.calls
	}
	st.Locations = len(x.locs)
	// The definitions are written on one OS thread: the library keeps
	// its messages per thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	C.cp_clear_error()
	if err := x.definitions(); err != nil {
		C.OTF2_Archive_Close(x.arch)
		return nil, err
	}
	if C.OTF2_Archive_Close(x.arch) != C.OTF2_SUCCESS {
		return nil, fmt.Errorf("%s: cannot close the archive (%s)", anchor, libError())
	}
	for _, k := range sortedKeys(x.skipped) {
		st.NotExported = append(st.NotExported, trace.NotMapped{What: k, Count: x.skipped[k]})
	}
	return st, nil
}

func firstError(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// skip counts something of the logs the archive cannot hold.
func (x *exporter) skip(what string, n uint64) {
	x.mu.Lock()
	x.skipped[what] += n
	x.mu.Unlock()
}

// str is the definition of string s.
func (x *exporter) str(s string) uint32 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.strLocked(s)
}

func (x *exporter) strLocked(s string) uint32 { return intern(x.strs, &x.strList, s, s) }

// intern is the id of definition k: its index in list (where v is
// appended the first time k is met), kept in ids.
func intern[K comparable, V any](ids map[K]uint32, list *[]V, k K, v V) uint32 {
	if id, ok := ids[k]; ok {
		return id
	}
	id := uint32(len(*list))
	ids[k] = id
	*list = append(*list, v)
	return id
}

// locationID is the location of rank r's thread t.
func locationID(r int, t uint16) uint64 { return uint64(r)<<16 | uint64(t) }

// rank writes rank r's calls, each thread's into its location.
func (x *exporter) rank(r int) ([]exportLoc, error) {
	rd, err := x.in.Run.OpenRank(r)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	re := newRankExport(x, r, rd.Header())
	defer re.close()
	var group []trace.Record // the call being gathered: a timed record and its sub-records
	var werr error
	flush := func() {
		if len(group) > 0 && werr == nil {
			werr = re.call(group[0], group[1:])
		}
		group = group[:0]
	}
	_, err = rd.Skim(func(trace.Op) bool { return true }, func(rec *trace.Record) {
		re.cb.Add(rec)
		switch {
		case !rec.Op.IsSub():
			flush()
		case len(group) == 0:
			return // a sub-record without its call: a damaged log's
		}
		group = append(group, *rec)
	})
	if err == nil {
		err = rd.Incomplete()
	}
	if err != nil {
		return nil, err
	}
	if flush(); werr != nil {
		return nil, werr
	}
	return re.finish(rd.Header())
}

// locWriter writes one location's events: into a C buffer, flushed to
// OTF2 by the batch.
type locWriter struct {
	id      uint64
	thread  uint16
	w       *C.cp_writer
	buf     *C.cp_ev
	evs     []C.cp_ev
	n       int
	prevEnd int64 // the end of the thread's last call
	started bool
	crit    bool // the critical-path metric's value
	calls   uint64
	events  uint64
	start   int64
	end     int64
}

const writeBatch = 4096

func (x *exporter) newLocWriter(r int, t uint16) (*locWriter, error) {
	id := locationID(r, t)
	w := (*C.cp_writer)(C.calloc(1, C.size_t(unsafe.Sizeof(C.cp_writer{}))))
	buf := (*C.cp_ev)(C.calloc(writeBatch, C.size_t(unsafe.Sizeof(C.cp_ev{}))))
	l := &locWriter{id: id, thread: t, w: w, buf: buf, evs: unsafe.Slice(buf, writeBatch)}
	x.mu.Lock()
	ok, msg := locked(func() bool { w.evt = C.cp_archive_evt_writer(x.arch, C.uint64_t(id)); return w.evt != nil })
	x.mu.Unlock()
	if !ok {
		l.free()
		return nil, fmt.Errorf("%s: cannot write location %d (%s)", x.in.Run.Dir, id, msg)
	}
	w.attrs = C.OTF2_AttributeList_New()
	for i := range w.attr_id {
		w.attr_id[i] = C.uint32_t(i)
	}
	return l, nil
}

// flush writes the buffered events; room makes sure n more fit.
func (l *locWriter) room(n int) error {
	if l.n+n <= writeBatch {
		return nil
	}
	return l.flush()
}

func (l *locWriter) flush() error {
	if l.n == 0 {
		return nil
	}
	var done int
	ok, msg := locked(func() bool { done = int(C.cp_write(l.w, l.buf, C.int(l.n))); return done == l.n })
	l.events += uint64(done)
	if !ok {
		l.n = 0
		return fmt.Errorf("location %d: the OTF2 library refused an event (%s)", l.id, msg)
	}
	l.n = 0
	return nil
}

func (l *locWriter) free() {
	if l.w != nil {
		if l.w.attrs != nil {
			C.OTF2_AttributeList_Delete(l.w.attrs)
		}
		C.free(unsafe.Pointer(l.w))
		C.free(unsafe.Pointer(l.buf))
		l.w, l.buf, l.evs = nil, nil, nil
	}
}

// setAttr puts attribute i with value v on e.
func setAttr(e *C.cp_ev, i C.int, v uint64) {
	e.amask |= 1 << i
	e.av[i] = C.uint64_t(v)
}

// callSite is where a call was made, as the archive says it: the
// region of its function, and its source location or, without one, its
// offset in the function.
type callSite struct {
	region, scl uint32 // undef32 for none
	offset      uint64
}

// functionOf is where call site pc of the rank is, by its modules: a
// call site no symbol names is in a region named after its module, at
// its offset there.
func (x *exporter) functionOf(h *trace.Header, pc uint64) callSite {
	cs := callSite{undef32, undef32, 0}
	m, off := h.ModuleOf(pc)
	if m == nil {
		return cs
	}
	s, err := x.tab.Lookup(m, off)
	code := false
	switch {
	case err != nil || s.Func == "" && s.File == "":
		s.Func, s.FuncOffset, code = filepath.Base(s.Module), s.Offset, true // as the report names it
	case s.File == "" && s.Symbol != "":
		s.FuncOffset = max(s.FuncOffset, 1) // a site at a function's first byte is still within it
	default: // a source line, or a region's name (a module without a file: trace.Module.Funcs)
		s.FuncOffset = 0
	}
	cs.offset = s.FuncOffset
	x.mu.Lock()
	defer x.mu.Unlock()
	if s.Func != "" {
		k := exportFunc{s.Func, code}
		cs.region = uint32(trace.NumOps) + intern(x.funcs, &x.funcList, k, k)
	}
	if s.File != "" {
		k := trace.Func{File: s.File, Line: s.Line}
		cs.scl = intern(x.scls, &x.sclList, k, k)
	}
	return cs
}

// commDef is the definition of communicator c of a rank's table,
// undef32 if the archive has none (one made by a call the logger does
// not wrap).
func (x *exporter) commDef(c *trace.Comm) uint32 {
	if c.Name == "" {
		return undef32
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	id := intern(x.comms, &x.commList, c.Name, exportComm{name: c.Name})
	if ec := &x.commList[id]; !ec.defined {
		ec.members, ec.remote, ec.defined = c.Members, c.Remote, true
	}
	return id
}

// groupDef is the definition of a group of world ranks (PSCW): 1, 2, …
// (0 is MPI's locations group).
func (x *exporter) groupDef(members []int32) uint32 {
	var b strings.Builder
	for _, m := range members {
		fmt.Fprintf(&b, "%d,", m)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return intern(x.groups, &x.grpList, b.String(), slices.Clone(members)) + 1
}

// winDef is the definition of the window created on communicator
// definition comm by the collective seq of it.
func (x *exporter) winDef(comm, seq uint32) uint32 {
	x.mu.Lock()
	defer x.mu.Unlock()
	k := winKey{comm, seq}
	return intern(x.wins, &x.winList, k, k)
}
