package report

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/cpath/cpath/graph"
)

// Wrappers says which functions are the program's own MPI wrapper layer:
// the frames of a call path the report looks through to name the caller
// behind them (Input.Wrappers).
type Wrappers struct {
	// Off names every call by the MPI call's own site, as without call
	// paths.
	Off bool
	// Match, if set, is the layer: the functions whose (demangled) names
	// it matches. Unset, the layer is found from the call paths
	// (wrapperLayer).
	Match *regexp.Regexp
}

// The --wrapper values besides a regular expression.
const (
	WrappersAuto = "auto"
	WrappersNone = "none"
)

// ParseWrappers reads --wrapper: WrappersAuto, WrappersNone or a regular
// expression of the layer's function names.
func ParseWrappers(s string) (Wrappers, error) {
	switch s {
	case WrappersAuto, "":
		return Wrappers{}, nil
	case WrappersNone:
		return Wrappers{Off: true}, nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return Wrappers{}, fmt.Errorf("--wrapper=%s: not a regular expression: %v", s, err)
	}
	return Wrappers{Match: re}, nil
}

// caller is where a call came from in the program's terms: the first
// frame of its call path outside the MPI wrapper layer, and the layer's
// functions it went through (outermost first). Depth says the recorded
// path ended inside the layer, so the caller is the outermost frame
// recorded.
type caller struct {
	site, function string
	via            []string
	depth          bool
}

// callerNames names the callers of a run's call sites (Input.Sites): by
// logged rank and site, the first frame outside the wrapper layer.
type callerNames struct {
	sites []graph.SiteTable
	match *regexp.Regexp  // Wrappers.Match
	layer map[string]bool // the layer's functions (auto), nil with Match
	name  func(rank int, pc uint64) (site, function string)
	byKey map[[2]uint64]int32
	list  []caller
}

// newCallerNames finds the wrapper layer of the run's call paths; nil if
// the run has none or the report is asked not to look through one.
func newCallerNames(in *Input) *callerNames {
	if in.Wrappers.Off || !hasFrames(in.Sites) {
		return nil
	}
	return newCallers(in.Sites, in.Wrappers.Match, in.site)
}

// newCallers names the callers of sites by name, the layer being the
// functions match matches, or found (wrapperLayer) if match is nil.
func newCallers(sites []graph.SiteTable, match *regexp.Regexp, name func(rank int, pc uint64) (site, function string)) *callerNames {
	cn := &callerNames{sites: sites, match: match, name: name, byKey: map[[2]uint64]int32{}}
	if match == nil {
		cn.layer = wrapperLayer(sites, name)
	}
	return cn
}

func hasFrames(ts []graph.SiteTable) bool {
	for i := range ts {
		if len(ts[i].Frames) > 0 {
			return true
		}
	}
	return false
}

// wrapper says whether function fn is in the layer.
func (cn *callerNames) wrapper(fn string) bool {
	if fn == "" {
		return false
	}
	if cn.match != nil {
		return cn.match.MatchString(fn)
	}
	return cn.layer[fn]
}

// of returns the index of the caller of site k of rank in cn.list, -1 for
// a site with no call path or one that starts outside the layer.
func (cn *callerNames) of(rank int, k uint32) int32 {
	if cn == nil || rank >= len(cn.sites) || int(k) >= cn.sites[rank].Len() {
		return -1
	}
	key := [2]uint64{uint64(rank), uint64(k)}
	if i, ok := cn.byKey[key]; ok {
		return i
	}
	frames := cn.sites[rank].Chain(k)
	i := int32(-1)
	var via []string
	j := 0
	for ; j < len(frames); j++ {
		_, fn := cn.name(rank, frames[j])
		if !cn.wrapper(fn) {
			break
		}
		if len(via) == 0 || via[len(via)-1] != fn {
			via = append(via, fn) // a recursive layer once
		}
	}
	if j > 0 {
		c := caller{via: via}
		if j == len(frames) {
			j, c.depth = len(frames)-1, true
		}
		c.site, c.function = cn.name(rank, frames[j])
		slices.Reverse(c.via)
		if c.depth {
			c.via = c.via[1:] // the caller is the last of them
		}
		i = int32(len(cn.list))
		cn.list = append(cn.list, c)
	}
	cn.byKey[key] = i
	return i
}

// wrapperLayer finds a program's MPI wrapper layer from its call paths,
// by function: a function is in the layer if, in every path it appears
// in,
//   - it makes one call towards MPI (one return address in it over all
//     paths), to MPI itself or to a function of the layer,
//   - and it is called from two or more places, or only from functions of
//     the layer (the inner levels of a layer of several).
//
// This is the largest set of functions with these properties. A routine
// of the program's own that reaches MPI only through one call of the
// layer, from two places, looks the same and is taken for the layer too;
// Wrappers.Match names the layer exactly.
func wrapperLayer(ts []graph.SiteTable, name func(rank int, pc uint64) (site, function string)) map[string]bool {
	type facts struct {
		at        map[string]bool // its return addresses (by name: one site on every rank)
		callers   map[string]bool // where it is called from
		callerFns map[string]bool
		callees   map[string]bool // the functions it calls towards MPI ("" for MPI itself)
	}
	by := map[string]*facts{}
	get := func(fn string) *facts {
		f := by[fn]
		if f == nil {
			f = &facts{at: map[string]bool{}, callers: map[string]bool{}, callerFns: map[string]bool{}, callees: map[string]bool{}}
			by[fn] = f
		}
		return f
	}
	for r := range ts {
		t := &ts[r]
		for k := range t.Sites {
			frames := t.Chain(uint32(k))
			callee := ""
			site, fn := name(r, frames[0])
			for i := range frames {
				if fn == "" {
					break // nothing known above an unknown frame
				}
				f := get(fn)
				f.at[site] = true
				f.callees[callee] = true
				callee = fn
				if i+1 < len(frames) {
					site, fn = name(r, frames[i+1])
					f.callers[site] = true
					f.callerFns[fn] = true
				}
			}
		}
	}
	layer := map[string]bool{}
	for fn, f := range by {
		if len(f.at) == 1 {
			layer[fn] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for fn := range layer {
			f := by[fn]
			ok := len(f.callers) >= 2 || len(f.callerFns) > 0
			for c := range f.callerFns {
				if len(f.callers) < 2 && !layer[c] {
					ok = false
				}
			}
			for c := range f.callees {
				if c != "" && !layer[c] {
					ok = false
				}
			}
			if !ok {
				delete(layer, fn)
				changed = true
			}
		}
	}
	return layer
}

// EndsAt names where a stretch of computation on the path ends, as the
// table of computation by call site does (callsiteRow).
func (r *Report) EndsAt(s *Segment) string { return callsiteRow(endRow(s, r.callers)) }

// endRow is the row of by_callsite segment s counts in, without its
// sums: where it ends, the first caller outside the program's MPI
// wrapper layer and the layer's functions it went through, or the MPI
// call's site.
func endRow(s *Segment, callers *callerNames) CallsiteShare {
	row := CallsiteShare{Rank: s.Rank, Callsite: s.Callsite, Function: s.Function}
	if s.caller > 0 && callers != nil {
		c := &callers.list[s.caller-1]
		row.Callsite, row.Function, row.Via, row.DepthReached = c.site, c.function, c.via, c.depth
	}
	return row
}
