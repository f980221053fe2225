//go:build mpi

package main

// builtWithMPI reports whether cpath was built with the mpi build tag (Open
// MPI linked in through github.com/emer/empi).
const builtWithMPI = true
