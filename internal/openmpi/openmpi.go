// Package openmpi names Open MPI's tools for the programs that run them
// outside tests (the benchmarks): Debian installs Open MPI and MPICH side
// by side, and its alternatives may point the plain names (mpicc,
// mpirun) at either.
package openmpi

import "os/exec"

// Tool returns Open MPI's name for tool ("mpirun" → "mpirun.openmpi")
// where Debian installed it so, else tool itself.
func Tool(tool string) string {
	if p, err := exec.LookPath(tool + ".openmpi"); err == nil {
		return p
	}
	return tool
}
