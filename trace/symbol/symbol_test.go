package symbol

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cpath/cpath/trace"
)

const testC = `#include <stdio.h>
int work(int x) {
	int y = x * 3;
	printf("%d\n", y);
	return y;
}
int main(void) { return work(2) - 6; }
`

// TestResolve builds a small C program with debug information and
// resolves addresses inside it as if it were loaded at base 0x5000000: the
// function, the source line, and errors for an address outside it and for
// another build.
func TestResolve(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc): cannot build the test module")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	exe := filepath.Join(dir, "prog")
	if err := os.WriteFile(src, []byte(testC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-g", "-O0", "-fPIE", "-pie", "-Wl,--build-id", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var work elf.Symbol
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == "work" {
			work = s
		}
	}
	if work.Size == 0 {
		t.Fatal("no symbol work in the test program")
	}
	var lo, hi uint64 = ^uint64(0), 0
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			lo, hi = min(lo, p.Vaddr), max(hi, p.Vaddr+p.Memsz)
		}
	}
	const base = 0x5000000
	id := buildID(f)
	if id == "" {
		t.Fatal("the test program has no build-id")
	}
	h := &trace.Header{Modules: []trace.Module{{Path: exe, Base: base, Start: base + lo, End: base + hi, BuildID: id}}}
	addr := base + work.Value + work.Size/2
	s, err := NewTable().Resolve(h, addr)
	if err != nil {
		t.Fatal(err)
	}
	if s.Func != "work" || s.Offset != work.Value+work.Size/2 || s.Module != exe {
		t.Fatalf("resolved %#x to %+v, want work at offset %#x", addr, s, work.Value+work.Size/2)
	}
	if filepath.Base(s.File) != "prog.c" || s.Line < 2 || s.Line > 6 {
		t.Errorf("source line %s:%d, want prog.c:2..6", s.File, s.Line)
	}
	t.Logf("%#x: %v", addr, s)
	if _, err := NewTable().Resolve(h, base+hi+100); err == nil {
		t.Error("an address outside every module resolved")
	}
	h.Modules[0].BuildID = "00" + id
	if _, err := NewTable().Resolve(h, addr); err == nil {
		t.Error("a module with another build-id resolved")
	}
}
