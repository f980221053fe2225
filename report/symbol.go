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
// once; only the call sites a report shows are asked for.
type Symbolizer struct {
	g     *graph.PAG
	tab   *symbol.Table
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

// Lookup returns the name of a call site of rank: "file.c:42" from DWARF,
// else "function+0x1a" from the ELF symbols, else "module+0x1234" (the
// offset in a module whose file is gone or that has no symbol there); ""
// if no module of the rank holds it.
func (s *Symbolizer) Lookup(rank int, pc uint64) string { return s.name(rank, pc).site }

// Function returns the (demangled) function a call site of rank is in, ""
// if unknown.
func (s *Symbolizer) Function(rank int, pc uint64) string { return s.name(rank, pc).function }

func (s *Symbolizer) name(rank int, pc uint64) siteName {
	if s == nil || rank < 0 || rank >= s.g.Ranks {
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
		return siteName{site: filepath.Base(m.Path) + "+0x" + strconv.FormatUint(off, 16)}
	case site.File != "":
		return siteName{filepath.Base(site.File) + ":" + strconv.Itoa(site.Line), site.Func}
	}
	return siteName{site.Func + "+0x" + strconv.FormatUint(site.FuncOffset, 16), site.Func}
}

// SiteLabel is how the text report and the DOT drawing show a call site:
// its function and where in it, "main (halo.c:57)", or the call site
// alone when it names the function already ("LAMMPS_NS::Comm::exchange+0x1a2")
// or no function is known.
func SiteLabel(callsite, function string) string {
	if function == "" || strings.HasPrefix(callsite, function+"+0x") {
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
	site = callsite(in, rank, pc)
	if pc != 0 && in.Function != nil {
		function = in.Function(rank, pc)
	}
	return site, function
}
