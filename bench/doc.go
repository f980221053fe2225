// Package bench holds cpath's performance measurements. It has no API: the
// Go benchmarks in this directory measure the trace encoder and decoder
// without MPI (go test -bench . ./bench), and bench/loggerbench measures the
// logger library on real MPI programs (bench/progs) side by side with a
// baseline. See README.md.
package bench
