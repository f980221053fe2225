// Package e2e holds the analyzer's end-to-end tests on programs whose
// critical path and wait states are known by construction: small C MPI
// programs (testdata/) that compute in busy loops of designed length on the
// wall clock between their MPI calls, so that which rank is late, by how
// much, and in which call the others wait is fixed by their arguments:
//
//	slowallreduce  a slow rank before each Allreduce        Wait at N x N
//	tokenring      a token passed around a ring             Late Sender, path in ring order
//	latebarrier    a different late rank at each Barrier    Wait at Barrier, path in rank order
//	latesender     Irecvs + Waitall, the sender computes    Late Sender
//	latereceiver   Ssend, the receiver computes first       Late Receiver
//	subcomm        a slow rank before an Allreduce on half  Wait at N x N on the half only
//	               of a Comm_split, then a world Barrier    and Wait at Barrier on world
//	popphases      three phases marked by MPI_Pcontrol:     POP factors by phase and run,
//	               imbalanced rounds of Allreduce, a        what-if predictions against
//	               pipeline, exchanges of large messages    reruns of the changed program
//	traffic        messages of known counts and sizes       the communication matrix,
//	               (Send, Isend, Sendrecv, persistent),     message sizes and
//	               Allreduce/Bcast on world and a split     communicators, exactly
//
// Each program runs under mpirun with libcpathlog.so preloaded, then
// `cpath analyze --json - LOGDIR` runs with every exact algorithm (dag,
// dijkstra, delta; the distributed ones also under mpirun -np 2), and each
// report.Report is held to:
//
//   - the logs, whatever the machine's load did to the run: the run time,
//     a critical path that is contiguous, runs from a rank's first event to
//     the run's last, is as long as the run up to the ranks' MPI_Init skew,
//     and never waits (no call on it lasts longer than its part after its
//     cause started); every wait state in all, per rank, per operation and
//     per communicator, and every collective instance's imbalance, equal to
//     what an independent oracle (oracle_test.go) computes from the records
//     by the SPEC §3 definitions; the same path from every algorithm;
//   - the design (the "design" subtests): the ranks the critical path
//     computes on in order, its computation per rank, every wait state and
//     the designed collective instances, within tolerances suited to a
//     noisy two-core machine (15% or 5 ms with 2 ranks, 25% or 8 ms with
//     more ranks than cores).
//
// A loaded machine stretches busy loops and delays wake-ups, so a program
// is run up to four times until its logs show the designed timings. If no
// run does, the test fails, saying which check and why; with
// CPATH_DESIGN_LENIENT=1 (a machine known to be busy) the design subtests
// are skipped with the reason instead, and the checks against the logs
// still run. Run the package alone (go test -p 1, or nothing else busy)
// for the design checks to be meaningful.
//
// The tests need Open MPI and carry the mpi build tag:
//
//	go test -tags mpi ./report/e2e/ -v
//
// Set CPATH_LOGGER_LIB to test a prebuilt logger library instead of
// building lib/libcpathlog.so with make, and CPATH_BIN to test a prebuilt
// cpath instead of building ./cmd/cpath.
package e2e
