//go:build mpi

package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cpath/cpath/trace"
	"github.com/cpath/cpath/trace/symbol"
)

// checkCallSiteNames resolves every call site of every rank's log through
// the modules the log lists: each must fall in a module whose file can be
// read, the same (module, offset) must get the same name on every rank,
// whatever address ASLR gave it there, and at least 80 % of the distinct
// call sites must resolve to a named function (a stripped module names
// only its exported functions: Debian's lmp and liblammps keep .dynsym
// only, so a call from main or from a hidden function stays module+offset).
// It returns how many distinct call sites lie in a module whose base name
// starts with libPrefix.
func checkCallSiteNames(t *testing.T, logs []*trace.Log, libPrefix string) int {
	t.Helper()
	tab := symbol.NewTable()
	type key struct {
		mod string
		off uint64
	}
	names := map[key]string{}
	addrs := map[key]map[uint64]bool{}
	inLib := map[key]bool{}
	for rank, l := range logs {
		if len(l.Header.Modules) == 0 {
			t.Fatalf("rank %d: the log lists no modules", rank)
		}
		bad := 0
		for _, r := range l.Records {
			if r.Op.IsSub() || r.CallSite == 0 {
				continue
			}
			s, err := tab.Resolve(&l.Header, r.CallSite)
			if err != nil {
				if bad++; bad <= 3 {
					t.Errorf("rank %d: %v call site %#x: %v", rank, r.Op, r.CallSite, err)
				}
				continue
			}
			k := key{s.Module, s.Offset}
			if prev, ok := names[k]; ok && prev != s.Func {
				t.Errorf("rank %d: %s+%#x is %s here, %s on another rank", rank, s.Module, s.Offset, s.Func, prev)
			}
			names[k] = s.Func
			if addrs[k] == nil {
				addrs[k] = map[uint64]bool{}
			}
			addrs[k][r.CallSite] = true
			if strings.HasPrefix(filepath.Base(s.Module), libPrefix) {
				inLib[k] = true
			}
		}
	}
	named := 0
	for k, n := range names {
		if n != "" {
			named++
		}
		if inLib[k] {
			t.Logf("%s+%#x: %q (%d different addresses over the ranks)", filepath.Base(k.mod), k.off, n, len(addrs[k]))
		}
	}
	t.Logf("%d distinct call sites, %d named, %d in %s*", len(names), named, len(inLib), libPrefix)
	if named*5 < len(names)*4 {
		t.Errorf("%d of %d distinct call sites resolve to a named function, want at least 80%%", named, len(names))
	}
	return len(inLib)
}
