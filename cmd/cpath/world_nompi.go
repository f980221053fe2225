//go:build !mpi

package main

// world is the analyzer's MPI job; without the mpi build tag cpath always
// runs as one process.
type world struct{ rank, size int }

func joinWorld() *world { return &world{size: 1} }
func (w *world) leave() {}
