// Package otf2 reads and writes OTF2 archives (the trace format of
// Score-P and TAU, which Vampir, Scalasca and Pipit read) through the
// OTF2 library itself (cgo: libotf2, Debian's libotf2-trace-dev).
//
// It owns both directions between OTF2 and cpath's data model (package
// trace):
//
//   - Import: Open reads an archive's definitions and gives the run as a
//     graph.Run whose ranks are read by rank readers that turn each
//     rank's locations' events into trace.Records (convert.go). The
//     package registers itself with graph (register.go), so that every
//     command that takes a log directory takes an OTF2 anchor file, or
//     the directory holding one, as well.
//   - Export: Export writes a run's cpath logs as an archive, the
//     critical path marked (export.go).
//
// The C side (cotf2.h, read.c, write.c) is the OTF2 callbacks and
// writers; Go crosses into it once per batch of events. docs/otf2.md
// says what maps to what, and what does not.
package otf2
