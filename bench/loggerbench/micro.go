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
)

// The micro section: the logger issue's per-call targets, each measured
// side by side (base, the logger and, with -ref-lib, a reference logger) in
// one interleaved run: every repetition runs every side once, in an order
// that rotates from one repetition to the next.
//
//	self-1     one rank sends 8 bytes to itself and receives them, 2M calls
//	self-2     the same on 2 ranks at once (both cores busy)
//	selfpost-1 one rank receives from itself with the receive posted first
//	           (MPI_Irecv, MPI_Send, MPI_Wait): the self case under MPICH,
//	           whose blocking MPI_Send to the rank itself waits for the
//	           receive (so self-1 and the cases made of it cannot run there)
//	latency    osu_latency style 8-byte ping-pong between 2 ranks
//	allreduce  8-byte MPI_Allreduce on 2 ranks
//	threads-1  MPI_THREAD_MULTIPLE, 1 thread of self send/recv
//	threads-4  MPI_THREAD_MULTIPLE, 4 threads of self send/recv on 1 rank
//	nulltest-1, nulltest-4  the same with MPI_Test(MPI_REQUEST_NULL) calls,
//	           which share no lock in Open MPI: the logger's own scaling
//	init-2     MPI_Init itself on 2 ranks, once: the logger's start-up
//	           (its "ns per call" is the call's whole time)
//	self-1-fp  self-1 built with frame pointers (-fno-omit-frame-pointer)
//	self-1-fp-depth4  the same with CPATH_CALLDEPTH=4 on the logger sides:
//	           the cost of call paths is its added cost minus self-1-fp's
//
// Figures are the mean ns per call over the whole timed loop (flushes and
// any other periodic cost included), as rank 0 measures it.

// MicroCase is one micro-benchmark.
type MicroCase struct {
	Name  string `json:"name"`
	Ranks int    `json:"ranks"`
	Calls int64  `json:"calls"`
	// NsPerCall[side][rep]; sides are base, the logger, then the reference.
	NsPerCall [][]float64 `json:"ns_per_call"`
	// CPUNsPerCall is the process's CPU time per call (all threads, kernel
	// included): on a machine shared with other jobs it leaves out the time
	// a rank waited for a core, which wall time does not.
	CPUNsPerCall [][]float64 `json:"cpu_ns_per_call"`
	AddedCPUNs   []float64   `json:"added_cpu_ns"`
	BaseCPUNs    float64     `json:"base_cpu_ns"`
	VmHWMKiB     [][]int64   `json:"vmhwm_kib"` // rank 0
	// AddedNs is the median over repetitions of (side − base), per side
	// (index 0 is 0).
	AddedNs []float64 `json:"added_ns"`
	BaseNs  float64   `json:"base_ns"` // median
	// The spread of AddedCPUNs, per side as it (index 0 is 0): a sign-test
	// confidence interval of the median (AddedCPULevel its level), and the
	// best run's CPU time less the best base run's, which a machine shared
	// with other jobs disturbs least (they only ever add time).
	AddedCPULo    []float64 `json:"added_cpu_ns_ci_lo,omitempty"`
	AddedCPUHi    []float64 `json:"added_cpu_ns_ci_hi,omitempty"`
	AddedCPULevel float64   `json:"added_cpu_ns_ci_level,omitempty"`
	BestAddedCPU  []float64 `json:"best_added_cpu_ns,omitempty"`
}

// Micro is the micro section's result.
type Micro struct {
	Sides    []string    `json:"sides"`
	Reps     int         `json:"reps"`
	Cases    []MicroCase `json:"cases"`
	HaloDisk []Disk      `json:"halo_example_disk,omitempty"` // per logger side (not the reference)
	// ThreadRatio is added(threads-4) / added(threads-1) per side, in CPU
	// time: the per-call cost of the logger with 4 threads over its cost
	// with one. NullTestRatio is the same of nulltest-4 and nulltest-1,
	// whose MPI calls share nothing in Open MPI.
	ThreadRatio   []float64 `json:"thread_ratio"`
	NullTestRatio []float64 `json:"nulltest_ratio,omitempty"`
	// DepthNs and DepthCPUNs are what CPATH_CALLDEPTH=4 adds per call, per
	// side: added(self-1-fp-depth4) − added(self-1-fp), wall and CPU; the
	// Null ones the same of nulltest-1-fp(-depth4), whose MPI call costs
	// 5 ns: far less noise.
	DepthNs        []float64 `json:"calldepth4_ns,omitempty"`
	DepthCPUNs     []float64 `json:"calldepth4_cpu_ns,omitempty"`
	NullDepthNs    []float64 `json:"nulltest_calldepth4_ns,omitempty"`
	NullDepthCPUNs []float64 `json:"nulltest_calldepth4_cpu_ns,omitempty"`
}

type microSpec struct {
	name  string
	ranks int
	args  []string
	fp    bool     // the build with frame pointers
	env   []string // for the logger sides only
	// sendFirst: a blocking MPI_Send to the rank itself before its
	// receive, which MPICH (ch4:ucx) holds until the receive is posted.
	sendFirst bool
}

var microSpecs = []microSpec{
	{name: "self-1", ranks: 1, args: []string{"self", "2000000"}, sendFirst: true},
	{name: "self-2", ranks: 2, args: []string{"self", "2000000"}, sendFirst: true},
	{name: "selfpost-1", ranks: 1, args: []string{"selfpost", "3000000"}},
	{name: "latency", ranks: 2, args: []string{"latency", "400000"}},
	{name: "allreduce", ranks: 2, args: []string{"allreduce", "400000"}},
	{name: "threads-1", ranks: 1, args: []string{"threads", "400000", "1"}, sendFirst: true},
	{name: "threads-4", ranks: 1, args: []string{"threads", "400000", "4"}, sendFirst: true},
	{name: "nulltest-1", ranks: 1, args: []string{"nulltest", "2000000", "1"}},
	{name: "nulltest-4", ranks: 1, args: []string{"nulltest", "2000000", "4"}},
	{name: "init-2", ranks: 2, args: []string{"init", "1"}},
	{name: "self-1-fp", ranks: 1, args: []string{"self", "2000000"}, fp: true, sendFirst: true},
	{name: "self-1-fp-depth4", ranks: 1, args: []string{"self", "2000000"}, fp: true, env: []string{"CPATH_CALLDEPTH=4"}, sendFirst: true},
	{name: "nulltest-1-fp", ranks: 1, args: []string{"nulltest", "2000000", "1"}, fp: true},
	{name: "nulltest-1-fp-depth4", ranks: 1, args: []string{"nulltest", "2000000", "1"}, fp: true, env: []string{"CPATH_CALLDEPTH=4"}},
}

// selectedMicro returns the cases -micro-cases names (all without it)
// that c's MPI can run, and says which it left out.
func (c *config) selectedMicro() ([]microSpec, []string, error) {
	specs := microSpecs
	if c.microCases != "" {
		specs = nil
		for _, n := range strings.Split(c.microCases, ",") {
			found := false
			for _, sp := range microSpecs {
				if sp.name == strings.TrimSpace(n) {
					specs = append(specs, sp)
					found = true
				}
			}
			if !found {
				return nil, nil, fmt.Errorf("-micro-cases: no case %q", n)
			}
		}
	}
	var out []microSpec
	var left []string
	for _, sp := range specs {
		if sp.sendFirst && c.mpi.hydra {
			left = append(left, fmt.Sprintf("micro %s left out under %s: its blocking MPI_Send to the rank itself waits for the receive there (selfpost-1 measures the same calls with the receive posted first)", sp.name, c.mpi.Name))
			continue
		}
		out = append(out, sp)
	}
	return out, left, nil
}

// microRun runs micro (sp's build) once and returns rank 0's wall and CPU
// ns per call and VmHWM.
func (c *config) microRun(lib string, sp *microSpec) (float64, float64, int64, error) {
	np, args := sp.ranks, sp.args
	runSeq++
	logDir := filepath.Join(c.tmp, fmt.Sprintf("micro-logs-%03d", runSeq))
	defer os.RemoveAll(logDir)
	// The threads need both cores.
	a := c.mpi.jobArgs(np, true, args[0] == "threads" || args[0] == "nulltest")
	a = append(a, c.mpirunArgs...)
	if lib != "" {
		a = append(a, c.preload(lib)...)
		a = append(a, c.mpi.env("CPATH_DIR="+logDir)...)
		for _, e := range sp.env {
			a = append(a, c.mpi.env(e)...)
		}
	}
	exe := "micro"
	if sp.fp {
		exe = "micro-fp"
	}
	a = append(a, filepath.Join(c.tmp, exe))
	a = append(a, args...)
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	cmd, out, errb := c.command(ctx, a)
	if err := cmd.Run(); err != nil {
		return 0, 0, 0, fmt.Errorf("mpirun %s: %v\n%s%s", strings.Join(a, " "), err, lastLines(out.String(), 5), lastLines(errb.String(), 10))
	}
	for _, l := range strings.Split(out.String(), "\n") {
		f := strings.Fields(l)
		if len(f) == 6 && f[0] == "micro" {
			ns, err1 := strconv.ParseFloat(f[2], 64)
			kb, err2 := strconv.ParseInt(f[4], 10, 64)
			cpu, err3 := strconv.ParseFloat(f[5], 64)
			if err1 == nil && err2 == nil && err3 == nil {
				return ns, cpu, kb, nil
			}
		}
	}
	return 0, 0, 0, fmt.Errorf("mpirun %s: no result line in\n%s", strings.Join(a, " "), out.String())
}

func benchMicro(c *config, rep *Report) error {
	specs, left, err := c.selectedMicro()
	if err != nil {
		return err
	}
	rep.Warnings = append(rep.Warnings, left...)
	for _, b := range []struct {
		exe   string
		flags []string
	}{{"micro", nil}, {"micro-fp", []string{"-fno-omit-frame-pointer"}}} {
		args := append([]string{"-O2"}, b.flags...)
		args = append(args, "-o", filepath.Join(c.tmp, b.exe), filepath.Join(c.progs, "micro.c"), "-lpthread")
		if out, err := exec.Command(c.mpi.cc(), args...).CombinedOutput(); err != nil {
			return fmt.Errorf("mpicc micro.c: %v\n%s", err, out)
		}
	}
	sides := []string{""}
	names := []string{"base"}
	if !c.noLogger {
		sides = append(sides, c.lib)
		names = append(names, "logger")
	} else {
		sides = append(sides, "")
		names = append(names, "base-again")
	}
	switch c.refLib {
	case "":
	case "standin":
		// progs/standin.c: 36 ns of each thread's own time per send and
		// receive, nothing shared.
		lib := filepath.Join(c.tmp, "libstandin.so")
		args := []string{"-O2", "-shared", "-fPIC", "-o", lib, filepath.Join(c.progs, "standin.c")}
		if out, err := exec.Command(c.mpi.cc(), args...).CombinedOutput(); err != nil {
			return fmt.Errorf("mpicc standin.c: %v\n%s", err, out)
		}
		sides = append(sides, lib)
		names = append(names, "stand-in")
	default:
		if abs, err := filepath.Abs(c.refLib); err == nil {
			c.refLib = abs
		}
		sides = append(sides, c.refLib)
		names = append(names, "reference")
	}
	m := &Micro{Sides: names, Reps: c.microReps}
	for _, sp := range specs {
		calls, _ := strconv.ParseInt(sp.args[1], 10, 64)
		mc := MicroCase{Name: sp.name, Ranks: sp.ranks, Calls: calls,
			NsPerCall: make([][]float64, len(sides)), VmHWMKiB: make([][]int64, len(sides)), AddedNs: make([]float64, len(sides)),
			CPUNsPerCall: make([][]float64, len(sides)), AddedCPUNs: make([]float64, len(sides))}
		m.Cases = append(m.Cases, mc)
	}
	for rep := 0; rep < c.microReps; rep++ {
		for k := range specs {
			sp := &specs[k]
			mc := &m.Cases[k]
			for j := range sides {
				s := (j + rep + k) % len(sides) // rotate the order
				ns, cpu, kb, err := c.microRun(sides[s], sp)
				if err != nil {
					return err
				}
				mc.NsPerCall[s] = append(mc.NsPerCall[s], ns)
				mc.CPUNsPerCall[s] = append(mc.CPUNsPerCall[s], cpu)
				mc.VmHWMKiB[s] = append(mc.VmHWMKiB[s], kb)
			}
		}
		fmt.Fprintf(os.Stderr, "loggerbench: micro: repetition %d of %d done\n", rep+1, c.microReps)
	}
	for k := range m.Cases {
		mc := &m.Cases[k]
		mc.BaseNs = median(mc.NsPerCall[0])
		mc.BaseCPUNs = median(mc.CPUNsPerCall[0])
		for s := 1; s < len(sides); s++ {
			var d, dc []float64
			for i := range mc.NsPerCall[s] {
				d = append(d, mc.NsPerCall[s][i]-mc.NsPerCall[0][i])
				dc = append(dc, mc.CPUNsPerCall[s][i]-mc.CPUNsPerCall[0][i])
			}
			mc.AddedNs[s] = median(d)
			mc.AddedCPUNs[s] = median(dc)
			if mc.AddedCPULo == nil {
				mc.AddedCPULo, mc.AddedCPUHi, mc.BestAddedCPU = make([]float64, len(sides)), make([]float64, len(sides)), make([]float64, len(sides))
			}
			mc.AddedCPULo[s], mc.AddedCPUHi[s], mc.AddedCPULevel = medianCI(dc, 0.9)
			mc.BestAddedCPU[s] = minf(mc.CPUNsPerCall[s]) - minf(mc.CPUNsPerCall[0])
		}
	}
	m.ThreadRatio = make([]float64, len(sides))
	m.NullTestRatio = make([]float64, len(sides))
	var t1, t4, n1, n4, fp, fp4, nfp, nfp4 *MicroCase
	for k := range m.Cases {
		switch m.Cases[k].Name {
		case "threads-1":
			t1 = &m.Cases[k]
		case "threads-4":
			t4 = &m.Cases[k]
		case "nulltest-1":
			n1 = &m.Cases[k]
		case "nulltest-4":
			n4 = &m.Cases[k]
		case "self-1-fp":
			fp = &m.Cases[k]
		case "self-1-fp-depth4":
			fp4 = &m.Cases[k]
		case "nulltest-1-fp":
			nfp = &m.Cases[k]
		case "nulltest-1-fp-depth4":
			nfp4 = &m.Cases[k]
		}
	}
	for s := 1; s < len(sides); s++ {
		if t1 != nil && t4 != nil && t1.AddedCPUNs[s] > 1 { // a side that adds nothing has no ratio
			m.ThreadRatio[s] = t4.AddedCPUNs[s] / t1.AddedCPUNs[s]
		}
		if n1 != nil && n4 != nil && n1.AddedCPUNs[s] > 1 {
			m.NullTestRatio[s] = n4.AddedCPUNs[s] / n1.AddedCPUNs[s]
		}
	}
	m.DepthNs, m.DepthCPUNs = depthCost(fp, fp4, len(sides))
	m.NullDepthNs, m.NullDepthCPUNs = depthCost(nfp, nfp4, len(sides))
	// On-disk size of the bundled example, logged by this logger.
	if !c.noLogger {
		d, err := c.haloExampleDisk()
		if err != nil {
			rep.Warnings = append(rep.Warnings, "halo example: "+err.Error())
		} else {
			m.HaloDisk = append(m.HaloDisk, d)
		}
	}
	rep.Micro = m
	return nil
}

// haloExampleDisk records examples/halo (4 ranks) and measures its logs.
func (c *config) haloExampleDisk() (Disk, error) {
	root, err := repoRoot()
	if err != nil {
		return Disk{}, err
	}
	exe := filepath.Join(c.tmp, "halo-example")
	cmd := exec.Command(c.mpi.cc(), "-O2", "-g", "-o", exe, filepath.Join(root, "examples", "halo.c"), "-lm")
	if out, err := cmd.CombinedOutput(); err != nil {
		return Disk{}, fmt.Errorf("mpicc examples/halo.c: %v\n%s", err, out)
	}
	logDir := filepath.Join(c.tmp, "halo-example-logs")
	defer os.RemoveAll(logDir)
	a := append(c.mpi.jobArgs(4, true, false), c.mpi.env("LD_PRELOAD="+c.lib)...)
	a = append(append(a, c.mpi.env("CPATH_DIR="+logDir)...), exe)
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	run := exec.CommandContext(ctx, c.mpi.run(), a...)
	run.Env = cleanEnv()
	if out, err := run.CombinedOutput(); err != nil {
		return Disk{}, fmt.Errorf("mpirun %s: %v\n%s", strings.Join(a, " "), err, out)
	}
	d, err := diskUsage(logDir)
	d.Run = "examples/halo, 4 ranks"
	return d, err
}

func printMicro(w io.Writer, m *Micro) {
	fmt.Fprintf(w, "Micro-benchmarks (ns per call over the timed loop, rank 0; added = side − base, median of %d interleaved repetitions;\n", m.Reps)
	fmt.Fprintf(w, "wall = CLOCK_MONOTONIC, cpu = the process's CPU time, which leaves out waiting for a core on a shared machine)\n")
	fmt.Fprintf(w, "  %-10s %5s %8s %9s %9s", "case", "ranks", "calls", "base", "base cpu")
	for _, s := range m.Sides[1:] {
		fmt.Fprintf(w, " %12s %12s", "+"+s, "+"+s+" cpu")
	}
	fmt.Fprintf(w, " %14s\n", "VmHWM +MiB")
	for _, c := range m.Cases {
		fmt.Fprintf(w, "  %-10s %5d %8d %9.1f %9.1f", c.Name, c.Ranks, c.Calls, c.BaseNs, c.BaseCPUNs)
		for s := 1; s < len(m.Sides); s++ {
			fmt.Fprintf(w, " %12.1f %12.1f", c.AddedNs[s], c.AddedCPUNs[s])
		}
		var hw []string
		for s := 1; s < len(m.Sides); s++ {
			hw = append(hw, fmt.Sprintf("%.1f", float64(medianInt(c.VmHWMKiB[s])-medianInt(c.VmHWMKiB[0]))/1024))
		}
		fmt.Fprintf(w, " %14s\n", strings.Join(hw, "/"))
	}
	if len(m.Cases) > 0 && len(m.Cases[0].AddedCPULo) > 0 {
		fmt.Fprintf(w, "  added CPU ns per call: median [%.0f %% confidence interval of the median] · best run − best base run\n",
			100*m.Cases[0].AddedCPULevel)
		for _, c := range m.Cases {
			fmt.Fprintf(w, "  %-10s", c.Name)
			for s := 1; s < len(m.Sides) && s < len(c.AddedCPULo); s++ {
				fmt.Fprintf(w, "  %s %.1f [%.1f, %.1f] · %.1f", m.Sides[s], c.AddedCPUNs[s], c.AddedCPULo[s], c.AddedCPUHi[s],
					c.BestAddedCPU[s])
			}
			fmt.Fprintln(w)
		}
	}
	for s := 1; s < len(m.Sides); s++ {
		if m.ThreadRatio[s] != 0 {
			fmt.Fprintf(w, "  %s: 4-thread added CPU per call / 1-thread added CPU per call = %.2f\n", m.Sides[s], m.ThreadRatio[s])
		}
		if m.NullTestRatio[s] != 0 {
			fmt.Fprintf(w, "  %s: the same for MPI_Test(MPI_REQUEST_NULL) (nulltest-4 / nulltest-1) = %.2f\n", m.Sides[s], m.NullTestRatio[s])
		}
		if m.DepthNs != nil {
			fmt.Fprintf(w, "  %s: CPATH_CALLDEPTH=4 adds %.1f ns per call (%.1f ns CPU)\n", m.Sides[s], m.DepthNs[s], m.DepthCPUNs[s])
		}
		if m.NullDepthNs != nil {
			fmt.Fprintf(w, "  %s: CPATH_CALLDEPTH=4 adds %.1f ns per MPI_Test(MPI_REQUEST_NULL) (%.1f ns CPU)\n", m.Sides[s], m.NullDepthNs[s], m.NullDepthCPUNs[s])
		}
	}
	for _, d := range m.HaloDisk {
		fmt.Fprintf(w, "  on disk, %s: %d bytes, %d calls, %.2f B/call (%.2f without headers)\n", d.Run, d.Bytes, d.TimedRecords,
			d.BytesPerCall, d.RecordBytesPerCall)
	}
	fmt.Fprintln(w)
}

// depthCost is, per side, the median over repetitions of what case with
// adds over case without, both measured against the base side.
func depthCost(without, with *MicroCase, sides int) (wall, cpu []float64) {
	if without == nil || with == nil {
		return nil, nil
	}
	wall, cpu = make([]float64, sides), make([]float64, sides)
	for s := 1; s < sides; s++ {
		var d, dc []float64
		for i := range with.NsPerCall[s] {
			d = append(d, (with.NsPerCall[s][i]-with.NsPerCall[0][i])-(without.NsPerCall[s][i]-without.NsPerCall[0][i]))
			dc = append(dc, (with.CPUNsPerCall[s][i]-with.CPUNsPerCall[0][i])-(without.CPUNsPerCall[s][i]-without.CPUNsPerCall[0][i]))
		}
		wall[s], cpu[s] = median(d), median(dc)
	}
	return wall, cpu
}
