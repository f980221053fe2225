// Package e2e holds the OTF2 round trip's end-to-end tests: real MPI
// programs (the test programs of report/e2e and logger/e2e, and LAMMPS)
// recorded under the logger, exported with cpath export --otf2, and
// analysed again from the archive, which must give the report the logs
// give (the critical path, where it runs by rank and operation, the wait
// states, the collectives' imbalance, the POP factors, the traffic), and
// whose MPI events otf2-print counts as cpath info counts the calls.
//
// The tests need Open MPI and the OTF2 tools and carry the mpi build tag:
//
//	go test -tags mpi ./otf2/e2e/ -v
package e2e
