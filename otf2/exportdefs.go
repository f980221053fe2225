package otf2

// #include <stdlib.h>
// #include "cotf2.h"
import "C"

import (
	"fmt"
	"strconv"

	"github.com/cpath/cpath/trace"
)

// finish ends the rank's locations: the critical-path metric off after
// their last call, their events flushed, their writers closed.
func (re *rankExport) finish(h *trace.Header) ([]exportLoc, error) {
	x := re.x
	var out []exportLoc
	for t, l := range re.locs {
		if l == nil {
			continue
		}
		re.evs = re.evs[:0]
		re.metric(l, false, l.end)
		for _, e := range re.evs {
			if err := l.room(1); err != nil {
				return nil, err
			}
			l.evs[l.n] = e
			l.n++
		}
		if err := l.flush(); err != nil {
			return nil, err
		}
		var n C.uint64_t
		C.OTF2_EvtWriter_GetNumberOfEvents(l.w.evt, &n)
		x.mu.Lock()
		ok, msg := locked(func() bool { return C.cp_archive_close_evt_writer(x.arch, l.w.evt) == 0 })
		x.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("%s: location %d: cannot close its events (%s)", x.in.Run.Dir, l.id, msg)
		}
		el := exportLoc{id: l.id, rank: re.r, thread: uint16(t), events: uint64(n), calls: l.calls, clock: h.Clock,
			start: l.start, end: l.end}
		if t == 0 {
			el.unwrapped = h.Unwrapped
			el.props = rankProps(h)
		}
		out = append(out, el)
	}
	if len(h.Modules) > 0 {
		x.skip("module lists of the ranks (the call sites are named by their functions' regions)", 1)
	}
	return out, nil
}

// definitions writes the global definitions and each location's own
// (its clock offsets), once every event is written.
func (x *exporter) definitions() error {
	if C.OTF2_Archive_CloseEvtFiles(x.arch) != C.OTF2_SUCCESS {
		return x.defErr("closing the event files")
	}
	if C.OTF2_Archive_OpenDefFiles(x.arch) != C.OTF2_SUCCESS {
		return x.defErr("opening the definition files")
	}
	// The ranks numbered the definitions as they met them: each
	// location's mapping tables give their ids in the archive.
	x.ids = x.number()
	maps := x.ids.maps()
	defer func() {
		for _, m := range maps {
			C.OTF2_IdMap_Free(m.m)
		}
	}()
	for _, l := range x.locs {
		w := C.OTF2_Archive_GetDefWriter(x.arch, C.uint64_t(l.id))
		if w == nil {
			return x.defErr("a location's definitions")
		}
		for _, m := range maps {
			if C.OTF2_DefWriter_WriteMappingTable(w, m.kind, m.m) != C.OTF2_SUCCESS {
				return x.defErr("a location's mapping tables")
			}
		}
		for _, p := range syncPoints(l.clock) {
			C.OTF2_DefWriter_WriteClockOffset(w, C.uint64_t(p.LocalNs), C.int64_t(p.OffsetNs), C.double(max(p.ErrNs, 0)))
		}
		C.OTF2_Archive_CloseDefWriter(x.arch, w)
	}
	if C.OTF2_Archive_CloseDefFiles(x.arch) != C.OTF2_SUCCESS {
		return x.defErr("closing the definition files")
	}
	g := C.OTF2_Archive_GetGlobalDefWriter(x.arch)
	if g == nil {
		return x.defErr("the global definitions")
	}
	d := &defWriter{x: x, g: g}
	d.prepare()
	d.write()
	if d.err != nil {
		return d.err
	}
	return nil
}

func (x *exporter) defErr(what string) error {
	return fmt.Errorf("%s: %s: %s", x.in.Run.Dir, what, libError())
}

// syncPoints are the clock's measurements, as OTF2 clock offsets: the
// one at MPI_Init and, if any, the one at MPI_Finalize. cpath's clock
// model (the line of least drift within both points' errors) is the
// import's; a viewer interpolates between them.
func syncPoints(c trace.Clock) []trace.SyncPoint {
	if c.Init == (trace.SyncPoint{}) && c.Final == nil {
		return nil
	}
	ps := []trace.SyncPoint{c.Init}
	if c.Final != nil && c.Final.LocalNs > c.Init.LocalNs {
		ps = append(ps, *c.Final)
	}
	return ps
}

// defWriter writes the global definitions: the strings first, which the
// rest refer to.
type defWriter struct {
	x        *exporter
	g        *C.OTF2_GlobalDefWriter
	err      error
	host     map[string]uint32 // system tree node by host
	hostList []string
}

func (d *defWriter) check(what string, code C.OTF2_ErrorCode) {
	if code != C.OTF2_SUCCESS && d.err == nil {
		d.err = fmt.Errorf("%s: writing %s: %s", d.x.in.Run.Dir, what, libError())
	}
}

// prepare names every string the definitions use.
func (d *defWriter) prepare() {
	x := d.x
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, s := range []string{"", "MPI", "machine", "node", "critical path", "1 while the critical path runs on this location (cpath)",
		subParam, callsProp, "Master thread"} {
		x.strLocked(s)
	}
	for i := range attrNames {
		x.strLocked(attrNames[i])
		x.strLocked(attrDescr[i])
	}
	d.host = map[string]uint32{}
	for _, h := range x.hosts {
		if _, ok := d.host[h]; !ok {
			d.host[h] = uint32(len(d.hostList)) + 1
			d.hostList = append(d.hostList, h)
			x.strLocked(h)
		}
	}
	for r := range x.hosts {
		x.strLocked("MPI Rank " + strconv.Itoa(r))
	}
	for _, l := range x.locs {
		x.strLocked(threadName(l.thread))
		for _, u := range l.unwrapped {
			x.strLocked(unwrappedProp(u.Name, "calls"))
			x.strLocked(unwrappedProp(u.Name, "ns"))
		}
		for _, p := range l.props {
			x.strLocked(p.name)
		}
	}
	for op := range x.opUsed {
		if x.opUsed[op] {
			x.strLocked(trace.Op(op).String())
		}
	}
	// The rest in the order of their definitions' ids (exportids.go).
	for _, i := range inverse(x.ids.funcs) {
		x.strLocked(x.funcList[i].name)
	}
	for _, i := range inverse(x.ids.scl) {
		x.strLocked(x.sclList[i].File)
	}
	for _, i := range inverse(x.ids.comm) {
		c := &x.commList[i]
		x.strLocked(c.name)
		if !c.defined && i < len(x.in.Comms) {
			c.members, c.defined = x.in.Comms[i].Members, true
		}
	}
	for i := range x.winList {
		x.strLocked("window " + strconv.Itoa(i))
	}
}

func threadName(t uint16) string {
	if t == 0 {
		return "Master thread"
	}
	return "thread " + strconv.Itoa(int(t))
}

// unwrappedProp names the location property that counts a function's
// unwrapped calls (what "calls") or their time ("ns").
func unwrappedProp(name, what string) string { return "cpath::unwrapped::" + name + "::" + what }

func (d *defWriter) s(str string) C.uint32_t { return C.uint32_t(d.x.strs[str]) }

func (d *defWriter) write() {
	x, g := d.x, d.g
	for id, s := range x.strList {
		cs := cstr(s)
		d.check("strings", C.OTF2_GlobalDefWriter_WriteString(g, C.uint32_t(id), cs))
		free(cs)
	}
	start, length := uint64(0), uint64(0)
	if x.maxTime >= x.minTime {
		start, length = uint64(x.minTime), uint64(x.maxTime-x.minTime)
	}
	d.check("the clock", C.OTF2_GlobalDefWriter_WriteClockProperties(g, 1e9, C.uint64_t(start), C.uint64_t(length), C.OTF2_UNDEFINED_TIMESTAMP))
	d.check("the paradigm", C.OTF2_GlobalDefWriter_WriteParadigm(g, C.OTF2_PARADIGM_MPI, d.s("MPI"), C.OTF2_PARADIGM_CLASS_PROCESS))
	for i := range attrNames {
		t := C.OTF2_Type(C.OTF2_TYPE_UINT64)
		switch i {
		case C.CP_A_PEER, C.CP_A_TAG, C.CP_A_ROOT:
			t = C.OTF2_TYPE_INT64
		case C.CP_A_COMM:
			t = C.OTF2_TYPE_COMM
		case C.CP_A_SCL:
			t = C.OTF2_TYPE_SOURCE_CODE_LOCATION
		}
		d.check("attributes", C.OTF2_GlobalDefWriter_WriteAttribute(g, C.uint32_t(i), d.s(attrNames[i]), d.s(attrDescr[i]), t))
	}
	d.check("parameters", C.OTF2_GlobalDefWriter_WriteParameter(g, 0, d.s(subParam), C.OTF2_PARAMETER_TYPE_UINT64))
	d.systemTree()
	d.regions()
	d.comms()
	d.metric()
}

func (d *defWriter) systemTree() {
	x, g := d.x, d.g
	d.check("the system tree", C.OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, d.s("machine"), d.s("machine"), C.OTF2_UNDEFINED_SYSTEM_TREE_NODE))
	for i, h := range d.hostList {
		d.check("the system tree", C.OTF2_GlobalDefWriter_WriteSystemTreeNode(g, C.uint32_t(i+1), d.s(h), d.s("node"), 0))
	}
	for r, h := range x.hosts {
		d.check("location groups", C.OTF2_GlobalDefWriter_WriteLocationGroup(g, C.uint32_t(r), d.s("MPI Rank "+strconv.Itoa(r)),
			C.OTF2_LOCATION_GROUP_TYPE_PROCESS, C.uint32_t(d.host[h]), C.OTF2_UNDEFINED_LOCATION_GROUP))
	}
	for _, l := range x.locs {
		d.check("locations", C.OTF2_GlobalDefWriter_WriteLocation(g, C.uint64_t(l.id), d.s(threadName(l.thread)),
			C.OTF2_LOCATION_TYPE_CPU_THREAD, C.uint64_t(l.events), C.uint32_t(l.rank)))
		d.locProp(l.id, callsProp, l.calls)
		for _, u := range l.unwrapped {
			d.locProp(l.id, unwrappedProp(u.Name, "calls"), u.Calls)
			d.locProp(l.id, unwrappedProp(u.Name, "ns"), uint64(max(u.Ns, 0)))
		}
		for _, p := range l.props {
			d.locProp(l.id, p.name, p.v)
		}
	}
}

// The location properties that keep what a rank's header says besides
// its events: the CPUs it and its host had, and the MPI's eager limits
// (which decide which late-posted sends were rendezvous).
const (
	cpusProp     = "cpath::cpus"
	hostCPUsProp = "cpath::host_cpus"
	eagerPrefix  = "cpath::eager::"
)

// rankProp is one of them.
type rankProp struct {
	name string
	v    uint64
}

// rankProps are the properties of header h that are set.
func rankProps(h *trace.Header) []rankProp {
	var ps []rankProp
	if h.CPUs > 0 {
		ps = append(ps, rankProp{cpusProp, uint64(h.CPUs)})
	}
	if h.HostCPUs > 0 {
		ps = append(ps, rankProp{hostCPUsProp, uint64(h.HostCPUs)})
	}
	for _, v := range h.EagerLimits {
		if v.Value >= 0 {
			ps = append(ps, rankProp{eagerPrefix + v.Name, uint64(v.Value)})
		}
	}
	return ps
}

func (d *defWriter) locProp(loc uint64, name string, v uint64) {
	if C.cp_def_locprop_u64(d.g, C.uint64_t(loc), d.s(name), C.uint64_t(v)) != 0 {
		d.check("location properties", C.OTF2_ERROR_INVALID_ARGUMENT)
	}
}

func (d *defWriter) regions() {
	x, g := d.x, d.g
	for op := range x.opUsed {
		if !x.opUsed[op] {
			continue
		}
		n := d.s(trace.Op(op).String())
		d.check("regions", C.OTF2_GlobalDefWriter_WriteRegion(g, C.uint32_t(x.ids.region[uint32(op)]), n, n, d.s(""), C.OTF2_REGION_ROLE_FUNCTION,
			C.OTF2_PARADIGM_MPI, C.OTF2_REGION_FLAG_NONE, d.s("MPI"), 0, 0))
	}
	for _, i := range inverse(x.ids.funcs) {
		f := x.funcList[i]
		n := d.s(f.name)
		role := C.OTF2_RegionRole(C.OTF2_REGION_ROLE_FUNCTION)
		if f.code {
			role = C.OTF2_REGION_ROLE_CODE // a module's code no symbol names
		}
		d.check("regions", C.OTF2_GlobalDefWriter_WriteRegion(g, C.uint32_t(x.ids.region[uint32(int(trace.NumOps)+i)]), n, n, d.s(""), role,
			C.OTF2_PARADIGM_USER, C.OTF2_REGION_FLAG_NONE, C.OTF2_UNDEFINED_STRING, 0, 0))
	}
	for _, i := range inverse(x.ids.scl) {
		s := x.sclList[i]
		d.check("source code locations", C.OTF2_GlobalDefWriter_WriteSourceCodeLocation(g, C.uint32_t(x.ids.scl[i]), d.s(s.File), C.uint32_t(s.Line)))
	}
}

// comms writes MPI's locations group (each world rank's first thread),
// the access and exposure groups, the communicators with their groups
// of world ranks, and the windows.
func (d *defWriter) comms() {
	x := d.x
	R := len(x.hosts)
	locs := make([]uint64, R)
	for r := range locs {
		locs[r] = locationID(r, 0)
	}
	d.group(0, C.OTF2_GROUP_TYPE_COMM_LOCATIONS, locs)
	for _, i := range inverse(x.ids.group) {
		d.group(x.ids.group[i]+1, C.OTF2_GROUP_TYPE_COMM_GROUP, ranks64(x.grpList[i]))
	}
	next := uint32(len(x.grpList) + 1)
	for _, i := range inverse(x.ids.comm) {
		c := x.commList[i]
		ga := next
		d.group(ga, C.OTF2_GROUP_TYPE_COMM_GROUP, ranks64(c.members))
		next++
		if c.remote != nil {
			d.group(next, C.OTF2_GROUP_TYPE_COMM_GROUP, ranks64(c.remote))
			d.check("communicators", C.OTF2_GlobalDefWriter_WriteInterComm(d.g, C.uint32_t(x.ids.comm[i]), d.s(c.name), C.uint32_t(ga),
				C.uint32_t(next), C.OTF2_UNDEFINED_COMM, C.OTF2_COMM_FLAG_NONE))
			next++
			continue
		}
		d.check("communicators", C.OTF2_GlobalDefWriter_WriteComm(d.g, C.uint32_t(x.ids.comm[i]), d.s(c.name), C.uint32_t(ga),
			C.OTF2_UNDEFINED_COMM, C.OTF2_COMM_FLAG_NONE))
	}
	for _, i := range inverse(x.ids.win) {
		w, id := x.winList[i], x.ids.win[i]
		d.check("windows", C.OTF2_GlobalDefWriter_WriteRmaWin(d.g, C.uint32_t(id), d.s("window "+strconv.Itoa(int(id))), C.uint32_t(x.ids.comm[w.comm]), C.OTF2_RMA_WIN_FLAG_NONE))
	}
}

func ranks64(m []int32) []uint64 {
	out := make([]uint64, len(m))
	for i, v := range m {
		out[i] = uint64(uint32(v))
	}
	return out
}

func (d *defWriter) group(id uint32, typ C.OTF2_GroupType, members []uint64) {
	var p *C.uint64_t
	if len(members) > 0 {
		p = (*C.uint64_t)(&members[0])
	}
	d.check("groups", C.OTF2_GlobalDefWriter_WriteGroup(d.g, C.uint32_t(id), d.s(""), typ, C.OTF2_PARADIGM_MPI, C.OTF2_GROUP_FLAG_NONE,
		C.uint32_t(len(members)), p))
}

// metric defines the critical-path metric (class 0 of member 0),
// recorded asynchronously by every location.
func (d *defWriter) metric() {
	g := d.g
	d.check("the metric", C.OTF2_GlobalDefWriter_WriteMetricMember(g, 0, d.s("critical path"), d.s("1 while the critical path runs on this location (cpath)"),
		C.OTF2_METRIC_TYPE_USER, C.OTF2_METRIC_ABSOLUTE_POINT, C.OTF2_TYPE_UINT64, C.OTF2_BASE_DECIMAL, 0, d.s("")))
	member := C.OTF2_MetricMemberRef(0)
	d.check("the metric", C.OTF2_GlobalDefWriter_WriteMetricClass(g, 0, 1, &member, C.OTF2_METRIC_ASYNCHRONOUS, C.OTF2_RECORDER_KIND_ABSTRACT))
	for _, l := range d.x.locs {
		d.check("the metric", C.OTF2_GlobalDefWriter_WriteMetricClassRecorder(g, 0, C.uint64_t(l.id)))
	}
}
