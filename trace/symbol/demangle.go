package symbol

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Demangle returns the source-level name of a linker symbol:
//   - C++ (Itanium ABI) and Rust names demangled by
//     github.com/ianlancetaylor/demangle, simplified as pprof does by
//     default: no parameter lists, no template arguments, no clone
//     suffixes (_ZN9LAMMPS_NS4Comm8exchangeEv → LAMMPS_NS::Comm::exchange);
//   - gfortran's module procedures, __mod_MOD_name, as mod::name;
//   - when fortran is set (the symbol's module links the gfortran runtime),
//     an external procedure's trailing underscore dropped (solve_ → solve);
//
// anything else as it is.
func Demangle(name string, fortran bool) string {
	if strings.HasPrefix(name, "_Z") || strings.HasPrefix(name, "_R") {
		return demangle.Filter(name, demangle.NoParams, demangle.NoEnclosingParams, demangle.NoTemplateParams, demangle.NoClones)
	}
	if rest, ok := strings.CutPrefix(name, "__"); ok {
		if mod, proc, ok := strings.Cut(rest, "_MOD_"); ok && mod != "" && proc != "" {
			return mod + "::" + proc
		}
	}
	// MAIN__ (the main program) and names of the runtime keep theirs.
	if fortran && len(name) > 1 && name[len(name)-1] == '_' && name[len(name)-2] != '_' && name[0] != '_' {
		return name[:len(name)-1]
	}
	return name
}
