package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cpath/cpath/trace"
)

// CallPaths is what call paths cost a C++ program built without frame
// pointers (-only callpaths): progs/cxxsolver.cpp, -O2
// -fomit-frame-pointer, whose MPI goes through a layer of templates, one
// MPI_Allreduce every few µs, run with the logger at CPATH_CALLDEPTH 0
// and CallDepth, interleaved. Its target: the run with call paths within
// 5 % of the run without.
type CallPaths struct {
	Program   string    `json:"program"`
	Ranks     int       `json:"ranks"`
	Steps     int64     `json:"steps"` // MPI_Allreduce calls of each rank in the timed loop
	CallDepth int       `json:"call_depth"`
	Without   []float64 `json:"seconds_without"` // the timed loop's wall time, each run, CPATH_CALLDEPTH=0
	With      []float64 `json:"seconds_with"`    // the same with CPATH_CALLDEPTH=CallDepth
	Ratio     float64   `json:"ratio"`           // median with / median without
	AddedNs   float64   `json:"added_ns_per_call"`
	// Frames is the largest number of frames a path of rank 0's last
	// log with call paths holds, Paths its distinct paths: the walk went
	// through the frames the program kept no frame pointers for.
	Frames int `json:"frames"`
	Paths  int `json:"paths"`
}

const callPathsDepth, callPathsSteps, callPathsLimit = 4, 200000, 1.05

func benchCallPaths(c *config, rep *Report) error {
	exe := filepath.Join(c.tmp, "cxxsolver")
	args := []string{"-O2", "-fomit-frame-pointer", "-o", exe, filepath.Join(c.progs, "cxxsolver.cpp")}
	if out, err := exec.Command(c.mpi.cxx(), args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s cxxsolver.cpp: %v\n%s", c.mpi.cxx(), err, out)
	}
	steps := int64(callPathsSteps)
	if c.quick {
		steps /= 4
	}
	cp := &CallPaths{Program: "cxxsolver.cpp -O2 -fomit-frame-pointer", Ranks: 2, Steps: steps, CallDepth: callPathsDepth}
	for r := 0; r < c.microReps; r++ {
		for j := 0; j < 2; j++ {
			with := (j+r)%2 == 1 // rotate the order
			depth := 0
			if with {
				depth = callPathsDepth
			}
			s, err := c.callPathsRun(exe, cp, depth)
			if err != nil {
				return err
			}
			if with {
				cp.With = append(cp.With, s)
			} else {
				cp.Without = append(cp.Without, s)
			}
		}
		fmt.Fprintf(os.Stderr, "loggerbench: call paths: repetition %d of %d done\n", r+1, c.microReps)
	}
	w, wo := median(cp.With), median(cp.Without)
	cp.Ratio = w / wo
	cp.AddedNs = (w - wo) / float64(steps) * 1e9
	rep.CallPaths = cp
	return nil
}

// callPathsRun runs cxxsolver once with the logger at CPATH_CALLDEPTH
// depth and returns its timed loop's seconds; with call paths, it notes
// the paths of rank 0's log in cp.
func (c *config) callPathsRun(exe string, cp *CallPaths, depth int) (float64, error) {
	runSeq++
	logDir := filepath.Join(c.tmp, fmt.Sprintf("callpath-logs-%03d", runSeq))
	defer os.RemoveAll(logDir)
	a := c.mpi.jobArgs(cp.Ranks, true, false)
	a = append(a, c.mpirunArgs...)
	a = append(a, c.preload(c.lib)...)
	a = append(a, c.mpi.env("CPATH_DIR="+logDir)...)
	a = append(a, c.mpi.env("CPATH_CALLDEPTH="+strconv.Itoa(depth))...)
	a = append(a, exe, strconv.FormatInt(cp.Steps, 10))
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	cmd, out, errb := c.command(ctx, a)
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("mpirun %s: %v\n%s%s", strings.Join(a, " "), err, lastLines(out.String(), 5), lastLines(errb.String(), 10))
	}
	var secs float64
	found := false
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "cxxsolver" {
			var err error
			if secs, err = strconv.ParseFloat(f[1], 64); err == nil {
				found = true
			}
		}
	}
	if !found {
		return 0, fmt.Errorf("mpirun %s: no result line in\n%s", strings.Join(a, " "), out.String())
	}
	if depth > 0 {
		name := filepath.Join(logDir, "rank-000000.cplog")
		f, err := os.Open(name)
		if err != nil {
			return 0, err
		}
		l, err := trace.Read(f, name)
		f.Close()
		if err != nil {
			return 0, err
		}
		cp.Paths, cp.Frames = len(l.Paths)-1, 0
		for _, p := range l.Paths {
			cp.Frames = max(cp.Frames, len(p))
		}
	}
	return secs, nil
}

func printCallPaths(w io.Writer, cp *CallPaths) {
	fmt.Fprintf(w, "Call paths: %s, %d ranks, %d MPI_Allreduce calls a rank (median of %d interleaved repetitions)\n",
		cp.Program, cp.Ranks, cp.Steps, len(cp.With))
	fmt.Fprintf(w, "  CPATH_CALLDEPTH=0  %.3f s\n  CPATH_CALLDEPTH=%d  %.3f s  ×%.3f, %+.1f ns per call; rank 0's paths: %d, up to %d frames\n\n",
		median(cp.Without), cp.CallDepth, median(cp.With), cp.Ratio, cp.AddedNs, cp.Paths, cp.Frames)
}
