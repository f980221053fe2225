package report

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

const symbolTestC = `#include <stdio.h>
int work(int x) {
	int y = x * 3;
	printf("%d\n", y);
	return y;
}
int main(void) { return work(2) - 6; }
`

// TestSymbolizer names call sites of two ranks that loaded the same
// program at different addresses (ASLR): the same name on both, file:line
// with DWARF, function+0xoff without, module+0xoff when the file is gone,
// nothing for an address in no module (the report then shows the offset in
// the executable); a rank whose log lists no modules is looked up in its
// executable at its load address.
func TestSymbolizer(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc): cannot build the test program")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(src, []byte(symbolTestC), 0o644); err != nil {
		t.Fatal(err)
	}
	const base0, base1 = 0x5000000, 0x7f3a00000000
	for _, tc := range []struct {
		name  string
		flags []string
		site  string // of the call site 0x10 into work
		label string
	}{
		{"dwarf", []string{"-g"}, "prog.c:", "work (prog.c:"},
		{"symbols", nil, "work+0x10", "work+0x10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exe := filepath.Join(dir, "prog-"+tc.name)
			args := append(tc.flags, "-O0", "-fPIE", "-pie", "-o", exe, src)
			if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
				t.Fatalf("cc: %v\n%s", err, out)
			}
			f, err := elf.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			syms, _ := f.Symbols()
			f.Close()
			var work uint64
			for _, s := range syms {
				if s.Name == "work" {
					work = s.Value
				}
			}
			if work == 0 {
				t.Fatal("no symbol work")
			}
			mod := func(base uint64) []trace.Module {
				return []trace.Module{{Path: exe, Base: base, Start: base, End: base + 0x10000}}
			}
			g := &graph.PAG{Ranks: 3, Exe: []string{exe, exe, exe}, LoadAddress: []uint64{base0, base1, base0},
				Modules: [][]trace.Module{mod(base0), mod(base1), nil}}
			sym := NewSymbolizer(g)
			in := &Input{PAG: g, Names: sym}
			for rank, base := range []uint64{base0, base1, base0} {
				pc := base + work + 0x10
				site, fn := in.site(rank, pc)
				if !strings.HasPrefix(site, tc.site) || fn != "work" {
					t.Errorf("rank %d: call site %q in %q, want %s… in work", rank, site, fn, tc.site)
				}
				if l := in.SiteLabel(rank, pc); !strings.HasPrefix(l, tc.label) {
					t.Errorf("rank %d: label %q, want %s…", rank, l, tc.label)
				}
			}
			// An address in no module of the log: the offset in the executable.
			if site, fn := in.site(0, base0-0x100+0x10); site != "0x4ffff10" || fn != "" {
				t.Errorf("address below every module: %q in %q, want 0x4ffff10", site, fn)
			}
			// The module file is gone: its name and the offset.
			if err := os.Rename(exe, exe+".gone"); err != nil {
				t.Fatal(err)
			}
			defer os.Rename(exe+".gone", exe)
			g2 := *g
			sym2 := NewSymbolizer(&g2)
			in2 := &Input{PAG: &g2, Names: sym2}
			want := filepath.Base(exe) + "+0x" + strconv.FormatUint(work+0x10, 16)
			if site, fn := in2.site(1, base1+work+0x10); site != want || fn != "" {
				t.Errorf("module file gone: %q in %q, want %s", site, fn, want)
			}
		})
	}
}

// TestSiteLabel: the function first unless the call site names it.
func TestSiteLabel(t *testing.T) {
	for _, tc := range []struct{ site, fn, want string }{
		{"halo.c:57", "main", "main (halo.c:57)"},
		{"LAMMPS_NS::Comm::exchange+0x1a2", "LAMMPS_NS::Comm::exchange", "LAMMPS_NS::Comm::exchange+0x1a2"},
		{"liblammps.so.0+0x359bd5", "", "liblammps.so.0+0x359bd5"},
		{"0x4011d6", "", "0x4011d6"},
		{"", "", ""},
	} {
		if got := SiteLabel(tc.site, tc.fn); got != tc.want {
			t.Errorf("SiteLabel(%q, %q) = %q, want %q", tc.site, tc.fn, got, tc.want)
		}
	}
}
