package symbol

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Demangle returns the source-level name of a linker symbol:
//   - C++ (Itanium ABI) and Rust names demangled by
//     github.com/ianlancetaylor/demangle, simplified as pprof does by
//     default: no parameter lists, no template arguments, no clone
//     suffixes (_ZN9LAMMPS_NS4Comm8exchangeEv → LAMMPS_NS::Comm::exchange;
//     Lookup names overloads with DemangleParams);
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

// DemangleParams is Demangle's name of a C++ function with its parameter
// list, which tells overloads apart
// (_ZN4Foam6reduceIdEEvRT_ → Foam::reduce(double&)); template arguments
// and clone suffixes still left out.
func DemangleParams(name string) string {
	if !strings.HasPrefix(name, "_Z") {
		return Demangle(name, false)
	}
	full := demangle.Filter(name, demangle.NoEnclosingParams, demangle.NoTemplateParams, demangle.NoClones)
	// A function template's name carries its return type first ("void
	// Foam::reduce(double&)"): from the plain name on.
	if i := strings.Index(full, Demangle(name, false)); i > 0 {
		full = full[i:]
	}
	return full
}
