//go:build mpi

package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOtf2BadInputMPI: a bad archive given to a 3-rank analyzer job is
// the single process's one line and a non-zero exit, with no rank left
// hanging, whether rank 0 reads alone (dag) or every rank its share.
func TestOtf2BadInputMPI(t *testing.T) {
	bin := buildMPICpath(t)
	for _, tc := range otf2Bads {
		t.Run(tc.name, func(t *testing.T) {
			arg := tc.setup(t, t.TempDir())
			code, _, serr := runCLI(t, "analyze", arg)
			if code != 1 {
				t.Fatalf("single process: exit %d, want 1; stderr %q", code, serr)
			}
			for _, algo := range []string{"dag", "split"} {
				checkBadInputJob(t, bin, 3, badInput{name: tc.name, code: 1, err: tc.err}, arg, algo, serr, "")
			}
		})
	}
}

// TestOtf2Job: an analyzer job (each rank reading its share of the
// locations) gives the single process's report of an archive.
func TestOtf2Job(t *testing.T) {
	bin := buildMPICpath(t)
	foreign := filepath.Join(t.TempDir(), "halo")
	if out, err := exec.Command(python3(t), filepath.Join("testdata", "otf2gen.py"), "halo", foreign).CombinedOutput(); err != nil {
		t.Fatalf("otf2gen.py halo: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		dir string
		np  int
	}{{filepath.Join(scorepDir, "ping-pong-otf2"), 2}, {filepath.Join(scorepDir, "ping-pong-otf2-papi"), 2}, {foreign, 3}} {
		for _, algo := range []string{"dag", "split"} {
			t.Run(filepath.Base(tc.dir)+"/"+algo, func(t *testing.T) {
				code, sout, serr := runCLI(t, "--algo="+algo, "--json", "-", "--json-segments", tc.dir)
				if code != 0 {
					t.Fatalf("single process: exit %d: %s", code, serr)
				}
				code, out, errs, _ := mpirunCpath(t, bin, tc.np, "--algo="+algo, "--json", "-", "--json-segments", tc.dir)
				if code != 0 {
					t.Fatalf("mpirun -np %d: exit %d: %s", tc.np, code, errs)
				}
				one, job := decodeJSON(t, strings.TrimSpace(sout)), decodeJSON(t, strings.TrimSpace(out))
				for _, k := range []string{"critical_path", "waitstates", "pop", "calls", "comm_matrix"} {
					a, b := one[k], job[k]
					if k == "critical_path" {
						// What the job did (ranks, rounds, bytes) is its own.
						delete(a.(map[string]any), "analyzer")
						delete(b.(map[string]any), "analyzer")
					}
					ja, _ := json.Marshal(a)
					jb, _ := json.Marshal(b)
					if string(ja) != string(jb) {
						t.Errorf("%s differs: one process %.500s\n%d ranks %.500s", k, ja, tc.np, jb)
					}
				}
			})
		}
	}
}
