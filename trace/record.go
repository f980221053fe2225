package trace

import (
	"fmt"
	"strconv"
	"syscall"
)

// Record is one logged MPI call, or a sub-record extending the call before
// it. The logger's C record (logger/cpathlog.h, struct cp_rec) has the same
// fields but Path.
type Record struct {
	Start    int64  // enter time, ns on the rank's local monotonic clock (0 for sub-records)
	End      int64  // leave time, ns
	CallSite uint64 // return address into the program (see Header.LoadAddress)
	Bytes    uint64 // count × type size; for receives completed with a status, the bytes received
	Op       Op
	Flags    Flags
	Thread   uint16 // logger-assigned thread index, 0 for the first thread that called MPI
	Comm     uint32 // index into the rank's communicator table (CommWorld, CommSelf, then created ones)
	Peer     int32  // peer as a world rank, or PeerNone / PeerProcNull / PeerAny
	Tag      int32  // message tag; MPI_Pcontrol level; creation counter for communicator constructors
	Root     int32  // root as a world rank for rooted collectives; calls coalesced for unproductive polls (see Polls); else PeerNone
	Count    uint32 // number of sub-records that follow this record
	Seq      uint32 // collective sequence number on Comm (1, 2, …), also of a persistent collective's start (MPI_Start, ReqStart); message id for matched probes and receives (ClassMprobe, ClassMrecv); else 0
	Req      uint32 // tool request id (never reused); new communicator's index for constructors
	// Path is the call's call path (see Header.CallDepth), as an index
	// into the paths of its log (Reader.Paths, Log.Paths); 0: none.
	Path uint32
}

// Polls returns how many MPI calls the record stands for: 0 for a
// sub-record, 1 for most calls, and n for a coalesced unproductive poll.
// The logger writes consecutive calls of a poll operation (Op.IsPoll:
// MPI_Test, MPI_Testall, MPI_Testany, MPI_Testsome, MPI_Iprobe) that
// completed nothing, made by one thread with the same arguments with no
// other MPI call of that thread between them, as one record: Start of the
// first call, End of the last, CallSite of the first, Count 0, and the
// number of calls n >= 1 in Root. A poll that completed something (or an Iprobe
// that found a message) is recorded alone with Root = PeerNone, as before.
func (r *Record) Polls() uint64 {
	switch {
	case r.Op.IsSub():
		return 0
	case r.Unproductive():
		return uint64(uint32(r.Root))
	}
	return 1
}

// Unproductive reports whether the record is a (possibly coalesced) run of
// poll calls that completed nothing; Polls says how many.
func (r *Record) Unproductive() bool { return r.Op.IsPoll() && r.Root > 0 && r.Count == 0 }

// RecordSize is the size of a record's fields but Path: the logger's C
// record and version 1's on-disk record.
const RecordSize = 64

// Flags qualify a record.
type Flags uint8

const (
	FlagNewReq     Flags = 1 << iota // the call created request Req
	FlagWildcard                     // posted with MPI_ANY_SOURCE; Peer was resolved from the status
	FlagAnyTag                       // posted with MPI_ANY_TAG; Tag was resolved from the status
	FlagInPlace                      // MPI_IN_PLACE was passed
	FlagError                        // the MPI call returned an error code
	FlagRemote                       // Member sub-record: rank of the remote group of an intercommunicator
	FlagCancelled                    // ReqDone, a receive: the request was cancelled (on a Wait/Test call: FlagNullRequests)
	FlagPersistent                   // the request is persistent (Send_init…)
)

// FlagNullRequests on a Wait/Test call (class Complete): every request it
// was given was MPI_REQUEST_NULL, or it was given none (count 0), so it
// waited for nothing. It is FlagCancelled's bit, which Wait/Test calls do
// not otherwise carry (ReqDone sub-records and receives do).
const FlagNullRequests = FlagCancelled

// Special peer and root values.
const (
	PeerNone     int32 = -1 // the call has no peer
	PeerProcNull int32 = -2 // MPI_PROC_NULL
	PeerAny      int32 = -3 // MPI_ANY_SOURCE not (yet) resolved
	PeerUnknown  int32 = -4 // a rank the logger could not translate
)

// Indices of the predefined communicators in every rank's table.
const (
	CommWorld uint32 = 0
	CommSelf  uint32 = 1
	CommNone  uint32 = 0xFFFFFFFF // the call has no communicator
)

// Trailer states how a rank's run ended. A log without a trailer comes from
// a rank that died without flushing (SIGKILL, power loss).
type Trailer struct {
	Status  EndStatus
	Info    int32  // signal number, or MPI_Abort error code (0 for an exit without MPI_Finalize: exit handlers cannot know the status)
	Records uint64 // records written in all, this rank
	Dropped uint64 // records the logger had to drop (I/O errors)
	Calls   uint64 // calls written: the records other than sub-records
}

// EndStatus is how a rank ended.
type EndStatus uint32

const (
	EndMissing    EndStatus = 0 // no trailer: the rank was killed before it could flush
	EndFinalized  EndStatus = 1 // MPI_Finalize: the log is complete
	EndAborted    EndStatus = 2 // MPI_Abort
	EndSignal     EndStatus = 3 // a fatal signal (Info is its number)
	EndNoFinalize EndStatus = 4 // the program exited without MPI_Finalize
)

// Ending says how the rank ended, as a phrase after "rank N": notes and
// problem lists say it alike.
func (t Trailer) Ending() string {
	switch t.Status {
	case EndFinalized:
		return "finalized"
	case EndMissing:
		return "was killed before it could write a trailer (SIGKILL or a node failure)"
	case EndAborted:
		return fmt.Sprintf("ended in MPI_Abort (error code %d)", t.Info)
	case EndSignal:
		return fmt.Sprintf("was killed by signal %d (%v)", t.Info, syscall.Signal(t.Info))
	case EndNoFinalize:
		return "exited without MPI_Finalize"
	}
	return "ended with " + t.Status.String()
}

func (s EndStatus) String() string {
	switch s {
	case EndMissing:
		return "killed without flushing (no trailer)"
	case EndFinalized:
		return "finalized"
	case EndAborted:
		return "MPI_Abort"
	case EndSignal:
		return "signal"
	case EndNoFinalize:
		return "exit without MPI_Finalize"
	}
	return "unknown end status " + strconv.Itoa(int(s))
}
