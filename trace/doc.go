// Package trace is cpath's data model and on-disk log format: the records the
// logger writes for every intercepted MPI call, the per-rank header, and a
// streaming writer and reader for the LZ4-compressed log files.
//
// It plays the role profile/ plays in pprof: a small public package that
// both halves of the tool (the logger that writes, the analyzer that reads)
// depend on, and that outside tools can use to read cpath logs.
//
// A log file is a fixed preamble, a JSON header, and a stream of items:
// records coded against per-call-site slots (a regular communication
// pattern costs a few bytes per call, uncompressed), clock calibration
// points (the logger keeps TSC ticks; the reader converts them to ns),
// checksums, and chunks for the loaded modules, the clock parameters
// measured at MPI_Finalize and the trailer that marks how the run ended.
// The logger writes the stream into a shared mapping of the file as calls
// return, so a log without a trailer (SIGKILL) still holds every call that
// returned. The format is documented in docs/log-format.md.
package trace
