package main

import (
	"fmt"
	"os"
	"strconv"
)

// launchedAs is the number of copies of cpath the job's launcher started
// (Open MPI's mpirun, or a PMI launcher: MPICH's mpiexec, srun), 0 when
// none did.
func launchedAs() int {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"} {
		if n, err := strconv.Atoi(os.Getenv(v)); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

// checkJoined refuses to run as one of several copies that did not join
// one MPI job: each would analyse the whole run alone, and all would
// write the same files at once.
func checkJoined(w *world) error {
	n := launchedAs()
	if n <= 1 || w.size == n {
		return nil
	}
	if !builtWithMPI {
		return fmt.Errorf("started as %d processes, but this cpath was built without MPI: run it without mpirun, or rebuild it with make where Open MPI is installed", n)
	}
	return fmt.Errorf("started as %d processes, but MPI joined them as %d: run cpath with the mpirun of the Open MPI it was built with", n, w.size)
}
