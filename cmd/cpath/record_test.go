package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cpath/cpath/trace"
)

func TestParseRecordArgs(t *testing.T) {
	tests := []struct {
		args []string
		want recordOpts
		err  string
	}{
		{
			args: []string{"-np", "4", "--oversubscribe", "--", "./app", "-o", "x"},
			want: recordOpts{dir: "cpath-logs", mpiArgs: []string{"-np", "4", "--oversubscribe"}, prog: []string{"./app", "-o", "x"}},
		},
		{
			args: []string{"-o", "logs", "--force", "-np", "2", "--", "./app"},
			want: recordOpts{dir: "logs", force: true, mpiArgs: []string{"-np", "2"}, prog: []string{"./app"}},
		},
		{
			args: []string{"--output=a b", "--mpirun", "/opt/ompi/bin/mpirun", "--output-filename", "out", "--", "lmp", "-in", "in.lj"},
			want: recordOpts{dir: "a b", mpirun: "/opt/ompi/bin/mpirun", mpiArgs: []string{"--output-filename", "out"}, prog: []string{"lmp", "-in", "in.lj"}},
		},
		{
			args: []string{"-o=d", "--mpirun=mpiexec", "--", "./app"},
			want: recordOpts{dir: "d", mpirun: "mpiexec", prog: []string{"./app"}},
		},
		{args: []string{"--help"}, want: recordOpts{dir: "cpath-logs", help: true}},
		{args: []string{"-np", "4", "-h", "--", "x"}, want: recordOpts{dir: "cpath-logs", mpiArgs: []string{"-np", "4"}, help: true}},
		{args: []string{"-np", "4", "./app"}, err: `record: no "--" before the program; usage: cpath record [-o LOGDIR] [--force] [mpirun options] -- PROGRAM [ARGS...]`},
		{args: nil, err: `record: no "--" before the program`},
		{args: []string{"-np", "4", "--"}, err: `record: no program after "--"`},
		{args: []string{"-o", "--", "./app"}, err: "record: -o needs a value"},
		{args: []string{"-o"}, err: "record: -o needs a value"},
		{args: []string{"--mpirun"}, err: "record: --mpirun needs a value"},
		{args: []string{"-o=", "--", "x"}, err: "record: empty LOGDIR"},
	}
	for _, tc := range tests {
		got, err := parseRecordArgs(tc.args)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", tc.args, got, tc.want)
		}
	}
}

func TestMpirunArgs(t *testing.T) {
	t.Setenv("LD_PRELOAD", "")
	o := recordOpts{mpiArgs: []string{"-np", "4"}, prog: []string{"./app", "x"}}
	got := mpirunArgs(o, openMPI, "/l/libcpathlog.so", "/d", true)
	want := []string{"--allow-run-as-root", "-x", "LD_PRELOAD=/l/libcpathlog.so", "-x", "CPATH_DIR=/d", "-np", "4", "./app", "x"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("as root:\n got %q\nwant %q", got, want)
	}
	if got := mpirunArgs(o, openMPI, "/l/libcpathlog.so", "/d", false); got[0] != "-x" {
		t.Errorf("not root: %q", got)
	}
	o.mpiArgs = []string{"-allow-run-as-root", "-np", "2"}
	if got := mpirunArgs(o, openMPI, "/l/libcpathlog.so", "/d", true); strings.Count(strings.Join(got, " "), "allow-run-as-root") != 1 {
		t.Errorf("--allow-run-as-root twice: %q", got)
	}
	t.Setenv("LD_PRELOAD", "/other.so")
	if got := mpirunArgs(o, openMPI, "/l/libcpathlog.so", "/d", false); got[1] != "LD_PRELOAD=/l/libcpathlog.so:/other.so" {
		t.Errorf("existing LD_PRELOAD: %q", got)
	}
}

// fakeMpirun writes a script that stands in for mpirun: it records its
// arguments in $dir/args, writes one log file into the CPATH_DIR it was
// given, and exits with status $FAKE_STATUS.
func fakeMpirun(t *testing.T) (script, argsFile string) {
	dir := t.TempDir()
	script = filepath.Join(dir, "mpirun")
	argsFile = filepath.Join(dir, "args")
	body := `#!/bin/sh
printf '%s\n' "$@" > ` + argsFile + `
while [ $# -gt 0 ]; do
	case "$1" in
	CPATH_DIR=*) echo fake > "${1#CPATH_DIR=}/rank-000000.cplog" ;;
	esac
	shift
done
echo "program output"
exit ${FAKE_STATUS:-0}
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, argsFile
}

func fakeLogger(t *testing.T) string {
	lib := filepath.Join(t.TempDir(), "libcpathlog.so")
	if err := os.WriteFile(lib, []byte("not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CPATH_LOGGER", lib)
	return lib
}

func TestRecord(t *testing.T) {
	lib := fakeLogger(t)
	mpirun, argsFile := fakeMpirun(t)
	logdir := filepath.Join(t.TempDir(), "new", "logs")

	code, out, errs := runCLI(t, "record", "-o", logdir, "--mpirun", mpirun, "-np", "4", "--", "./app", "arg")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if out != "program output\n" {
		t.Errorf("stdout %q", out)
	}
	if !strings.Contains(errs, "cpath: 1 log(s) in "+logdir+" (see: cpath info "+logdir+")") {
		t.Errorf("stderr %q", errs)
	}
	b, _ := os.ReadFile(argsFile)
	args := strings.Fields(string(b))
	want := []string{"-x", "LD_PRELOAD=" + lib, "-x", "CPATH_DIR=" + logdir, "-np", "4", "./app", "arg"}
	if os.Geteuid() == 0 {
		want = append([]string{"--allow-run-as-root"}, want...)
	}
	if os.Getenv("LD_PRELOAD") == "" && !reflect.DeepEqual(args, want) {
		t.Errorf("mpirun args\n got %q\nwant %q", args, want)
	}

	// The directory now holds a log: refused without --force.
	code, out, errs = runCLI(t, "record", "-o", logdir, "--mpirun", mpirun, "--", "./app")
	if code != 1 || out != "" || !strings.HasPrefix(errs, "cpath: record: "+logdir+" already holds 1 log(s) (rank-000000.cplog…) of an earlier run; use --force") ||
		strings.Count(errs, "\n") != 1 {
		t.Errorf("second run without --force: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	// With --force the old logs go; the program's exit status comes through.
	old := filepath.Join(logdir, "rank-000001.cplog")
	os.WriteFile(old, []byte("old"), 0o644)
	t.Setenv("FAKE_STATUS", "3")
	code, _, errs = runCLI(t, "record", "--force", "-o", logdir, "--mpirun", mpirun, "--", "./app")
	if code != 3 {
		t.Errorf("exit %d, want the program's 3; stderr %q", code, errs)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("--force left %s", old)
	}
	if !strings.Contains(errs, "cpath: ./app exited with status 3; 1 log(s) in "+logdir) {
		t.Errorf("stderr %q", errs)
	}
}

func TestRecordErrors(t *testing.T) {
	fakeLogger(t)
	mpirun, _ := fakeMpirun(t)
	file := filepath.Join(t.TempDir(), "afile")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"-o", file, "--mpirun", mpirun, "--", "./app"}, "cpath: record: " + file + " exists and is not a directory\n"},
		{[]string{"--mpirun", "/nonexistent/mpirun", "--", "./app"}, "cpath: record: /nonexistent/mpirun not found: install MPI (make deps) or fix --mpirun\n"},
		{[]string{"./app"}, `cpath: record: no "--" before the program; usage: cpath record [-o LOGDIR] [--force] [mpirun options] -- PROGRAM [ARGS...]` + "\n"},
	} {
		code, out, errs := runCLI(t, append([]string{"record"}, tc.args...)...)
		if code != 1 || out != "" || errs != tc.err {
			t.Errorf("%q: exit %d, stdout %q, stderr %q, want %q", tc.args, code, out, errs, tc.err)
		}
	}
	t.Setenv("CPATH_LOGGER", "/nonexistent/libcpathlog.so")
	code, _, errs := runCLI(t, "record", "--mpirun", mpirun, "--", "./app")
	if code != 1 || errs != "cpath: record: CPATH_LOGGER=/nonexistent/libcpathlog.so: no such file\n" {
		t.Errorf("missing logger: exit %d, stderr %q", code, errs)
	}
}

func TestRecordHelp(t *testing.T) {
	code, out, _ := runCLI(t, "record", "--help")
	if code != 0 || !strings.Contains(out, "--allow-run-as-root") || !strings.Contains(out, "--force") {
		t.Errorf("record --help: exit %d:\n%s", code, out)
	}
}

func TestLoggerPath(t *testing.T) {
	lib := fakeLogger(t)
	code, out, errs := runCLI(t, "logger-path")
	if code != 0 || out != lib+"\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	t.Setenv("CPATH_LOGGER", "")
	code, out, errs = runCLI(t, "logger-path")
	if code != 1 || out != "" || !strings.HasPrefix(errs, "cpath: libcpathlog.so not found (tried ") || strings.Count(errs, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, "cpath ") || !strings.Contains(out, fmt.Sprintf("log format version %d\n", trace.Version)) {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
