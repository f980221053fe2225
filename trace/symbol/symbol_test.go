package symbol

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

const testCXX = `#include <cstdio>
namespace ns {
struct Solver {
	int step(int x);
};
int Solver::step(int x) {
	std::printf("%d\n", x);
	return x * 2;
}
}
template <typename T> T twice(T x) { std::printf("twice\n"); return x + x; }
int main() {
	ns::Solver s;
	return s.step(1) + twice(2) - 6;
}
`

const testF90 = `module physics
contains
  subroutine step(x)
    real, intent(inout) :: x
    x = x * 2.0
    print *, x
  end subroutine step
end module physics

subroutine solve(x)
  real, intent(inout) :: x
  x = x + 1.0
  print *, x
end subroutine solve

program main
  use physics
  real :: y
  y = 1.0
  call step(y)
  call solve(y)
end program main
`

// build compiles src (a file named name in dir) with compiler and flags,
// skipping the test when the compiler is missing.
func build(t *testing.T, dir, compiler, name, src string, flags ...string) string {
	t.Helper()
	cc, err := exec.LookPath(compiler)
	if err != nil {
		t.Skipf("no %s: cannot build the test module", compiler)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "prog")
	args := append(append([]string{}, flags...), "-O0", "-fPIE", "-pie", "-Wl,--build-id", "-o", exe, path)
	if compiler == "gfortran" { // its .mod files into dir, not the package's
		args = append(args, "-J", dir)
	}
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", compiler, err, out)
	}
	return exe
}

// testBase is where the tests pretend the module was loaded.
const testBase = 0x5000000

// loaded returns the module exe as if loaded at testBase, and the symbols
// of its .symtab (read before any stripping) by name.
func loaded(t *testing.T, exe string) (trace.Module, map[string]elf.Symbol) {
	t.Helper()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	byName := map[string]elf.Symbol{}
	for _, s := range syms {
		byName[s.Name] = s
	}
	var lo, hi uint64 = ^uint64(0), 0
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			lo, hi = min(lo, p.Vaddr), max(hi, p.Vaddr+p.Memsz)
		}
	}
	id := buildID(f)
	if id == "" {
		t.Fatal("the test program has no build-id")
	}
	return trace.Module{Path: exe, Base: testBase, Start: testBase + lo, End: testBase + hi, BuildID: id}, byName
}

// inside returns a call site in the middle of the function named name and
// its offset from the function's start.
func inside(t *testing.T, syms map[string]elf.Symbol, name string) (addr, funcOff uint64) {
	t.Helper()
	s, ok := syms[name]
	if !ok || s.Size == 0 {
		t.Fatalf("no symbol %s in the test program", name)
	}
	return testBase + s.Value + s.Size/2, s.Size / 2
}

// TestResolve builds a small C program with debug information and
// resolves addresses inside it as if it were loaded at base 0x5000000: the
// function, the source line, and errors for an address outside it and for
// another build.
func TestResolve(t *testing.T) {
	exe := build(t, t.TempDir(), "cc", "prog.c", testC, "-g")
	m, syms := loaded(t, exe)
	h := &trace.Header{Modules: []trace.Module{m}}
	addr, fo := inside(t, syms, "work")
	s, err := NewTable().Resolve(h, addr)
	if err != nil {
		t.Fatal(err)
	}
	if s.Func != "work" || s.Symbol != "work" || s.Offset != addr-testBase || s.FuncOffset != fo || s.Module != exe {
		t.Fatalf("resolved %#x to %+v, want work+%#x at offset %#x", addr, s, fo, addr-testBase)
	}
	if filepath.Base(s.File) != "prog.c" || s.Line < 2 || s.Line > 6 {
		t.Errorf("source line %s:%d, want prog.c:2..6", s.File, s.Line)
	}
	t.Logf("%#x: %v", addr, s)
	if _, err := NewTable().Resolve(h, m.End+100); err == nil {
		t.Error("an address outside every module resolved")
	}
	h.Modules[0].BuildID = "00" + m.BuildID
	if _, err := NewTable().Resolve(h, addr); err == nil {
		t.Error("a module with another build-id resolved")
	}
}

// TestResolveNoDebugInfo: programs built without -g name their call sites
// function+0xoff from the ELF symbol table, C++ and Fortran names
// demangled, and have no source line.
func TestResolveNoDebugInfo(t *testing.T) {
	for _, tc := range []struct {
		compiler, file, src string
		symbol, want        string
	}{
		{"cc", "prog.c", testC, "work", "work"},
		{"g++", "prog.cc", testCXX, "_ZN2ns6Solver4stepEi", "ns::Solver::step"},
		{"g++", "prog.cc", testCXX, "_Z5twiceIiET_S0_", "twice"},
		{"gfortran", "prog.f90", testF90, "__physics_MOD_step", "physics::step"},
		{"gfortran", "prog.f90", testF90, "solve_", "solve"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			exe := build(t, t.TempDir(), tc.compiler, tc.file, tc.src)
			m, syms := loaded(t, exe)
			addr, fo := inside(t, syms, tc.symbol)
			s, err := NewTable().Lookup(&m, addr-testBase)
			if err != nil {
				t.Fatal(err)
			}
			if s.Func != tc.want || s.Symbol != tc.symbol || s.FuncOffset != fo || s.File != "" {
				t.Fatalf("resolved %s+%#x to %+v, want %s+%#x without a source line", tc.symbol, fo, s, tc.want, fo)
			}
			t.Logf("%v", s)
		})
	}
}

// TestResolveDebugFile strips a program built with -g and installs its
// debug information as Debian's -dbgsym packages do, under
// .build-id/xx/yyyy.debug: the stripped program resolves to its functions
// and source lines through it, and not through the debug file of another
// build put in its place.
func TestResolveDebugFile(t *testing.T) {
	if _, err := exec.LookPath("objcopy"); err != nil {
		t.Skip("no objcopy (binutils): cannot split the debug information")
	}
	dir := t.TempDir()
	exe := build(t, dir, "cc", "prog.c", testC, "-g")
	m, syms := loaded(t, exe)
	addr, fo := inside(t, syms, "work")
	root := filepath.Join(dir, "debug")
	slot := filepath.Join(root, ".build-id", m.BuildID[:2], m.BuildID[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(slot), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--only-keep-debug", exe, slot}, {"--strip-all", exe}} {
		if out, err := exec.Command("objcopy", args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %v: %v\n%s", args, err, out)
		}
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := f.Symbols(); len(s) > 0 {
		t.Fatal("the stripped program still has a symbol table")
	}
	f.Close()

	defer func(old string) { DebugRoot = old }(DebugRoot)
	DebugRoot = filepath.Join(dir, "nowhere")
	s, err := NewTable().Lookup(&m, addr-testBase)
	if err != nil {
		t.Fatal(err)
	}
	if s.Func != "" || s.File != "" {
		t.Fatalf("without its debug file the stripped program resolved to %+v (work is not exported)", s)
	}

	DebugRoot = root
	s, err = NewTable().Lookup(&m, addr-testBase)
	if err != nil {
		t.Fatal(err)
	}
	if s.Func != "work" || s.FuncOffset != fo || filepath.Base(s.File) != "prog.c" || s.Line < 2 || s.Line > 6 {
		t.Fatalf("through %s: %+v, want work+%#x at prog.c:2..6", slot, s, fo)
	}
	t.Logf("%v", s)

	// Another build's debug file in the slot is not used.
	other := build(t, t.TempDir(), "cc", "other.c", "int other(void) { return 1; }\nint main(void) { return other() - 1; }\n", "-g")
	if out, err := exec.Command("objcopy", "--only-keep-debug", other, slot).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	if s, err = NewTable().Lookup(&m, addr-testBase); err != nil || s.Func != "" || s.File != "" {
		t.Fatalf("through another build's debug file: %+v, %v", s, err)
	}
}

// TestDemangle: C++ and Rust names as pprof shows them by default, and
// gfortran's conventions; what is not mangled stays as it is.
func TestDemangle(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fortran bool
		want    string
	}{
		{"_ZN9LAMMPS_NS4Comm8exchangeEv", false, "LAMMPS_NS::Comm::exchange"},
		{"_ZN9LAMMPS_NS6Verlet3runEi", false, "LAMMPS_NS::Verlet::run"},
		{"_ZN9LAMMPS_NS9CommBrick12forward_commEi.cold", false, "LAMMPS_NS::CommBrick::forward_comm"},
		{"_ZN9LAMMPS_NS6FixNVEC2EPNS_6LAMMPSEiPPc", false, "LAMMPS_NS::FixNVE::FixNVE"},
		{"_Z5twiceIiET_S0_", false, "twice"},
		{"_ZNSt6vectorIiSaIiEE9push_backERKi", false, "std::vector::push_back"},
		{"_ZZ4mainENKUlvE_clEv", false, "main::{lambda()#1}::operator()"},
		{"_RNvCs6FaNHyYDqGP_4demo4main", false, "demo::main"},
		{"__physics_MOD_step", true, "physics::step"},
		{"__physics_MOD_step", false, "physics::step"},
		{"__my_mod_MOD_do_it", true, "my_mod::do_it"},
		{"solve_", true, "solve"},
		{"my_sub_", true, "my_sub"},
		{"solve_", false, "solve_"},
		{"MAIN__", true, "MAIN__"},
		{"_gfortran_st_write", true, "_gfortran_st_write"},
		{"main", true, "main"},
		{"work", false, "work"},
		{"work.constprop.0", false, "work.constprop.0"},
		{"_Z", false, "_Z"},
		{"", true, ""},
	} {
		if got := Demangle(tc.name, tc.fortran); got != tc.want {
			t.Errorf("Demangle(%q, %v) = %q, want %q", tc.name, tc.fortran, got, tc.want)
		}
	}
}

const testOverloads = `#include <cstdio>
namespace ns {
struct Field {
	double v;
	Field(double x) : v(x) { std::printf("field\n"); } // complete and base object constructors: one name
};
double reduce(double x) { std::printf("d\n"); return x; }
int reduce(int x) { std::printf("i\n"); return x; }
double scale(double x) { std::printf("s\n"); return 2 * x; }
template <typename T> void sum(T &x) { std::printf("t\n"); x += x; }
template void sum<double>(double &);
template void sum<int>(int &);
}
int main() {
	ns::Field f(1.5);
	return (int)(ns::reduce(f.v) + ns::reduce(2) + ns::scale(1.0)) - 6;
}
`

// TestResolveOverloads: overloads of one C++ function, and instances of
// one function template, are named with their parameters, which tell
// them apart; a function that has none, and a constructor's clones, keep
// the plain name.
func TestResolveOverloads(t *testing.T) {
	exe := build(t, t.TempDir(), "g++", "prog.cc", testOverloads, "-fno-inline")
	m, syms := loaded(t, exe)
	tab := NewTable()
	for _, tc := range []struct{ symbol, want string }{
		{"_ZN2ns6reduceEd", "ns::reduce(double)"},
		{"_ZN2ns6reduceEi", "ns::reduce(int)"},
		{"_ZN2ns5scaleEd", "ns::scale"},
		{"_ZN2ns3sumIdEEvRT_", "ns::sum(double&)"}, // a template's: no return type
		{"_ZN2ns3sumIiEEvRT_", "ns::sum(int&)"},
	} {
		addr, _ := inside(t, syms, tc.symbol)
		s, err := tab.Lookup(&m, addr-testBase)
		if err != nil {
			t.Fatal(err)
		}
		if s.Func != tc.want {
			t.Errorf("%s: named %q, want %q", tc.symbol, s.Func, tc.want)
		}
	}
	for name := range syms {
		if strings.HasPrefix(name, "_ZN2ns5FieldC") {
			addr, _ := inside(t, syms, name)
			if s, err := tab.Lookup(&m, addr-testBase); err != nil || s.Func != "ns::Field::Field" {
				t.Errorf("%s: named %q (%v), want ns::Field::Field", name, s.Func, err)
			}
		}
	}
}
