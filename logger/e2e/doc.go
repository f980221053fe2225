// Package e2e owns the logger's end-to-end tests: real C and Fortran MPI
// programs (testdata/) and LAMMPS, run under mpirun with libcpathlog.so
// preloaded, whose logs are read back with package trace and held to exact
// per-rank call counts, world-rank peers, matched message bytes, collective
// sequence numbers and communicator tables.
//
// The tests need Open MPI and carry the mpi build tag:
//
//	go test -tags mpi ./logger/e2e/ -v
//
// Those under MPICH (the .../mpich subtests and the tests named ...MPICH)
// need MPICH too and skip without it.
//
// Set CPATH_LOGGER_LIB (CPATH_LOGGER_LIB_MPICH) to test a prebuilt library
// instead of building lib/libcpathlog.so (lib/libcpathlog-mpich.so) with
// make.
package e2e
