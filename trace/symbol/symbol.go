// Package symbol names the functions that call sites fall in, from the
// modules a log lists (trace.Header.Modules): a call site's module and
// offset (trace.Header.ModuleOf) are looked up in the module's ELF symbol
// table (.symtab, else .dynsym), and in its DWARF line table for the
// source line when it has one. The module file must still be where the
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
	"sort"
	"sync"

	"github.com/cpath/cpath/trace"
)

// ErrBuildID reports a module file that is not the build the log names.
var ErrBuildID = errors.New("build-id differs from the logged one")

// Site is a resolved call site.
type Site struct {
	Module string // path
	Offset uint64 // in the module (its ELF virtual address)
	Func   string // "" when no symbol covers it
	File   string // source file, "" without DWARF
	Line   int
}

func (s Site) String() string {
	if s.Func == "" {
		return fmt.Sprintf("%s+%#x", s.Module, s.Offset)
	}
	if s.File != "" {
		return fmt.Sprintf("%s (%s:%d)", s.Func, s.File, s.Line)
	}
	return s.Func
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
}

type module struct {
	err   error
	syms  []sym // sorted by start
	lines *lineTable
}

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
	s := Site{Module: m.Path, Offset: off}
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
		s.Func = mod.syms[i].name
	}
	if lt := mod.lines; lt != nil {
		j := sort.Search(len(lt.addrs), func(j int) bool { return lt.addrs[j] > q }) - 1
		if j >= 0 {
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
	if m.BuildID != "" {
		if id := buildID(f); id != "" && id != m.BuildID {
			return &module{err: fmt.Errorf("%s: %w (file %s, log %s)", m.Path, ErrBuildID, id, m.BuildID)}
		}
	}
	mod := &module{}
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, _ = f.DynamicSymbols()
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 {
			continue
		}
		end := s.Value + s.Size
		if s.Size == 0 {
			end = s.Value + 1
		}
		mod.syms = append(mod.syms, sym{s.Value, end, s.Name})
	}
	sort.Slice(mod.syms, func(i, j int) bool { return mod.syms[i].start < mod.syms[j].start })
	if d, err := f.DWARF(); err == nil {
		mod.lines = lines(d)
	}
	return mod
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
	lt := &lineTable{}
	type row struct {
		addr uint64
		file string
		line int
	}
	var rows []row
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		if err != nil || lr == nil {
			continue
		}
		var le dwarf.LineEntry
		for lr.Next(&le) == nil {
			if le.EndSequence || le.File == nil {
				continue
			}
			rows = append(rows, row{le.Address, le.File.Name, le.Line})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].addr < rows[j].addr })
	for _, r := range rows {
		lt.addrs = append(lt.addrs, r.addr)
		lt.files = append(lt.files, r.file)
		lt.lines = append(lt.lines, r.line)
	}
	return lt
}
