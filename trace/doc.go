// Package trace is cpath's data model and on-disk log format: the records the
// logger writes for every intercepted MPI call, the per-rank header, and a
// streaming writer and reader for the LZ4-compressed log files.
//
// It plays the role profile/ plays in pprof: a small public package that
// both halves of the tool (the logger that writes, the analyzer that reads)
// depend on, and that outside tools can use to read cpath logs.
//
// A log file is a fixed preamble, a JSON header, and a sequence of LZ4
// frames. Each frame decompresses to one or more chunks; a chunk holds
// fixed-size 64-byte records (delta-encoded so regular communication patterns
// compress to a few bytes per call), the clock parameters measured at
// MPI_Finalize, or the trailer that marks how the run ended. A log without a
// trailer comes from a rank that died without flushing (SIGKILL); the reader
// returns what was flushed and reports the log as incomplete. The format is
// documented in docs/log-format.md.
package trace
