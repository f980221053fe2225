//go:build mpi

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cpath/cpath/internal/mpitest"
)

func TestMain(m *testing.M) { mpitest.Main(m) }

// program is a test program recorded for the round trip.
type program struct {
	name  string
	src   string // relative to the repository root
	np    int
	args  []string
	env   []string
	flags []string
}

var programs = []program{
	{name: "halo", src: "examples/halo.c", np: 4},
	{name: "slowallreduce", src: "report/e2e/testdata/slowallreduce.c", np: 3, args: []string{"20", "200", "2000", "1"}},
	{name: "tokenring", src: "report/e2e/testdata/tokenring.c", np: 3, args: []string{"10", "200", "2000", "200"}},
	{name: "latebarrier", src: "report/e2e/testdata/latebarrier.c", np: 3, args: []string{"10", "200", "2000"}},
	{name: "latesender", src: "report/e2e/testdata/latesender.c", np: 2, args: []string{"10", "4", "2000"}},
	{name: "latereceiver", src: "report/e2e/testdata/latereceiver.c", np: 2, args: []string{"10", "2000"}},
	{name: "subcomm", src: "report/e2e/testdata/subcomm.c", np: 4, args: []string{"10", "200", "2000", "1"}},
	{name: "heldsend", src: "report/e2e/testdata/heldsend.c", np: 2, args: []string{"isend", "3", "5000", "64", "4096", "65536"}},
	{name: "persistent", src: "report/e2e/testdata/heldsend.c", np: 2, args: []string{"persistent", "3", "5000", "64", "4096", "65536"}},
	{name: "p2p", src: "logger/e2e/testdata/p2p.c", np: 4},
	{name: "coll", src: "logger/e2e/testdata/coll.c", np: 4},
	{name: "more", src: "logger/e2e/testdata/more.c", np: 4, args: []string{"calls"}, flags: []string{"-lpthread"}},
	{name: "pause", src: "logger/e2e/testdata/more.c", np: 4, args: []string{"pause"}, flags: []string{"-lpthread"}},
	{name: "threads", src: "logger/e2e/testdata/more.c", np: 4, args: []string{"threads"}, flags: []string{"-lpthread"}},
	{name: "mprobe", src: "logger/e2e/testdata/mprobe.c", np: 3},
	{name: "rma", src: "logger/e2e/testdata/rma.c", np: 4, env: []string{"OMPI_MCA_osc=sm,pt2pt"}},
	{name: "pscw", src: "logger/e2e/testdata/pscw.c", np: 4},
	{name: "io", src: "logger/e2e/testdata/io.c", np: 4},
	{name: "neighbor", src: "logger/e2e/testdata/neighbor.c", np: 4},
}

// TestRoundTrip records each program, exports its logs as an OTF2
// archive and analyses both.
func TestRoundTrip(t *testing.T) {
	lib := mpitest.LoggerLib(t)
	bin := mpitest.CPathBin(t)
	mpitest.NeedTool(t, "otf2-print", "otf2-tools")
	root := mpitest.RepoRoot(t)
	t.Setenv("OMPI_MCA_hwloc_base_binding_policy", "none")
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			work := t.TempDir()
			exe := mpitest.Compile(t, work, "mpicc", filepath.Join(root, p.src), p.flags...)
			logs := filepath.Join(work, "logs")
			mpitest.RunEnv(t, p.np, p.env, lib, logs, work, exe, p.args...)
			roundTrip(t, bin, logs, filepath.Join(work, "otf2"))
		})
	}
}

// roundTrip exports logs into out and holds the archive's report, and
// its events, to the logs'.
func roundTrip(t *testing.T, bin, logs, out string) {
	t.Helper()
	cpath(t, bin, "export", "--otf2", out, logs)
	want := report(t, bin, logs)
	got := report(t, bin, out)
	if d := diffJSON(want, got, ""); len(d) > 0 {
		sort.Strings(d)
		t.Errorf("the archive's report differs from the logs' in %d places:\n  %s", len(d), strings.Join(d[:min(len(d), 40)], "\n  "))
	}
	checkEventCounts(t, bin, logs, filepath.Join(out, "traces.otf2"))
}

// ignored are the report's keys that say how the analysis went, not what
// it found: the time spent reading and building (which the format
// changes), where the input was, and the run's id.
var ignored = map[string]bool{"graph_time_ns": true, "total_time_ns": true, "log_dir": true, "run_id": true}

// diffJSON lists where two decoded JSON reports differ.
func diffJSON(a, b any, path string) []string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %.100v, archive %.100v", path, a, b)}
		}
		var out []string
		for k := range x {
			if ignored[k] {
				continue
			}
			if _, ok := y[k]; !ok {
				out = append(out, path+"/"+k+": only in the logs' report")
				continue
			}
			out = append(out, diffJSON(x[k], y[k], path+"/"+k)...)
		}
		for k := range y {
			if _, ok := x[k]; !ok && !ignored[k] {
				out = append(out, path+"/"+k+": only in the archive's report")
			}
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return []string{fmt.Sprintf("%s: %d entries, archive %.200v", path, len(x), b)}
		}
		var out []string
		for i := range x {
			out = append(out, diffJSON(x[i], y[i], path+"["+strconv.Itoa(i)+"]")...)
		}
		return out
	}
	if !reflect.DeepEqual(a, b) {
		return []string{fmt.Sprintf("%s: %.200v, archive %.200v", path, a, b)}
	}
	return nil
}

const runTimeout = 120 * time.Second

// cpath runs cpath with args and returns its stdout.
func cpath(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("cpath %s: %v\n%s", strings.Join(args, " "), err, errs.String())
	}
	return out.Bytes()
}

func report(t *testing.T, bin, dir string) any {
	t.Helper()
	var rep any
	if err := json.Unmarshal(cpath(t, bin, "--json", "-", "--json-segments", dir), &rep); err != nil {
		t.Fatalf("cpath --json - %s: %v", dir, err)
	}
	return rep
}

// info is what cpath info --json says of a run's operations.
type info struct {
	Operations []struct {
		Op    string `json:"op"`
		Calls uint64 `json:"calls"`
	} `json:"operations"`
}

var (
	enterLine = regexp.MustCompile(`^ENTER\s+\d+\s+\d+\s+Region: "([^"]+)"`)
	pollsAttr = regexp.MustCompile(`"cpath::polls" <\d+>; UINT64; (\d+)\)`)
)

// checkEventCounts holds the ENTER events of each MPI region that
// otf2-print reads from the archive (a run of unproductive polls counting
// its calls, attribute cpath::polls) to cpath info's count of the calls
// of each operation, from the logs and from the archive.
func checkEventCounts(t *testing.T, bin, logs, anchor string) {
	t.Helper()
	cmd := exec.Command("otf2-print", anchor)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("otf2-print %s: %v\n%.2000s", anchor, err, errs.String())
	}
	if errs.Len() > 0 {
		t.Errorf("otf2-print %s warns:\n%.2000s", anchor, errs.String())
	}
	printed := map[string]uint64{}
	lines := strings.Split(out.String(), "\n")
	for i, l := range lines {
		m := enterLine.FindStringSubmatch(l)
		if m == nil || !strings.HasPrefix(m[1], "MPI_") {
			continue
		}
		n := uint64(1)
		if i+1 < len(lines) {
			if p := pollsAttr.FindStringSubmatch(lines[i+1]); p != nil {
				n, _ = strconv.ParseUint(p[1], 10, 64)
			}
		}
		printed[m[1]] += n
	}
	for _, dir := range []string{logs, anchor} {
		var in info
		if err := json.Unmarshal(cpath(t, bin, "info", "--json", dir), &in); err != nil {
			t.Fatal(err)
		}
		counted := map[string]uint64{}
		for _, o := range in.Operations {
			counted[o.Op] = o.Calls
		}
		if !reflect.DeepEqual(printed, counted) {
			t.Errorf("MPI regions entered, by otf2-print: %v\ncalls by cpath info %s: %v", printed, dir, counted)
		}
	}
}

// TestLAMMPSRoundTrip records LAMMPS (a C++ code calling MPI from its
// shared library) and holds the archive to its logs.
func TestLAMMPSRoundTrip(t *testing.T) {
	lmp := mpitest.NeedTool(t, "lmp", "lammps")
	lib := mpitest.LoggerLib(t)
	bin := mpitest.CPathBin(t)
	mpitest.NeedTool(t, "otf2-print", "otf2-tools")
	input := filepath.Join(mpitest.RepoRoot(t), "logger", "e2e", "testdata", "in.lj")
	work := t.TempDir()
	logs := filepath.Join(work, "logs")
	mpitest.Run(t, 2, lib, logs, work, lmp, "-in", input, "-log", "none", "-echo", "none")
	if _, err := os.Stat(filepath.Join(logs, "rank-000001.cplog")); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, bin, logs, filepath.Join(work, "otf2"))
}
