package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestLibMPI(t *testing.T) {
	for _, tc := range []struct {
		lib  string
		want *mpiImpl
	}{
		{"libmpi.so.40", openMPI},
		{"/lib/x86_64-linux-gnu/libmpi.so.40", openMPI},
		{"libmpi_mpifh.so.40", openMPI},
		{"libmpich.so.12", mpich},
		{"libmpichfort.so.12", mpich},
		{"libmpi.so.12", mpich}, // MPICH's ABI where it is not renamed
		{"libmpi.so.12.1.8", mpich},
		{"libc.so.6", nil},
		{"libmpix.so", nil},
	} {
		if got := libMPI(tc.lib); got != tc.want {
			t.Errorf("libMPI(%q) = %v, want %v", tc.lib, got, tc.want)
		}
	}
}

func TestMpirunArgsMPICH(t *testing.T) {
	t.Setenv("LD_PRELOAD", "")
	o := recordOpts{mpiArgs: []string{"-np", "4"}, prog: []string{"./app", "x"}}
	got := mpirunArgs(o, mpich, "/l/libcpathlog-mpich.so", "/d", true)
	want := []string{"-genv", "LD_PRELOAD", "/l/libcpathlog-mpich.so", "-genv", "CPATH_DIR", "/d", "-np", "4", "./app", "x"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
}

// TestLauncherMPI: an mpirun is known by the name it resolves to, else by
// what its --version prints.
func TestLauncherMPI(t *testing.T) {
	dir := t.TempDir()
	script := func(name, version string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho '"+version+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hydra := script("mpiexec.hydra", "")
	for _, tc := range []struct {
		path string
		want *mpiImpl
	}{
		{script("mpirun.openmpi", ""), openMPI},
		{script("mpirun.mpich", ""), mpich},
		{link("mpirun", hydra), mpich},
		{script("mpiexec", "mpiexec (OpenRTE) 4.1.4"), openMPI},
		{script("launch", "HYDRA build details:"), mpich},
		{script("other", "something else"), nil},
	} {
		if got := launcherMPI(tc.path); got != tc.want {
			t.Errorf("launcherMPI(%s) = %v, want %v", filepath.Base(tc.path), got, tc.want)
		}
	}
}
