package otf2

// #include "cotf2.h"
import "C"

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

const undef32 = 0xFFFFFFFF

// Archive is an OTF2 archive's definitions in cpath's terms: the MPI
// ranks and their locations (threads), the communicators as each rank's
// table, the regions as operations, and the timer.
type Archive struct {
	Anchor string // the anchor file, X.otf2 (its event files are in X/)
	d      *defs
	// ranks[r] are the locations of world rank r: the one in MPI's
	// locations group first (thread 0), then the others of its process
	// in id order.
	ranks [][]uint64
	// regionOp is each region's operation, OpInvalid for none;
	// regionMPI marks the regions of MPI calls (with an operation or
	// not, the unwrapped ones).
	regionOp  []trace.Op
	regionMPI []bool
	// comms is each communicator definition (by reference) in cpath's
	// terms; commIndex[r][ref] is its index in rank r's table, -1 if r
	// is not a member.
	comms     []commInfo
	commIndex [][]int32
	tables    [][]trace.Comm // each rank's communicator table (trace.Header.Comms)
	attrIDs   [C.CP_NATTR]uint32
	subParam  uint32 // the cpath::subrecord parameter, undef32 if none
	// fromCPath says the archive was written by cpath: every field its
	// events do not carry is an attribute, so nothing is resolved
	// across calls or counted (docs/otf2.md).
	fromCPath bool
	calls     []int64           // by rank: the calls the archive says it holds, -1 if it does not
	nevents   map[uint64]uint64 // by location: its events, as its definition counts them (0: not counted)
}

// commInfo is a communicator definition as cpath sees it.
type commInfo struct {
	name    string
	self    bool    // MPI_COMM_SELF: rank r's own
	members []int32 // world rank of each local rank (the local group's, for an intercommunicator)
	remote  []int32 // an intercommunicator's other group
	ok      bool    // an MPI communicator cpath maps
}

// Open reads the definitions of the archive whose anchor file is anchor.
func Open(anchor string) (*Archive, error) {
	st, err := os.Stat(anchor)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%s: no OTF2 anchor file", anchor)
	case err != nil:
		return nil, err
	case st.IsDir() || !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not an OTF2 anchor file (not a regular file)", anchor)
	}
	d, err := readDefs(anchor)
	if err != nil {
		return nil, err
	}
	a := &Archive{Anchor: anchor, d: d}
	if !d.haveClock || d.clock.resolution == 0 {
		return nil, archiveErr(anchor, "no clock properties (timer resolution) in its definitions")
	}
	if err := a.mapRanks(); err != nil {
		return nil, err
	}
	a.mapRegions()
	if !slices.Contains(a.regionMPI, true) {
		return nil, archiveErr(anchor, "no MPI regions in its definitions: the trace records no MPI calls")
	}
	a.mapComms()
	for i, name := range attrNames {
		a.attrIDs[i] = undef32
		if id, ok := d.attrs[name]; ok {
			a.attrIDs[i] = id
		}
	}
	a.subParam = undef32
	if id, ok := d.params[subParam]; ok {
		a.subParam = id
	}
	_, a.fromCPath = d.attrs[attrNames[C.CP_A_SEQ]]
	if err := a.checkFiles(); err != nil {
		return nil, err
	}
	return a, nil
}

// mapRanks finds the MPI ranks: the members of MPI's locations group are
// the locations of world ranks 0, 1, …; each rank's process holds its
// threads.
func (a *Archive) mapRanks() error {
	d := a.d
	var mpi []uint64
	for _, g := range d.groups {
		if g.defined && g.typ == C.OTF2_GROUP_TYPE_COMM_LOCATIONS && g.paradigm == C.OTF2_PARADIGM_MPI {
			mpi = g.members
			break
		}
	}
	if len(mpi) == 0 {
		return archiveErr(a.Anchor, "no MPI ranks in its definitions (no locations group of the MPI paradigm): not a trace of an MPI program")
	}
	byID := map[uint64]*location{}
	a.nevents = map[uint64]uint64{}
	for i := range d.locs {
		byID[d.locs[i].id] = &d.locs[i]
		a.nevents[d.locs[i].id] = d.locs[i].events
	}
	a.ranks = make([][]uint64, len(mpi))
	a.calls = make([]int64, len(mpi))
	for r, id := range mpi {
		l := byID[id]
		if l == nil {
			return archiveErr(a.Anchor, "rank %d: its location %d is not defined", r, id)
		}
		locs := []uint64{id}
		for _, o := range d.locs {
			if o.group == l.group && o.id != id && o.typ == C.OTF2_LOCATION_TYPE_CPU_THREAD {
				locs = append(locs, o.id)
			}
		}
		slices.Sort(locs[1:])
		if len(locs) > 1<<16 {
			return archiveErr(a.Anchor, "rank %d: %d threads, more than cpath numbers", r, len(locs))
		}
		a.ranks[r] = locs
		a.calls[r] = 0
		for _, lid := range locs {
			n, ok := d.locProps[lid][callsProp]
			if !ok || a.calls[r] < 0 {
				a.calls[r] = -1
				continue
			}
			a.calls[r] += int64(n)
		}
	}
	return nil
}

// mapRegions gives each region its operation: an MPI region (of the MPI
// paradigm, or named as an MPI function) whose name is one of cpath's
// operations (TAU's "MPI_Send()" too).
func (a *Archive) mapRegions() {
	d := a.d
	a.regionOp = make([]trace.Op, len(d.regions))
	a.regionMPI = make([]bool, len(d.regions))
	for i, rg := range d.regions {
		if !rg.defined {
			continue
		}
		name := strings.TrimSuffix(strings.TrimSpace(d.str(rg.name)), "()")
		mpi := rg.paradigm == C.OTF2_PARADIGM_MPI || strings.HasPrefix(name, "MPI_")
		if !mpi {
			continue
		}
		a.regionMPI[i] = true
		if op, ok := trace.OpByName(name); ok && !op.IsSub() {
			a.regionOp[i] = op
		}
	}
}

// mapComms puts the MPI communicators in cpath's terms and each rank's
// table: MPI_COMM_WORLD at 0, the rank's MPI_COMM_SELF at 1, then every
// other communicator the rank is in, in definition order. Names follow
// cpath's where the archive has none of its own (W0.0, s<rank>.0).
func (a *Archive) mapComms() {
	d := a.d
	R := len(a.ranks)
	maxRef := uint32(0)
	for _, c := range d.comms {
		maxRef = max(maxRef, c.id+1)
	}
	a.comms = make([]commInfo, min(maxRef, 1<<24))
	worldRef, names := int64(-1), map[string]int{}
	for _, c := range d.comms {
		if int(c.id) >= len(a.comms) {
			continue
		}
		ci := commInfo{name: d.str(c.name)}
		ga, okA := a.group(c.group)
		if !okA {
			continue
		}
		switch {
		case c.inter:
			gb, okB := a.group(c.groupB)
			if !okB {
				continue
			}
			ci.members, ci.remote = ranksOf(ga.members), ranksOf(gb.members)
		case ga.typ == C.OTF2_GROUP_TYPE_COMM_SELF:
			ci.self = true
		default:
			ci.members = ranksOf(ga.members)
			if worldRef < 0 && c.parent == undef32 && isWorld(ci.members, R) {
				worldRef = int64(c.id)
			}
		}
		ci.ok = true
		a.comms[c.id] = ci
		names[ci.name]++
	}
	for i := range a.comms {
		c := &a.comms[i]
		switch {
		case !c.ok:
		case int64(i) == worldRef:
			c.name = "W0.0"
		case c.self:
		case c.name == "" || names[c.name] > 1:
			c.name = "c" + strconv.Itoa(i) // unnamed or named alike: the definition tells them apart
		}
		// A communicator of one named as cpath names MPI_COMM_SELF (an
		// archive cpath wrote: one per rank) is that rank's.
		if c.ok && len(c.members) == 1 && c.name == "s"+strconv.Itoa(int(c.members[0]))+".0" {
			c.self = true
		}
	}
	a.commIndex = make([][]int32, R)
	a.tables = make([][]trace.Comm, R)
	for r := range a.ranks {
		idx := make([]int32, len(a.comms))
		for i := range idx {
			idx[i] = -1
		}
		world := make([]int32, R)
		for i := range world {
			world[i] = int32(i)
		}
		tab := []trace.Comm{{Name: "W0.0", Members: world}, {Name: "s" + strconv.Itoa(r) + ".0", Members: []int32{int32(r)}}}
		for i := range a.comms {
			c := &a.comms[i]
			switch {
			case !c.ok:
			case int64(i) == worldRef:
				idx[i] = int32(trace.CommWorld)
			case c.self:
				if len(c.members) == 0 || c.members[0] == int32(r) {
					idx[i] = int32(trace.CommSelf)
				}
			case slices.Contains(c.members, int32(r)):
				idx[i] = int32(len(tab))
				tab = append(tab, trace.Comm{Name: c.name, Members: c.members, Remote: c.remote})
			case slices.Contains(c.remote, int32(r)):
				idx[i] = int32(len(tab))
				tab = append(tab, trace.Comm{Name: c.name, Members: c.remote, Remote: c.members})
			}
		}
		a.commIndex[r], a.tables[r] = idx, tab
	}
}

// group returns an MPI group definition.
func (a *Archive) group(ref uint32) (*group, bool) {
	if int(ref) >= len(a.d.groups) || !a.d.groups[ref].defined || a.d.groups[ref].paradigm != C.OTF2_PARADIGM_MPI {
		return nil, false
	}
	return &a.d.groups[ref], true
}

// ranksOf is a group's members (ranks in MPI's locations group: world
// ranks) as cpath's int32 world ranks.
func ranksOf(m []uint64) []int32 {
	out := make([]int32, len(m))
	for i, x := range m {
		out[i] = int32(x)
		if x >= 1<<31 {
			out[i] = trace.PeerUnknown
		}
	}
	return out
}

func isWorld(m []int32, n int) bool {
	if len(m) != n {
		return false
	}
	for i, x := range m {
		if x != int32(i) {
			return false
		}
	}
	return true
}

// evtFile is the event file of location loc.
func (a *Archive) evtFile(loc uint64) string {
	base := strings.TrimSuffix(a.Anchor, ".otf2")
	return filepath.Join(base, strconv.FormatUint(loc, 10)+".evt")
}

// checkFiles refuses an archive one of whose ranks' event files is
// missing: the OTF2 library would read it as a location without events.
func (a *Archive) checkFiles() error {
	for r, locs := range a.ranks {
		for _, l := range locs {
			if _, err := os.Stat(a.evtFile(l)); err != nil {
				return archiveErr(a.evtFile(l), "missing: the event file of location %d (rank %d)", l, r)
			}
		}
	}
	return nil
}

// ns converts a timestamp to ns since the timer's global offset.
func (a *Archive) ns(t uint64) int64 {
	c := a.d.clock
	if c.resolution == 1e9 {
		return int64(t - c.offset) // a timer of ns (cpath's exports): no division
	}
	d := t - c.offset
	neg := t < c.offset
	if neg {
		d = c.offset - t
	}
	hi, lo := bits.Mul64(d, 1e9)
	var q uint64
	if hi < c.resolution {
		q, _ = bits.Div64(hi, lo, c.resolution)
	} else {
		q = 1 << 62
	}
	if neg {
		return -int64(q)
	}
	return int64(q)
}

// nsDelta converts a signed number of ticks (a clock offset) to ns.
func (a *Archive) nsDelta(ticks float64) int64 {
	return int64(ticks * 1e9 / float64(a.d.clock.resolution))
}

// header is rank r's header as far as the definitions say; the rank's
// reader completes it (clock, modules, executable).
func (a *Archive) header(r int) trace.Header {
	d := a.d
	h := trace.Header{Version: trace.Version, RunID: fmt.Sprintf("otf2-%016x", d.traceID), Rank: r, Size: len(a.ranks),
		Logger: d.creator, Threads: len(a.ranks[r]) > 1, Comms: a.tables[r], Clock: trace.Clock{Method: "otf2"}}
	loc := a.ranks[r][0]
	props := d.locProps[loc]
	h.CPUs, h.HostCPUs = int(min(props[cpusProp], 1<<20)), int(min(props[hostCPUsProp], 1<<20))
	for _, k := range sortedKeys(props) {
		if name, ok := strings.CutPrefix(k, eagerPrefix); ok && props[k] <= 1<<62 {
			h.EagerLimits = append(h.EagerLimits, trace.ControlVar{Name: name, Value: int64(props[k])})
		}
	}
	for _, l := range d.locs {
		if l.id == loc && int(l.group) < len(d.lgroups) {
			if p := d.lgroups[l.group].parent; int(p) < len(d.nodes) {
				h.Host = d.str(d.nodes[p].name)
			}
		}
	}
	return h
}

// Run is the archive as a graph.Run: a rank's file is its first
// location's event file.
func (a *Archive) Run() *graph.Run {
	R := len(a.ranks)
	run := &graph.Run{Dir: a.Anchor, Files: make([]string, R), Headers: make([]trace.Header, R), Calls: slices.Clone(a.calls), Source: a}
	for r := range a.ranks {
		run.Files[r], run.Headers[r] = a.evtFile(a.ranks[r][0]), a.header(r)
	}
	run.Notes = append(run.Notes, graph.Oversubscribed(run.Headers)...)
	return run
}

// Size is the bytes of rank r's event files.
func (a *Archive) Size(r int) int64 {
	n := int64(0)
	for _, l := range a.ranks[r] {
		if st, err := os.Stat(a.evtFile(l)); err == nil {
			n += st.Size()
		}
	}
	return n
}

// OpenRank opens rank r for reading.
func (a *Archive) OpenRank(r int) (graph.RankReader, error) { return a.openRank(r) }
