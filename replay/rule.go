package replay

import (
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// rule is the weights of one solve, each edge's weight times a factor: by
// kind, and for program edges (the computation before a call) also by the
// call: its rank's vertex range, and what the call's attributes say
// (cattr): whether its call site is in a set, and whether it lies in the
// POP window.
type rule struct {
	mul            [numKinds]float64
	rankLo, rankHi int32 // program edges into these vertices: times rankMul
	rankMul        float64
	siteSet        uint16 // program edges into S(c) for c at a site of this set (a bit of cattr.Sites): times siteMul
	siteMul        float64
	// With outsideRule, program edges into S(c) for c outside the POP
	// window (cattr: attrOutside) are times outside instead: 0 in the ideal
	// run, 1 (unchanged) when a rank's useful computation is balanced.
	outsideRule bool
	outside     float64
	// With fixedRule, the MPI calls fixed (attrFixed: MPI_Init,
	// MPI_Finalize, anything outside the window) keep the weights of the
	// edges into their ends.
	fixedRule bool
	// With dropHeld, the sends held by their receivers' progress where
	// MPI did not make them wait (graph.EdgeHeldSend) are no
	// dependencies: the POP ideal network delivers a message as soon as it
	// is sent.
	dropHeld bool
}

// cattr is what the rules and the walks ask of the call a vertex belongs
// to (the zero cattr for hubs and the start vertex): its operation, its
// flags and the call-site sets of the scenarios it is at.
type cattr struct {
	Op    trace.Op
	Flags uint8
	Sites uint16 // bit i: its call site is in the plan's call-site set i
}

// The flags of a cattr.
const (
	attrOutside = 1 << iota // its computation is outside the POP window (before MPI_Init's end, after MPI_Finalize's start)
	attrFixed               // its MPI time stays under transfers=F (MPI_Init, MPI_Finalize, outside the window)
	attrStartIn             // it starts inside the --from/--to window
	attrEndIn               // it ends inside it
)

// maxSiteSets is how many call-site sets cattr.Sites holds.
const maxSiteSets = 16

const numKinds = int(graph.NumEdgeKinds)

var ones = func() (m [numKinds]float64) {
	for k := range m {
		m[k] = 1
	}
	return m
}()

// identity is the rule of the run as it was.
func identity() *rule {
	return &rule{mul: ones, rankMul: 1, siteMul: 1, outside: 1}
}

// endKinds are the edges into calls' ends, the weights the POP ideal
// network makes free: the time inside MPI calls that is not waiting
// (call edges: their own activity, copies, protocol, the collective's
// work once everyone is there; mpi=F), then the transfers of messages,
// collectives and one-sided synchronisations (transferKinds;
// transfers=F). Waiting has no weight in the PAG: it comes back as the
// longest path's slack.
var endKinds = []graph.EdgeKind{graph.EdgeCall, graph.EdgeLateSender, graph.EdgeLateReceiver, graph.EdgeCollective, graph.EdgeHubOut, graph.EdgeRMA, graph.EdgeHeldSend}

var transferKinds = endKinds[1:]

// usefulOnly is the rule of the POP ideal run: only the useful computation
// (program edges in the window) weighs, and only the dependencies MPI's
// semantics impose hold (dropHeld).
func usefulOnly() *rule {
	r := &rule{rankMul: 1, siteMul: 1, outsideRule: true, outside: 0, dropHeld: true}
	r.mul[graph.EdgeProgram] = 1
	return r
}

// progMul is the factor of the program edges into vertex v (an S vertex)
// of a call with attributes a.
func (r *rule) progMul(v int32, a cattr) float64 {
	m := r.mul[graph.EdgeProgram]
	if r.outsideRule && a.Flags&attrOutside != 0 {
		return m * r.outside
	}
	if v >= r.rankLo && v < r.rankHi {
		m *= r.rankMul
	}
	if a.Sites&r.siteSet != 0 {
		m *= r.siteMul
	}
	return m
}

// isIdentity reports whether the rule changes nothing.
func (r *rule) isIdentity() bool {
	return r.mul == ones && !r.perCall()
}

// perCall reports whether the factors of program edges or of MPI calls'
// edges depend on the call.
func (r *rule) perCall() bool {
	return r.rankLo < r.rankHi && r.rankMul != 1 || r.siteSet != 0 && r.siteMul != 1 ||
		r.outsideRule && r.outside != r.mul[graph.EdgeProgram] || r.fixedRule
}

// scale is weight w (non-negative) times m, rounded: exact for m = 1
// (weights are far below 2⁵³ ns).
func scale(w int64, m float64) int64 { return int64(float64(w)*m + 0.5) }

// rowRule is how the edges into vertex v (vertex ids below 2·calls are
// the calls' S and E, the rest hubs and the start), of a call with
// attributes a, are taken under r: their
// factors by kind (tab, a copy of r.mul that perCall rules change) and
// the mode.
func rowRule(r *rule, modes *rowModes, perCall bool, calls, v int32, a cattr, tab *[numKinds]float64) (*[numKinds]float64, int) {
	switch {
	case perCall:
		return row(r, modes, calls, v, a, tab)
	case v >= 2*calls:
		return tab, plainRow
	case v&1 == 0:
		return tab, modes.start
	}
	return tab, modes.end
}

// How a row's weights are taken: as they are, all 0, each times its
// factor, or that with the held sends left out (rule.dropHeld).
const (
	plainRow = iota
	zeroRow
	scaledRow
	droppingRow
)

// rowModes is what a rule makes of the rows of calls' starts (program
// and launch edges) and ends (the call's own and transfer edges).
type rowModes struct {
	launch float64
	start  int // the mode of the rows of calls' starts, if not set by the call
	end    int // the mode of the rows of calls' ends (not fixed)
}

func (r *rule) modes() rowModes {
	rm := rowModes{launch: r.mul[graph.EdgeLaunch], start: scaledRow, end: scaledRow}
	switch p := r.mul[graph.EdgeProgram]; {
	case p == 1 && rm.launch == 1:
		rm.start = plainRow
	case p == 0 && rm.launch == 0:
		rm.start = zeroRow
	}
	ones, zeros := true, true
	for _, k := range endKinds {
		ones = ones && r.mul[k] == 1
		zeros = zeros && r.mul[k] == 0
	}
	switch {
	case r.dropHeld:
		rm.end = droppingRow
	case ones:
		rm.end = plainRow
	case zeros:
		rm.end = zeroRow
	}
	return rm
}

// row is how the edges into vertex v are taken under r: their factors by
// kind (tab, with its program entry set for a call's start) and the mode.
// Hubs' rows (edges of weight 0 from their members) are plain.
func row(r *rule, rm *rowModes, calls, v int32, a cattr, tab *[numKinds]float64) (*[numKinds]float64, int) {
	switch {
	case v >= 2*calls:
		return tab, plainRow
	case v&1 == 0:
		p := r.progMul(v, a)
		tab[graph.EdgeProgram] = p
		switch {
		case p == 1 && rm.launch == 1:
			return tab, plainRow
		case p == 0 && rm.launch == 0:
			return tab, zeroRow
		}
		return tab, scaledRow
	case r.fixedRule && a.Flags&attrFixed != 0:
		return &ones, plainRow
	}
	return tab, rm.end
}

// bits is a bitset over calls.
type bits []uint64

func newBits(n int) bits { return make(bits, (n+63)/64) }

func (b bits) get(i int32) bool { return b[i>>6]>>(i&63)&1 != 0 }
func (b bits) set(i int32)      { b[i>>6] |= 1 << (i & 63) }
