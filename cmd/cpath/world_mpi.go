//go:build mpi

package main

import (
	"os"
	"runtime"

	"github.com/emer/empi/mpi"
)

// MPI is initialised by MPI_Init (MPI_THREAD_SINGLE): every MPI call must
// come from the thread that made it, so the main goroutine, which makes
// them all, keeps its thread (the Go scheduler would otherwise move it,
// and does more often while other goroutines sleep and wake).
func init() { runtime.LockOSThread() }

// world is the analyzer's MPI job: started by mpirun (which sets
// OMPI_COMM_WORLD_SIZE) as more than one process, cpath joins it; started
// by hand, or by mpirun as one process, it runs alone. One process has
// nobody to exchange with, and Open MPI's MPI_Init and MPI_Finalize take
// about 0.3 s on their own here (mpirun -np 1 cpath on a 2-rank log:
// 0.33 s, against 0.01 s alone and 0.03 s for mpirun -np 1 true).
type world struct {
	rank, size int
	comm       *mpi.Comm
}

func joinWorld() *world {
	if n := os.Getenv("OMPI_COMM_WORLD_SIZE"); n == "" || n == "1" {
		return &world{size: 1}
	}
	mpi.LogErrors = false
	mpi.Init()
	c, _ := mpi.NewComm(nil)
	return &world{rank: c.Rank(), size: c.Size(), comm: c}
}

func (w *world) leave() {
	if w.comm != nil {
		mpi.Finalize()
	}
}
