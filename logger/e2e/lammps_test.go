//go:build mpi

package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
	"github.com/cpath/cpath/trace"
)

// thermo returns LAMMPS's thermo table from its screen output: the lines
// from the "Step ..." header up to "Loop time", one slice of fields each.
func thermo(out string) [][]string {
	var rows [][]string
	in := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "Step":
			in = true
			rows = append(rows, f)
		case strings.HasPrefix(line, "Loop time"):
			in = false
		case in && len(f) > 0:
			rows = append(rows, f)
		}
	}
	return rows
}

func TestLAMMPS(t *testing.T) {
	const np = 2
	lmp := mpitest.NeedTool(t, "lmp", "lammps")
	lib := mpitest.LoggerLib(t)
	input, err := filepath.Abs(filepath.Join("testdata", "in.lj"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-in", input, "-log", "none", "-echo", "none"}

	plain := thermo(mpitest.Run(t, np, "", "", t.TempDir(), lmp, args...))
	logDir := filepath.Join(t.TempDir(), "logs")
	out := mpitest.Run(t, np, lib, logDir, t.TempDir(), lmp, args...)
	logged := thermo(out)

	// Steps 0, 50, 100 under a header: the run completed, and the
	// logger changed nothing the simulation computes.
	if len(plain) != 4 || plain[len(plain)-1][0] != "100" {
		t.Fatalf("plain LAMMPS run: thermo table %v, want a header and steps 0, 50, 100", plain)
	}
	if len(logged) != len(plain) {
		t.Fatalf("logged LAMMPS run: thermo table %v, without the logger %v\n%s", logged, plain, out)
	}
	for i := range plain {
		if !slices.Equal(plain[i], logged[i]) {
			t.Errorf("thermo line %d: %v under the logger, %v without", i, logged[i], plain[i])
		}
	}

	logs := mpitest.ReadLogs(t, logDir, np)
	r := check(t, logs, np, "")
	for rank, l := range logs {
		if filepath.Base(l.Header.Exe) != "lmp" {
			t.Errorf("rank %d: header exe %q, want .../lmp", rank, l.Header.Exe)
		}
		var coll, p2p int
		for op, n := range r.counts[rank] {
			switch op.Class() {
			case trace.ClassCollective, trace.ClassIcollective:
				coll += n
			case trace.ClassSend, trace.ClassRecv, trace.ClassSendRecv, trace.ClassIsend, trace.ClassIrecv:
				p2p += n
			}
		}
		t.Logf("rank %d: %d records, %d collective and %d point-to-point calls, communicators %d",
			rank, len(l.Records), coll, p2p, len(l.Comms))
		// 100 steps with 2 ranks: LAMMPS exchanges ghost atoms every step
		// and reduces thermo output and neighbor-list checks.
		if coll < 10 || p2p < 100 {
			t.Errorf("rank %d: %d collective and %d point-to-point calls logged, want >= 10 and >= 100 (counts %v)",
				rank, coll, p2p, r.counts[rank])
		}
	}
	// LAMMPS calls MPI from liblammps.so: its call sites resolve to
	// functions of the library, the same on every rank.
	if n := checkCallSiteNames(t, logs, "liblammps"); n == 0 {
		t.Errorf("no call site in liblammps")
	}
	if len(r.sends) == 0 || len(r.sends) != len(r.recvs) {
		t.Errorf("%d messages sent, %d received", len(r.sends), len(r.recvs))
	}
}
