//go:build mpi

package main

import (
	"os"

	"github.com/emer/empi/mpi"
)

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

// publish tells the other ranks how rank 0's work ended.
func (w *world) publish(err error) {
	if w.comm == nil || w.size == 1 {
		return
	}
	st := []int64{0}
	if err != nil {
		st[0] = 1
	}
	_ = w.comm.BcastI64(0, st)
}

// await waits for rank 0's outcome: the error is printed by rank 0 only.
func (w *world) await() error {
	st := []int64{0}
	if err := w.comm.BcastI64(0, st); err != nil {
		return err
	}
	if st[0] != 0 {
		return exitStatus(1)
	}
	return nil
}
