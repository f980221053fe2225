package report

import (
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
	"github.com/cpath/cpath/trace/symbol"
)

// Symbolizer names call sites (return addresses) the same way on every
// rank, whatever address ASLR gave them: it finds the module a call site
// falls in among those the rank's log lists (PAG.Modules; a log that lists
// none: the executable at its load address) and resolves the offset there
// with trace/symbol, which reads the module's DWARF, its ELF symbols or its
// separate debug file. It opens each module once and names each call site
// once; only the call sites a report shows are asked for. It is the one
// naming of call sites of an analysis: the report's segments, the DOT
// drawing and the what-if scenarios that name call sites all take it.
type Symbolizer struct {
	g     *graph.PAG
	tab   *symbol.Table // nil: no symbols, hexadecimal offsets only
	mu    sync.Mutex
	byPC  map[[2]uint64]siteName  // (rank, return address)
	byOff map[moduleSite]siteName // the same site on every rank
}

// siteName is a call site's name: where (Callsite) and in what function.
type siteName struct{ site, function string }

type moduleSite struct {
	path, buildID string
	off           uint64
}

// NewSymbolizer returns a symbolizer for the PAG's modules.
func NewSymbolizer(g *graph.PAG) *Symbolizer {
	return &Symbolizer{g: g, tab: symbol.NewTable(), byPC: map[[2]uint64]siteName{}, byOff: map[moduleSite]siteName{}}
}

// HexNames returns a Symbolizer that names every call site by its offset
// in hexadecimal (Hex), reading no module.
func HexNames(g *graph.PAG) *Symbolizer { return &Symbolizer{g: g} }

// Callsite is how the report names call site pc of rank: symbolised
// (Lookup), else its offset in hexadecimal (Hex); "" for none (pc 0).
func (s *Symbolizer) Callsite(rank int, pc uint64) string {
	if pc == 0 {
		return ""
	}
	if n := s.Lookup(rank, pc); n != "" {
		return n
	}
	return s.Hex(rank, pc)
}

// Hex is call site pc of rank as its offset from the executable's load
// address in hexadecimal ("0x4011d6"), the address itself if below it.
func (s *Symbolizer) Hex(rank int, pc uint64) string {
	off := pc
	if rank >= 0 && rank < len(s.g.LoadAddress) && s.g.LoadAddress[rank] <= pc {
		off = pc - s.g.LoadAddress[rank]
	}
	return "0x" + strconv.FormatUint(off, 16)
}

// Lookup returns the name of a call site of rank: "file.c:42" from DWARF,
// else "function+0x1a" from the ELF symbols, else "module+0x1234" (the
// offset in a module whose file is gone or that has no symbol there); ""
// if no module of the rank holds it.
func (s *Symbolizer) Lookup(rank int, pc uint64) string { return s.name(rank, pc).site }

// Function returns the (demangled) function a call site of rank is in, ""
// if unknown.
func (s *Symbolizer) Function(rank int, pc uint64) string { return s.name(rank, pc).function }

func (s *Symbolizer) name(rank int, pc uint64) siteName {
	if s == nil || s.tab == nil || rank < 0 || rank >= s.g.Ranks {
		return siteName{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := [2]uint64{uint64(rank), pc}
	if n, ok := s.byPC[key]; ok {
		return n
	}
	var m *trace.Module
	var off uint64
	if rank < len(s.g.Modules) && len(s.g.Modules[rank]) > 0 {
		m, off = trace.ModuleOf(s.g.Modules[rank], pc)
	} else if rank < len(s.g.Exe) && s.g.Exe[rank] != "" && pc >= s.g.LoadAddress[rank] {
		m, off = &trace.Module{Path: s.g.Exe[rank], Base: s.g.LoadAddress[rank]}, pc-s.g.LoadAddress[rank]
	}
	var n siteName
	if m != nil {
		mk := moduleSite{m.Path, m.BuildID, off}
		var ok bool
		if n, ok = s.byOff[mk]; !ok {
			n = s.resolve(m, off)
			s.byOff[mk] = n
		}
	}
	s.byPC[key] = n
	return n
}

func (s *Symbolizer) resolve(m *trace.Module, off uint64) siteName {
	site, err := s.tab.Lookup(m, off)
	switch {
	case err != nil || (site.Func == "" && site.File == ""):
		return siteName{site: filepath.Base(site.Module) + "+0x" + strconv.FormatUint(site.Offset, 16)}
	case site.File != "":
		return siteName{filepath.Base(site.File) + ":" + strconv.Itoa(site.Line), site.Func}
	case site.Symbol == "":
		return siteName{site.Func, site.Func} // a region of a trace in another format (trace.Module.Funcs)
	}
	return siteName{site.Func + "+0x" + strconv.FormatUint(site.FuncOffset, 16), site.Func}
}

// SiteLabel is how the text report and the DOT drawing show a call site:
// its function and where in it, "main (halo.c:57)", or the call site
// alone when it names the function already ("LAMMPS_NS::Comm::exchange+0x1a2")
// or no function is known.
func SiteLabel(callsite, function string) string {
	if function == "" || callsite == function || strings.HasPrefix(callsite, function+"+0x") {
		return callsite
	}
	return function + " (" + callsite + ")"
}

// SiteLabel names call site pc of rank as the report does (SiteLabel of
// its Callsite and Function).
func (in *Input) SiteLabel(rank int, pc uint64) string {
	site, fn := in.site(rank, pc)
	return SiteLabel(site, fn)
}

// site returns a call site's Callsite and Function.
func (in *Input) site(rank int, pc uint64) (site, function string) {
	n := in.names()
	site = n.Callsite(rank, pc)
	if pc != 0 {
		function = n.Function(rank, pc)
	}
	return site, function
}

// names is the input's naming of call sites: hexadecimal offsets without
// one.
func (in *Input) names() *Symbolizer {
	if in.Names == nil {
		in.Names = HexNames(in.PAG)
	}
	return in.Names
}
