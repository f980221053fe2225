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
// OMPI_COMM_WORLD_SIZE), cpath joins it; started by hand, it runs alone.
type world struct {
	rank, size int
	comm       *mpi.Comm
}

func joinWorld() *world {
	if os.Getenv("OMPI_COMM_WORLD_SIZE") == "" {
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
