package main

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cpath/cpath/trace"
)

// TestGeneratedUpToDate fails when mpi.sigs or trace's op table changed
// without `go generate ./logger` being run and its output committed.
func TestGeneratedUpToDate(t *testing.T) {
	files, err := generate("mpi.sigs")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("logger/%s is stale: run go generate ./logger", name)
		}
	}
}

// TestEverySpecCallWrapped checks the table against SPEC §2's list.
func TestEverySpecCallWrapped(t *testing.T) {
	fns, err := parse("mpi.sigs")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{"MPI_Init": true, "MPI_Init_thread": true, "MPI_Finalize": true, "MPI_Abort": true, "MPI_Pcontrol": true} // lifecycle.c
	for _, f := range fns {
		have[f.name] = true
	}
	spec := `Send Ssend Bsend Rsend Recv Sendrecv Sendrecv_replace Isend Issend Ibsend Irsend Irecv
		Send_init Ssend_init Recv_init Start Startall Request_free Wait Waitall Waitany Waitsome Test Testall
		Testany Testsome Probe Barrier Bcast Reduce Allreduce Gather Gatherv Scatter Scatterv Allgather
		Allgatherv Alltoall Alltoallv Alltoallw Reduce_scatter Reduce_scatter_block Scan Exscan Ibarrier Ibcast
		Ireduce Iallreduce Igather Igatherv Iscatter Iscatterv Iallgather Iallgatherv Ialltoall Ialltoallv
		Ialltoallw Ireduce_scatter Ireduce_scatter_block Iscan Iexscan Comm_dup Comm_idup Comm_split
		Comm_split_type Comm_create Comm_create_group Cart_create Cart_sub Graph_create Dist_graph_create
		Dist_graph_create_adjacent Intercomm_create Intercomm_merge Comm_free Psend_init Precv_init Pready
		Pready_range Pready_list Parrived Init Init_thread Finalize Abort Pcontrol`
	for _, n := range strings.Fields(spec) {
		if !have["MPI_"+n] {
			t.Errorf("MPI_%s is in SPEC §2 but not wrapped", n)
		}
	}
}

// TestEveryOpWrapped checks the other direction: every operation of
// trace's table is an MPI call the logger wraps (mpi.sigs, or lifecycle.c
// for the five it writes by hand), so an op cannot be added to the format
// without its wrappers.
func TestEveryOpWrapped(t *testing.T) {
	fns, err := parse("mpi.sigs")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{"MPI_Init": true, "MPI_Init_thread": true, "MPI_Finalize": true, "MPI_Abort": true, "MPI_Pcontrol": true}
	for _, f := range fns {
		if have[f.name] {
			t.Errorf("%s is listed twice", f.name)
		}
		have[f.name] = true
	}
	for o := trace.Op(1); o < trace.NumOps; o++ {
		if !o.IsSub() && !have[o.String()] {
			t.Errorf("%v (op %d) is in trace's table but not wrapped", o, o)
		}
	}
}

// TestF08Names checks the mpi_f08 symbols the wrappers define and call
// against the installed MPIs' Fortran libraries (skipped where one is not
// installed): a wrapper whose entry the MPI does not have would never run,
// and one whose profiling entry is missing would fail every call.
func TestF08Names(t *testing.T) {
	fns, err := parse("mpi.sigs")
	if err != nil {
		t.Fatal(err)
	}
	for _, lib := range []struct {
		name, glob string
		mpich      bool
		version    int // MPI_VERSION: calls of later versions are not wrapped
	}{
		{"Open MPI", "/usr/lib/*/libmpi_usempif08.so.*", false, 3},
		{"MPICH", "/usr/lib/*/libmpichfort.so.*", true, 4},
	} {
		t.Run(lib.name, func(t *testing.T) {
			paths, _ := filepath.Glob(lib.glob)
			if len(paths) == 0 {
				t.Skipf("no %s (%s)", lib.glob, lib.name)
			}
			f, err := elf.Open(paths[0])
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			syms, err := f.DynamicSymbols()
			if err != nil {
				t.Fatal(err)
			}
			defined := map[string]bool{}
			for _, s := range syms {
				if s.Section != elf.SHN_UNDEF {
					defined[s.Name] = true
				}
			}
			for _, fn := range fns {
				if v := fn.opts["since"]; v != "" && v > strconv.Itoa(lib.version) {
					continue
				}
				entry, pm := f08Names(fn, lib.mpich)
				for _, s := range []string{entry, pm} {
					if !defined[s] {
						t.Errorf("%s: %s has no %s", fn.name, filepath.Base(paths[0]), s)
					}
				}
			}
			for _, s := range []string{"init", "init_thread", "finalize", "abort", "pcontrol"} { // f08.c
				pm := "pmpi_" + s + "_f08_"
				if lib.mpich {
					pm = "pmpir_" + s + "_f08_"
				}
				if !defined["mpi_"+s+"_f08_"] || !defined[pm] {
					t.Errorf("%s has no mpi_%s_f08_ or %s", filepath.Base(paths[0]), s, pm)
				}
			}
		})
	}
}

// TestUnwrappedCounted: every call of unwrapped.sigs gets a counting
// wrapper (C, and Fortran but for the large-count forms) unless mpi.sigs
// wraps it, and none of it is a call the logger records.
func TestUnwrappedCounted(t *testing.T) {
	fns, err := parseSigs("unwrapped.sigs")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fns {
		if _, ok := trace.OpByName(f.name); ok {
			t.Errorf("%s is recorded (trace.Op) and counted", f.name)
		}
	}
	src := func(wrapped ...string) string {
		var ws []fn
		for _, n := range wrapped {
			ws = append(ws, fn{name: n})
		}
		b, err := genUnwrapped("unwrapped.sigs", ws)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	all := src()
	for i, f := range fns {
		if !strings.Contains(all, "int "+f.name+"(") {
			t.Errorf("%s has no C wrapper", f.name)
		}
		fortran := strings.Contains(all, "void "+strings.ToLower(f.name)+"_(")
		if large := strings.HasSuffix(f.name, "_c"); fortran == large {
			t.Errorf("%s: Fortran wrapper %v", f.name, fortran)
		}
		if i == 0 && !strings.Contains(all, "cp_uw_count(0, ") {
			t.Errorf("%s does not count into slot 0", f.name)
		}
	}
	if s := src(fns[0].name); strings.Contains(s, "int "+fns[0].name+"(") || !strings.Contains(s, "int "+fns[1].name+"(") {
		t.Errorf("a call mpi.sigs wraps (%s) is still counted, or the others are not", fns[0].name)
	}
}
