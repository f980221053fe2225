// Package symbol names the functions that call sites fall in, from the
// modules a log lists (trace.Header.Modules): a call site's module and
// offset (trace.Header.ModuleOf) are looked up in the module's ELF symbol
// table (.symtab, else .dynsym), and in its DWARF line table for the
// source line when it has one. A module without them is looked up in its
// separate debug file, DebugRoot/.build-id/xx/yyyy.debug, as gdb does.
// Names are demangled (Demangle). The module file must still be where the
// program loaded it; a build-id that differs from the logged one is an
// error, since the offsets would point into another build.
package symbol

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/cpath/cpath/trace"
)

// ErrBuildID reports a module file that is not the build the log names.
var ErrBuildID = errors.New("build-id differs from the logged one")

// DebugRoot is where separate debug information is installed (Debian's
// -dbgsym packages): DebugRoot/.build-id/xx/yyyy.debug for build-id
// xxyyyy. A variable so that tests can point it at their own files.
var DebugRoot = "/usr/lib/debug"

// Site is a resolved call site.
type Site struct {
	Module string // path
	Offset uint64 // in the module (its ELF virtual address)
	Func   string // demangled; "" when no symbol covers it
	Symbol string // Func as the symbol table spells it (mangled)
	// FuncOffset is Offset from the start of Func: the call site's
	// function+0xoff.
	FuncOffset uint64
	File       string // source file, "" without DWARF
	Line       int
}

func (s Site) String() string {
	if s.Func == "" {
		return fmt.Sprintf("%s+%#x", s.Module, s.Offset)
	}
	if s.File != "" {
		return fmt.Sprintf("%s (%s:%d)", s.Func, s.File, s.Line)
	}
	return fmt.Sprintf("%s+%#x", s.Func, s.FuncOffset)
}

// Table resolves call sites; it caches each module file it has opened.
type Table struct {
	mu   sync.Mutex
	mods map[string]*module
}

// NewTable returns an empty Table.
func NewTable() *Table { return &Table{mods: map[string]*module{}} }

type sym struct {
	start, end uint64
	name       string
	global     bool
}

type module struct {
	err     error
	syms    []sym // sorted by start
	lines   *lineTable
	fortran bool // linked with libgfortran: external procedures end in '_'
	// overloaded are the C++ names (Demangle's) that several functions
	// of the module share with different parameters: their overloads,
	// which Lookup names with their parameters (DemangleParams).
	overloaded map[string]bool
}

// lineTable maps addresses to source lines: row i covers addrs[i] up to
// addrs[i+1]; a row with an empty file ends a sequence (no line there).
type lineTable struct {
	addrs []uint64
	files []string
	lines []int
}

// Resolve names the function addr (a call site of the log with header h)
// falls in. A call site outside every module, or in a module whose file
// cannot be read, is an error.
func (t *Table) Resolve(h *trace.Header, addr uint64) (Site, error) {
	m, off := h.ModuleOf(addr)
	if m == nil {
		return Site{}, fmt.Errorf("address %#x: in no module of the log", addr)
	}
	return t.Lookup(m, off)
}

// Lookup names the call site at offset off (a return address) of module m.
func (t *Table) Lookup(m *trace.Module, off uint64) (Site, error) {
	s := Site{Module: m.Path, Offset: off}
	if m.Funcs != nil {
		// A module that names its offsets itself: no file, no symbol.
		if off >= uint64(len(m.Funcs)) {
			return s, fmt.Errorf("%s: offset %#x: no such function", m.Path, off)
		}
		f := m.Funcs[off]
		s.Func, s.File, s.Line = f.Name, f.File, f.Line
		if f.Module != "" {
			s.Module, s.Offset = f.Module, f.Offset
		} else if f.Offset != 0 {
			s.Symbol, s.FuncOffset = f.Name, f.Offset // named as a symbol table names it: function+0xoff
		}
		return s, nil
	}
	mod := t.open(m)
	if mod.err != nil {
		return s, mod.err
	}
	// The return address is just after the call: look up the call itself.
	q := off
	if q > 0 {
		q--
	}
	i := sort.Search(len(mod.syms), func(i int) bool { return mod.syms[i].start > q }) - 1
	if i >= 0 && q < mod.syms[i].end {
		s.Symbol = mod.syms[i].name
		s.Func = Demangle(s.Symbol, mod.fortran)
		if mod.overloaded[s.Func] {
			s.Func = DemangleParams(s.Symbol)
		}
		s.FuncOffset = off - mod.syms[i].start
	}
	if lt := mod.lines; lt != nil {
		j := sort.Search(len(lt.addrs), func(j int) bool { return lt.addrs[j] > q }) - 1
		if j >= 0 && lt.files[j] != "" {
			s.File, s.Line = lt.files[j], lt.lines[j]
		}
	}
	return s, nil
}

func (t *Table) open(m *trace.Module) *module {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := m.Path + "\x00" + m.BuildID
	if mod, ok := t.mods[key]; ok {
		return mod
	}
	mod := load(m)
	t.mods[key] = mod
	return mod
}

func load(m *trace.Module) *module {
	f, err := elf.Open(m.Path)
	if err != nil {
		return &module{err: err}
	}
	defer f.Close()
	id := buildID(f)
	if m.BuildID != "" && id != "" && id != m.BuildID {
		return &module{err: fmt.Errorf("%s: %w (file %s, log %s)", m.Path, ErrBuildID, id, m.BuildID)}
	}
	if id == "" {
		id = m.BuildID
	}
	mod := &module{fortran: linksGfortran(f)}
	syms, _ := f.Symbols()
	d, derr := f.DWARF()
	// A stripped module: its full symbol table and DWARF may be in a
	// separate debug file.
	if len(syms) == 0 || derr != nil {
		if dbg := openDebug(id); dbg != nil {
			defer dbg.Close()
			if len(syms) == 0 {
				syms, _ = dbg.Symbols()
			}
			if derr != nil {
				d, derr = dbg.DWARF()
			}
		}
	}
	if len(syms) == 0 {
		syms, _ = f.DynamicSymbols()
	}
	for _, s := range syms {
		if t := elf.ST_TYPE(s.Info); (t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC) || s.Value == 0 || s.Section == elf.SHN_UNDEF {
			continue
		}
		end := s.Value + s.Size
		if s.Size == 0 {
			end = s.Value + 1
		}
		mod.syms = append(mod.syms, sym{s.Value, end, s.Name, elf.ST_BIND(s.Info) == elf.STB_GLOBAL})
	}
	// Aliases share a start: the lookup takes the last of them, so sort
	// the preferred one last: a global name, then the shorter (foo over
	// __foo_internal), then by name, so that every run picks the same.
	sort.SliceStable(mod.syms, func(i, j int) bool {
		a, b := mod.syms[i], mod.syms[j]
		switch {
		case a.start != b.start:
			return a.start < b.start
		case a.global != b.global:
			return b.global
		case len(a.name) != len(b.name):
			return len(a.name) > len(b.name)
		}
		return a.name > b.name
	})
	if derr == nil {
		mod.lines = lines(d)
	}
	mod.overloaded = overloads(mod.syms)
	return mod
}

// overloads finds the C++ names that functions of different parameters
// share (Foam::reduce for double and for a label), not those of one
// function's clones (a constructor's complete and base object forms):
// 41 ms for the 15,873 symbols of LAMMPS's library.
func overloads(syms []sym) map[string]bool {
	forms := map[string]string{} // Demangle's name → its first parameter form
	var out map[string]bool
	for _, y := range syms {
		if !strings.HasPrefix(y.name, "_Z") {
			continue
		}
		n := Demangle(y.name, false)
		full := DemangleParams(y.name)
		if f, ok := forms[n]; !ok {
			forms[n] = full
		} else if f != full {
			if out == nil {
				out = map[string]bool{}
			}
			out[n] = true
		}
	}
	return out
}

// openDebug opens the separate debug file of build-id id, if one is
// installed and really is that build's.
func openDebug(id string) *elf.File {
	if len(id) < 3 {
		return nil
	}
	f, err := elf.Open(filepath.Join(DebugRoot, ".build-id", id[:2], id[2:]+".debug"))
	if err != nil {
		return nil
	}
	if buildID(f) != id {
		f.Close()
		return nil
	}
	return f
}

// linksGfortran says whether f needs the gfortran runtime: its external
// procedures' names carry gfortran's trailing underscore.
func linksGfortran(f *elf.File) bool {
	libs, _ := f.ImportedLibraries()
	for _, l := range libs {
		if strings.HasPrefix(l, "libgfortran.so") {
			return true
		}
	}
	return false
}

func buildID(f *elf.File) string {
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	if err != nil || len(b) < 16 {
		return ""
	}
	nameSz := binary.LittleEndian.Uint32(b[0:])
	descSz := binary.LittleEndian.Uint32(b[4:])
	off := 12 + (nameSz+3)&^3
	if uint64(off)+uint64(descSz) > uint64(len(b)) || !bytes.HasPrefix(b[12:], []byte("GNU")) {
		return ""
	}
	return hex.EncodeToString(b[off : off+descSz])
}

func lines(d *dwarf.Data) *lineTable {
	type row struct {
		addr uint64
		file string // "": the end of a sequence
		line int
	}
	var rows []row
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		// Only the units' line programs: none of their entries.
		r.SkipChildren()
		if e.Tag != dwarf.TagCompileUnit {
			continue
		}
		lr, err := d.LineReader(e)
		if err != nil || lr == nil {
			continue
		}
		var le dwarf.LineEntry
		for lr.Next(&le) == nil {
			switch {
			case le.EndSequence:
				rows = append(rows, row{addr: le.Address})
			case le.File != nil:
				rows = append(rows, row{le.Address, le.File.Name, le.Line})
			}
		}
	}
	if len(rows) == 0 {
		return nil
	}
	// Where one sequence ends and another starts, the start must win: it
	// sorts after the end, and the lookup takes the last row at or before
	// an address.
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].addr != rows[j].addr {
			return rows[i].addr < rows[j].addr
		}
		return rows[i].file == "" && rows[j].file != ""
	})
	lt := &lineTable{addrs: make([]uint64, len(rows)), files: make([]string, len(rows)), lines: make([]int, len(rows))}
	for i, r := range rows {
		lt.addrs[i], lt.files[i], lt.lines[i] = r.addr, r.file, r.line
	}
	return lt
}
