//go:build mpi

package main

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestWhatIfMPI: as an MPI job the analyzer rejects what the single
// process rejects, with the same one line and no hang, and answers the
// same scenarios with the same numbers.
func TestWhatIfMPI(t *testing.T) {
	const np = 2
	bin := buildMPICpath(t)
	dir := t.TempDir()
	writeRun(t, dir, 4)
	for _, tc := range badWhatIfs {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs, took := mpirunCpath(t, bin, np, "--what-if", tc.scenario, dir)
			lines := cpathLines(errs)
			if code == 0 || len(lines) != 1 || strings.TrimSpace(out) != "" {
				t.Fatalf("exit %d after %v, cpath lines %q, stdout %.200q; want non-zero, one line, nothing", code, took, lines, out)
			}
			if !regexp.MustCompile(tc.err).MatchString(lines[0]) {
				t.Errorf("%q does not match %q", lines[0], tc.err)
			}
		})
	}
	// The same answers at P = 1 and P = 2.
	keys := func(out string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("%v: %.300s", err, out)
		}
		return map[string]any{"pop": m["pop"], "what_if": m["what_if"]}
	}
	args := append(append([]string{"--json", "-", "--json-segments"}, whatIfArgs...), dir)
	code, one, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("single process: exit %d: %s", code, errs)
	}
	code, two, errs, _ := mpirunCpath(t, bin, np, args...)
	if code != 0 {
		t.Fatalf("np %d: exit %d: %s", np, code, errs)
	}
	if a, b := keys(one), keys(two); !reflect.DeepEqual(a, b) {
		t.Errorf("pop and what_if differ between 1 and %d analyzer ranks:\n%v\n%v", np, a, b)
	}
}
