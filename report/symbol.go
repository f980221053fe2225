package report

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	"github.com/cpath/cpath/graph"
)

// Symbolizer turns call sites (return addresses) into file:line using the
// DWARF line tables of each rank's executable, when it is still there and
// was built with -g.
type Symbolizer struct {
	g     *graph.PAG
	mu    sync.Mutex
	exes  map[string]*lineTable
	cache map[[2]uint64]string
}

type lineTable struct {
	addrs []uint64
	locs  []string
}

// NewSymbolizer returns a symbolizer for the PAG's executables.
func NewSymbolizer(g *graph.PAG) *Symbolizer {
	return &Symbolizer{g: g, exes: map[string]*lineTable{}, cache: map[[2]uint64]string{}}
}

// Lookup returns "file.c:42" for a call site of rank, or "" if unknown.
func (s *Symbolizer) Lookup(rank int, pc uint64) string {
	if s == nil || rank >= len(s.g.Exe) {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := [2]uint64{uint64(rank), pc}
	if v, ok := s.cache[key]; ok {
		return v
	}
	exe := s.g.Exe[rank]
	lt, ok := s.exes[exe]
	if !ok {
		lt = loadLines(exe)
		s.exes[exe] = lt
	}
	out := ""
	if lt != nil {
		// A return address points after the call: look up the call itself.
		addr := pc - s.g.LoadAddress[rank] - 1
		i := sort.Search(len(lt.addrs), func(i int) bool { return lt.addrs[i] > addr }) - 1
		if i >= 0 {
			out = lt.locs[i]
		}
	}
	s.cache[key] = out
	return out
}

func loadLines(exe string) *lineTable {
	f, err := elf.Open(exe)
	if err != nil {
		return nil
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		return nil
	}
	lt := &lineTable{}
	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil || cu == nil {
			break
		}
		if cu.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(cu)
		if err != nil || lr == nil {
			continue
		}
		var e dwarf.LineEntry
		for lr.Next(&e) == nil {
			if e.File != nil && !e.EndSequence {
				lt.addrs = append(lt.addrs, e.Address)
				lt.locs = append(lt.locs, fmt.Sprintf("%s:%d", filepath.Base(e.File.Name), e.Line))
			}
		}
	}
	idx := make([]int, len(lt.addrs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return lt.addrs[idx[a]] < lt.addrs[idx[b]] })
	sorted := &lineTable{addrs: make([]uint64, len(idx)), locs: make([]string, len(idx))}
	for i, j := range idx {
		sorted.addrs[i], sorted.locs[i] = lt.addrs[j], lt.locs[j]
	}
	return sorted
}
