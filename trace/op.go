package trace

import "strconv"

// Op identifies the MPI operation a record describes. The numbering is part
// of the file format: append new operations, never renumber.
type Op uint8

// Class groups operations by the way the analyzer treats them.
type Class uint8

const (
	ClassOther       Class = iota // Init, Finalize, Pcontrol…: no communication
	ClassSend                     // blocking send family
	ClassRecv                     // blocking receive
	ClassSendRecv                 // Sendrecv(_replace): send half here, receive half in a RecvPart sub-record
	ClassIsend                    // non-blocking send: creates a request
	ClassIrecv                    // non-blocking receive: creates a request
	ClassSendInit                 // persistent send: creates an inactive request
	ClassRecvInit                 // persistent receive: creates an inactive request
	ClassStart                    // Start/Startall: activates persistent requests
	ClassComplete                 // Wait/Test family: completes requests (ReqDone sub-records)
	ClassRequestFree              // Request_free
	ClassProbe                    // Probe
	ClassCollective               // blocking collective
	ClassIcollective              // non-blocking collective: creates a request
	ClassCommCreate               // communicator constructor: Member sub-records follow
	ClassCommFree                 // Comm_free
	ClassPartitioned              // Pready*, Parrived
	ClassSub                      // sub-record: belongs to the timed record before it
	// Classes added in format version 2 (appended: the values above are
	// unchanged for code that keys tables by class).
	ClassGrequest         // MPI_Grequest_start: creates a request the program completes itself
	ClassGrequestComplete // MPI_Grequest_complete: Req is the request completed, Thread the thread that did it
	// MPI-IO. Collective file operations (MPI_File_open, _close,
	// _set_view, _sync, the _all and _ordered forms) are ClassCollective
	// or ClassIcollective over the file's communicator; these two are the
	// independent ones.
	ClassFileIO  // blocking independent file read or write (explicit offset, individual or shared pointer)
	ClassFileIIO // non-blocking independent file read or write: creates a request that completes locally
	// Matched probes: the message is matched (dequeued) by the probe and
	// received through its handle; Seq is the tool's message id (never
	// reused) on both.
	ClassMprobe // MPI_Mprobe, MPI_Improbe that found a message: Peer, Tag, Bytes from the status
	ClassMrecv  // MPI_Mrecv, MPI_Imrecv (which creates receive request Req): receives message Seq
	// One-sided communication (RMA). Window creation and free and
	// MPI_Win_fence are ClassCollective over the window's communicator
	// (attrRMA); these are the rest.
	ClassRMA        // a one-sided transfer (Put, Get, Accumulate, …) or a passive-target or PSCW synchronisation call: Peer is the target's world rank where the call names one
	ClassRMARequest // MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate: as ClassRMA, and creates request Req that completes locally
	ClassRMAGroup   // MPI_Win_post, MPI_Win_start: WinGroupMember sub-records list the group's world ranks
	// Persistent collectives (MPI 4: MPI_Neighbor_allgather_init, …):
	// the init creates an inactive persistent request (FlagPersistent)
	// and is no collective instance itself; each MPI_Start of the
	// request is one, numbered in the communicator's collective sequence
	// at the start (Seq of the MPI_Start record, or of the ReqStart
	// sub-record of MPI_Startall), and a Wait/Test completes it.
	ClassCollInit
)

// Sub-records carry no timestamps; they extend the timed record before them
// (whose Count says how many follow).
const (
	OpInvalid  Op = iota
	OpReqDone     // a request completed by a Wait/Test call: Req, Peer (source for receives), Tag, Bytes
	OpReqStart    // a persistent request activated by Startall: Req
	OpRecvPart    // the receive half of a Sendrecv: Peer (actual source), Tag, Bytes
	OpMember      // a member of a new communicator: Peer is its world rank (FlagRemote: remote group)

	OpInit
	OpInitThread
	OpFinalize
	OpAbort
	OpPcontrol

	OpSend
	OpSsend
	OpBsend
	OpRsend
	OpRecv
	OpSendrecv
	OpSendrecvReplace

	OpIsend
	OpIssend
	OpIbsend
	OpIrsend
	OpIrecv

	OpSendInit
	OpSsendInit
	OpBsendInit
	OpRsendInit
	OpRecvInit
	OpStart
	OpStartall
	OpRequestFree

	OpWait
	OpWaitall
	OpWaitany
	OpWaitsome
	OpTest
	OpTestall
	OpTestany
	OpTestsome
	OpProbe

	OpBarrier
	OpBcast
	OpReduce
	OpAllreduce
	OpGather
	OpGatherv
	OpScatter
	OpScatterv
	OpAllgather
	OpAllgatherv
	OpAlltoall
	OpAlltoallv
	OpAlltoallw
	OpReduceScatter
	OpReduceScatterBlock
	OpScan
	OpExscan

	OpIbarrier
	OpIbcast
	OpIreduce
	OpIallreduce
	OpIgather
	OpIgatherv
	OpIscatter
	OpIscatterv
	OpIallgather
	OpIallgatherv
	OpIalltoall
	OpIalltoallv
	OpIalltoallw
	OpIreduceScatter
	OpIreduceScatterBlock
	OpIscan
	OpIexscan

	OpCommDup
	OpCommIdup
	OpCommSplit
	OpCommSplitType
	OpCommCreate
	OpCommCreateGroup
	OpCartCreate
	OpCartSub
	OpGraphCreate
	OpDistGraphCreate
	OpDistGraphCreateAdjacent
	OpIntercommCreate
	OpIntercommMerge
	OpCommFree

	OpPsendInit
	OpPrecvInit
	OpPready
	OpPreadyRange
	OpPreadyList
	OpParrived

	// Format version 2.
	OpCommDupWithInfo
	OpCommIdupWithInfo
	OpCommCreateFromGroup
	OpIntercommCreateFromGroups
	OpCommSpawn
	OpCommSpawnMultiple
	OpCommAccept
	OpCommConnect
	OpCommJoin
	OpCommGetParent
	OpCommDisconnect
	OpIprobe
	OpGrequestStart
	OpGrequestComplete

	// MPI-IO (issue 11). Comm is the file's communicator (that of its
	// MPI_File_open), Tag the rank's file number (1, 2, … in open order).
	OpFileOpen
	OpFileClose
	OpFileSetView
	OpFileSync
	OpFileRead
	OpFileReadAt
	OpFileReadShared
	OpFileWrite
	OpFileWriteAt
	OpFileWriteShared
	OpFileReadAll
	OpFileReadAtAll
	OpFileReadOrdered
	OpFileWriteAll
	OpFileWriteAtAll
	OpFileWriteOrdered
	OpFileIread
	OpFileIreadAt
	OpFileIreadShared
	OpFileIwrite
	OpFileIwriteAt
	OpFileIwriteShared
	OpFileIreadAll
	OpFileIreadAtAll
	OpFileIwriteAll
	OpFileIwriteAtAll
	// Matched probes.
	OpImprobe
	OpMprobe
	OpMrecv
	OpImrecv

	// Neighbourhood collectives (issue 11): collectives over the
	// communicator's topology (ClassCollective / ClassIcollective, matched
	// by Comm and Seq), where a member needs only its in-neighbours.
	// Topology constructors list the rank's neighbours in NeighborSource
	// and NeighborDest sub-records after their Member ones.
	OpNeighborSource // sub-record: an in-neighbour (source) of the rank in the new communicator: Peer is its world rank (-2: MPI_PROC_NULL)
	OpNeighborDest   // sub-record: an out-neighbour (destination): Peer as for NeighborSource
	OpNeighborAllgather
	OpNeighborAllgatherv
	OpNeighborAlltoall
	OpNeighborAlltoallv
	OpNeighborAlltoallw
	OpIneighborAllgather
	OpIneighborAllgatherv
	OpIneighborAlltoall
	OpIneighborAlltoallv
	OpIneighborAlltoallw

	// One-sided communication (issue 11). Every record has Comm = the
	// window's communicator (that of its creation) and Tag = the rank's
	// window number (1, 2, … in creation order); Peer is a target rank as
	// a world rank.
	OpWinCreate
	OpWinAllocate
	OpWinAllocateShared
	OpWinCreateDynamic
	OpWinFree
	OpWinFence
	OpPut
	OpGet
	OpAccumulate
	OpGetAccumulate
	OpFetchAndOp
	OpCompareAndSwap
	OpRput
	OpRget
	OpRaccumulate
	OpRgetAccumulate
	OpWinLock
	OpWinUnlock
	OpWinLockAll
	OpWinUnlockAll
	OpWinFlush
	OpWinFlushAll
	OpWinFlushLocal
	OpWinFlushLocalAll
	OpWinSync
	OpWinPost
	OpWinStart
	OpWinComplete
	OpWinWait
	OpWinGroupMember // sub-record: a member of the group given to MPI_Win_post or MPI_Win_start: Peer is its world rank

	// Partitioned communication (issue 11; the calls are codes 87-92).
	OpPartition // sub-record of MPI_Pready_list: one partition it made ready, in Tag

	// Split collective MPI-IO (issue 11): a _begin is a non-blocking
	// collective file operation (ClassIcollective, attrIO) that creates
	// request Req, known to the tool only (MPI gives the program none);
	// its _end, the next on the file (MPI allows one at a time per file),
	// completes it as a Wait does (ClassComplete: one ReqDone
	// sub-record), with Comm and Tag naming the file.
	OpFileReadAllBegin
	OpFileReadAllEnd
	OpFileWriteAllBegin
	OpFileWriteAllEnd
	OpFileReadAtAllBegin
	OpFileReadAtAllEnd
	OpFileWriteAtAllBegin
	OpFileWriteAtAllEnd
	OpFileReadOrderedBegin
	OpFileReadOrderedEnd
	OpFileWriteOrderedBegin
	OpFileWriteOrderedEnd

	// Persistent neighbourhood collectives (issue 11; MPI 4, class
	// ClassCollInit): Bytes as for the blocking forms, per activation.
	OpNeighborAllgatherInit
	OpNeighborAllgathervInit
	OpNeighborAlltoallInit
	OpNeighborAlltoallvInit
	OpNeighborAlltoallwInit

	// General active target synchronisation (issue 11), appended:
	// MPI_Win_test: a poll on the exposure epoch of window Tag. One that
	// found the epoch not yet complete is unproductive (coalesced as the
	// Test family's); a productive one (flag true) ends the epoch, as
	// MPI_Win_wait does.
	OpWinTest

	// MPI_Buffer_detach (appended): it blocks until the rank's buffered
	// messages have been delivered. Bytes is the size of the buffer it
	// detached.
	OpBufferDetach

	NumOps // not an operation: the number of defined codes
)

type opInfo struct {
	name   string // the MPI name, as users know it
	class  Class
	letter byte // communicator constructors: the mpisee name letter
	attr   opAttr
	flow   Flow // collectives: how data moves among the members
}

// Flow is how a collective operation moves data among its members. It
// decides whom a member waits for (the graph's dependencies and wait
// states, SPEC §3) and the traffic the instance makes; the op table is
// the one place that says which operation has which.
type Flow uint8

const (
	// FlowNone: not a collective, or one that moves no data of the
	// program's (communicator and window constructors, MPI_Win_free, the
	// collective file operations): as a collective, every member needs
	// every other.
	FlowNone     Flow = iota
	FlowBarrier       // Barrier, Ibarrier: every member needs every other, no data
	FlowFence         // MPI_Win_fence: closes the epoch on every member of the window's group
	FlowAll           // Allreduce, Allgather(v): each member's data to every other
	FlowSpread        // Alltoall(v,w), Reduce_scatter(_block): a part of each member's data to every other
	FlowFromRoot      // Bcast, Scatter(v): the root's data to every member
	FlowToRoot        // Reduce, Gather(v): every member's data to the root
	FlowScan          // Scan: each member needs the members up to itself
	FlowExscan        // Exscan: each member needs the members before it
	FlowNeighbor      // neighbourhood collectives: each member needs its in-neighbours in the communicator's topology
)

// Synchronising reports whether, in a collective of this flow, every
// member needs every other one to complete: the operations the barrier
// formulas of the paper's §5.2 describe.
func (f Flow) Synchronising() bool {
	switch f {
	case FlowNone, FlowBarrier, FlowFence, FlowAll, FlowSpread:
		return true
	}
	return false
}

// MovesData reports whether the flow's order between the members comes
// only from the data they exchange: an instance of it in which every
// member passes 0 bytes orders nothing (Open MPI and MPICH return from
// such a call at once, without communicating). Barriers, fences and the
// collectives that move no data (FlowNone: communicator constructors,
// file operations) order their members whatever the counts.
func (f Flow) MovesData() bool {
	switch f {
	case FlowAll, FlowSpread, FlowFromRoot, FlowToRoot, FlowScan, FlowExscan, FlowNeighbor:
		return true
	}
	return false
}

// InPlaceLogsNoBytes reports whether an earlier logger recorded 0 bytes
// for a call of op given MPI_IN_PLACE whatever it moved: MPI_Allgatherv
// and MPI_Iallgatherv, whose own contribution is then in the receive
// buffer. The logger now records that block (its recvcounts entry), but
// logs of the same format version from before may hold 0. (An in-place
// Allreduce logs its count; Gatherv's and Scatterv's root keeps its own
// part, so its 0 bytes are what it exchanges.)
func (o Op) InPlaceLogsNoBytes() bool { return o == OpAllgatherv || o == OpIallgatherv }

// Prefix reports whether a member needs only the members before it in the
// communicator's order (and itself, for a Scan).
func (f Flow) Prefix() bool { return f == FlowScan || f == FlowExscan }

// opAttr marks operations that some code treats apart within their class.
type opAttr uint8

const (
	// attrPoll: a non-blocking test (Test family, Iprobe). Unproductive
	// calls of it are coalesced into one record; see Record.Polls.
	attrPoll opAttr = 1 << iota
	// attrIdup: a non-blocking communicator constructor (MPI_Comm_idup and
	// its _with_info form): it creates request Req, the new index is in Tag.
	attrIdup
	// attrIO: an MPI-IO file operation; its time on the critical path is
	// I/O ("io"), not communication.
	attrIO
	// attrRMA: a one-sided (RMA) call, including window creation and
	// free and MPI_Win_fence, which are collectives over the window's
	// communicator.
	attrRMA
	// attrPairCounts: a collective whose counts are per pair of members
	// (MPI_Alltoallv, _w, and their neighbourhood forms): the log keeps
	// their sum, so which members a member needs is not known.
	attrPairCounts
	// attrWorldBarrier: MPI_Init and MPI_Init_thread, a barrier over
	// MPI_COMM_WORLD as the logger records them (see IsWorldBarrier).
	attrWorldBarrier
	// attrRMATransfer: a one-sided transfer (Put, Get, the accumulates,
	// Fetch_and_op, Compare_and_swap, and their request forms): Peer is
	// its target, Bytes what it moved.
	attrRMATransfer
	// attrRMAFlush: MPI_Win_flush and its _all, _local, _local_all
	// forms: they wait for the window's one-sided operations to complete.
	attrRMAFlush
)

var ops = [NumOps]opInfo{
	OpInvalid:    {"invalid", ClassOther, 0, 0, 0},
	OpReqDone:    {"(request done)", ClassSub, 0, 0, 0},
	OpReqStart:   {"(request start)", ClassSub, 0, 0, 0},
	OpRecvPart:   {"(receive part)", ClassSub, 0, 0, 0},
	OpMember:     {"(member)", ClassSub, 0, 0, 0},
	OpInit:       {"MPI_Init", ClassOther, 0, attrWorldBarrier, FlowBarrier},
	OpInitThread: {"MPI_Init_thread", ClassOther, 0, attrWorldBarrier, FlowBarrier},
	OpFinalize:   {"MPI_Finalize", ClassOther, 0, 0, 0},
	OpAbort:      {"MPI_Abort", ClassOther, 0, 0, 0},
	OpPcontrol:   {"MPI_Pcontrol", ClassOther, 0, 0, 0},

	OpSend:            {"MPI_Send", ClassSend, 0, 0, 0},
	OpSsend:           {"MPI_Ssend", ClassSend, 0, 0, 0},
	OpBsend:           {"MPI_Bsend", ClassSend, 0, 0, 0},
	OpRsend:           {"MPI_Rsend", ClassSend, 0, 0, 0},
	OpRecv:            {"MPI_Recv", ClassRecv, 0, 0, 0},
	OpSendrecv:        {"MPI_Sendrecv", ClassSendRecv, 0, 0, 0},
	OpSendrecvReplace: {"MPI_Sendrecv_replace", ClassSendRecv, 0, 0, 0},

	OpIsend:  {"MPI_Isend", ClassIsend, 0, 0, 0},
	OpIssend: {"MPI_Issend", ClassIsend, 0, 0, 0},
	OpIbsend: {"MPI_Ibsend", ClassIsend, 0, 0, 0},
	OpIrsend: {"MPI_Irsend", ClassIsend, 0, 0, 0},
	OpIrecv:  {"MPI_Irecv", ClassIrecv, 0, 0, 0},

	OpSendInit:    {"MPI_Send_init", ClassSendInit, 0, 0, 0},
	OpSsendInit:   {"MPI_Ssend_init", ClassSendInit, 0, 0, 0},
	OpBsendInit:   {"MPI_Bsend_init", ClassSendInit, 0, 0, 0},
	OpRsendInit:   {"MPI_Rsend_init", ClassSendInit, 0, 0, 0},
	OpRecvInit:    {"MPI_Recv_init", ClassRecvInit, 0, 0, 0},
	OpStart:       {"MPI_Start", ClassStart, 0, 0, 0},
	OpStartall:    {"MPI_Startall", ClassStart, 0, 0, 0},
	OpRequestFree: {"MPI_Request_free", ClassRequestFree, 0, 0, 0},

	OpWait:     {"MPI_Wait", ClassComplete, 0, 0, 0},
	OpWaitall:  {"MPI_Waitall", ClassComplete, 0, 0, 0},
	OpWaitany:  {"MPI_Waitany", ClassComplete, 0, 0, 0},
	OpWaitsome: {"MPI_Waitsome", ClassComplete, 0, 0, 0},
	OpTest:     {"MPI_Test", ClassComplete, 0, attrPoll, 0},
	OpTestall:  {"MPI_Testall", ClassComplete, 0, attrPoll, 0},
	OpTestany:  {"MPI_Testany", ClassComplete, 0, attrPoll, 0},
	OpTestsome: {"MPI_Testsome", ClassComplete, 0, attrPoll, 0},
	OpProbe:    {"MPI_Probe", ClassProbe, 0, 0, 0},

	OpBarrier:            {"MPI_Barrier", ClassCollective, 0, 0, FlowBarrier},
	OpBcast:              {"MPI_Bcast", ClassCollective, 0, 0, FlowFromRoot},
	OpReduce:             {"MPI_Reduce", ClassCollective, 0, 0, FlowToRoot},
	OpAllreduce:          {"MPI_Allreduce", ClassCollective, 0, 0, FlowAll},
	OpGather:             {"MPI_Gather", ClassCollective, 0, 0, FlowToRoot},
	OpGatherv:            {"MPI_Gatherv", ClassCollective, 0, 0, FlowToRoot},
	OpScatter:            {"MPI_Scatter", ClassCollective, 0, 0, FlowFromRoot},
	OpScatterv:           {"MPI_Scatterv", ClassCollective, 0, 0, FlowFromRoot},
	OpAllgather:          {"MPI_Allgather", ClassCollective, 0, 0, FlowAll},
	OpAllgatherv:         {"MPI_Allgatherv", ClassCollective, 0, 0, FlowAll},
	OpAlltoall:           {"MPI_Alltoall", ClassCollective, 0, 0, FlowSpread},
	OpAlltoallv:          {"MPI_Alltoallv", ClassCollective, 0, attrPairCounts, FlowSpread},
	OpAlltoallw:          {"MPI_Alltoallw", ClassCollective, 0, attrPairCounts, FlowSpread},
	OpReduceScatter:      {"MPI_Reduce_scatter", ClassCollective, 0, 0, FlowSpread},
	OpReduceScatterBlock: {"MPI_Reduce_scatter_block", ClassCollective, 0, 0, FlowSpread},
	OpScan:               {"MPI_Scan", ClassCollective, 0, 0, FlowScan},
	OpExscan:             {"MPI_Exscan", ClassCollective, 0, 0, FlowExscan},

	OpIbarrier:            {"MPI_Ibarrier", ClassIcollective, 0, 0, FlowBarrier},
	OpIbcast:              {"MPI_Ibcast", ClassIcollective, 0, 0, FlowFromRoot},
	OpIreduce:             {"MPI_Ireduce", ClassIcollective, 0, 0, FlowToRoot},
	OpIallreduce:          {"MPI_Iallreduce", ClassIcollective, 0, 0, FlowAll},
	OpIgather:             {"MPI_Igather", ClassIcollective, 0, 0, FlowToRoot},
	OpIgatherv:            {"MPI_Igatherv", ClassIcollective, 0, 0, FlowToRoot},
	OpIscatter:            {"MPI_Iscatter", ClassIcollective, 0, 0, FlowFromRoot},
	OpIscatterv:           {"MPI_Iscatterv", ClassIcollective, 0, 0, FlowFromRoot},
	OpIallgather:          {"MPI_Iallgather", ClassIcollective, 0, 0, FlowAll},
	OpIallgatherv:         {"MPI_Iallgatherv", ClassIcollective, 0, 0, FlowAll},
	OpIalltoall:           {"MPI_Ialltoall", ClassIcollective, 0, 0, FlowSpread},
	OpIalltoallv:          {"MPI_Ialltoallv", ClassIcollective, 0, attrPairCounts, FlowSpread},
	OpIalltoallw:          {"MPI_Ialltoallw", ClassIcollective, 0, attrPairCounts, FlowSpread},
	OpIreduceScatter:      {"MPI_Ireduce_scatter", ClassIcollective, 0, 0, FlowSpread},
	OpIreduceScatterBlock: {"MPI_Ireduce_scatter_block", ClassIcollective, 0, 0, FlowSpread},
	OpIscan:               {"MPI_Iscan", ClassIcollective, 0, 0, FlowScan},
	OpIexscan:             {"MPI_Iexscan", ClassIcollective, 0, 0, FlowExscan},

	OpCommDup:                 {"MPI_Comm_dup", ClassCommCreate, 'D', 0, 0},
	OpCommIdup:                {"MPI_Comm_idup", ClassCommCreate, 'd', attrIdup, 0},
	OpCommSplit:               {"MPI_Comm_split", ClassCommCreate, 'S', 0, 0},
	OpCommSplitType:           {"MPI_Comm_split_type", ClassCommCreate, 'T', 0, 0},
	OpCommCreate:              {"MPI_Comm_create", ClassCommCreate, 'C', 0, 0},
	OpCommCreateGroup:         {"MPI_Comm_create_group", ClassCommCreate, 'G', 0, 0},
	OpCartCreate:              {"MPI_Cart_create", ClassCommCreate, 'K', 0, 0},
	OpCartSub:                 {"MPI_Cart_sub", ClassCommCreate, 'k', 0, 0},
	OpGraphCreate:             {"MPI_Graph_create", ClassCommCreate, 'R', 0, 0},
	OpDistGraphCreate:         {"MPI_Dist_graph_create", ClassCommCreate, 'r', 0, 0},
	OpDistGraphCreateAdjacent: {"MPI_Dist_graph_create_adjacent", ClassCommCreate, 'a', 0, 0},
	OpIntercommCreate:         {"MPI_Intercomm_create", ClassCommCreate, 'I', 0, 0},
	OpIntercommMerge:          {"MPI_Intercomm_merge", ClassCommCreate, 'M', 0, 0},
	OpCommFree:                {"MPI_Comm_free", ClassCommFree, 0, 0, 0},

	OpPsendInit:   {"MPI_Psend_init", ClassSendInit, 0, 0, 0},
	OpPrecvInit:   {"MPI_Precv_init", ClassRecvInit, 0, 0, 0},
	OpPready:      {"MPI_Pready", ClassPartitioned, 0, 0, 0},
	OpPreadyRange: {"MPI_Pready_range", ClassPartitioned, 0, 0, 0},
	OpPreadyList:  {"MPI_Pready_list", ClassPartitioned, 0, 0, 0},
	OpParrived:    {"MPI_Parrived", ClassPartitioned, 0, attrPoll, 0},

	// The letters of the constructors added in version 2 are the tool's
	// own (mpisee has none for them). MPI_Comm_accept and MPI_Comm_connect
	// share one: the two sides make one communicator, with one name.
	OpCommDupWithInfo:           {"MPI_Comm_dup_with_info", ClassCommCreate, 'E', 0, 0},
	OpCommIdupWithInfo:          {"MPI_Comm_idup_with_info", ClassCommCreate, 'e', attrIdup, 0},
	OpCommCreateFromGroup:       {"MPI_Comm_create_from_group", ClassCommCreate, 'g', 0, 0},
	OpIntercommCreateFromGroups: {"MPI_Intercomm_create_from_groups", ClassCommCreate, 'i', 0, 0},
	OpCommSpawn:                 {"MPI_Comm_spawn", ClassCommCreate, 'P', 0, 0},
	OpCommSpawnMultiple:         {"MPI_Comm_spawn_multiple", ClassCommCreate, 'p', 0, 0},
	OpCommAccept:                {"MPI_Comm_accept", ClassCommCreate, 'A', 0, 0},
	OpCommConnect:               {"MPI_Comm_connect", ClassCommCreate, 'A', 0, 0},
	OpCommJoin:                  {"MPI_Comm_join", ClassCommCreate, 'J', 0, 0},
	OpCommGetParent:             {"MPI_Comm_get_parent", ClassCommCreate, 'Y', 0, 0},
	OpCommDisconnect:            {"MPI_Comm_disconnect", ClassCommFree, 0, 0, 0},
	OpIprobe:                    {"MPI_Iprobe", ClassProbe, 0, attrPoll, 0},
	OpGrequestStart:             {"MPI_Grequest_start", ClassGrequest, 0, 0, 0},
	OpGrequestComplete:          {"MPI_Grequest_complete", ClassGrequestComplete, 0, 0, 0},

	OpFileOpen:         {"MPI_File_open", ClassCollective, 0, attrIO, 0},
	OpFileClose:        {"MPI_File_close", ClassCollective, 0, attrIO, 0},
	OpFileSetView:      {"MPI_File_set_view", ClassCollective, 0, attrIO, 0},
	OpFileSync:         {"MPI_File_sync", ClassCollective, 0, attrIO, 0},
	OpFileRead:         {"MPI_File_read", ClassFileIO, 0, attrIO, 0},
	OpFileReadAt:       {"MPI_File_read_at", ClassFileIO, 0, attrIO, 0},
	OpFileReadShared:   {"MPI_File_read_shared", ClassFileIO, 0, attrIO, 0},
	OpFileWrite:        {"MPI_File_write", ClassFileIO, 0, attrIO, 0},
	OpFileWriteAt:      {"MPI_File_write_at", ClassFileIO, 0, attrIO, 0},
	OpFileWriteShared:  {"MPI_File_write_shared", ClassFileIO, 0, attrIO, 0},
	OpFileReadAll:      {"MPI_File_read_all", ClassCollective, 0, attrIO, 0},
	OpFileReadAtAll:    {"MPI_File_read_at_all", ClassCollective, 0, attrIO, 0},
	OpFileReadOrdered:  {"MPI_File_read_ordered", ClassCollective, 0, attrIO, 0},
	OpFileWriteAll:     {"MPI_File_write_all", ClassCollective, 0, attrIO, 0},
	OpFileWriteAtAll:   {"MPI_File_write_at_all", ClassCollective, 0, attrIO, 0},
	OpFileWriteOrdered: {"MPI_File_write_ordered", ClassCollective, 0, attrIO, 0},
	OpFileIread:        {"MPI_File_iread", ClassFileIIO, 0, attrIO, 0},
	OpFileIreadAt:      {"MPI_File_iread_at", ClassFileIIO, 0, attrIO, 0},
	OpFileIreadShared:  {"MPI_File_iread_shared", ClassFileIIO, 0, attrIO, 0},
	OpFileIwrite:       {"MPI_File_iwrite", ClassFileIIO, 0, attrIO, 0},
	OpFileIwriteAt:     {"MPI_File_iwrite_at", ClassFileIIO, 0, attrIO, 0},
	OpFileIwriteShared: {"MPI_File_iwrite_shared", ClassFileIIO, 0, attrIO, 0},
	OpFileIreadAll:     {"MPI_File_iread_all", ClassIcollective, 0, attrIO, 0},
	OpFileIreadAtAll:   {"MPI_File_iread_at_all", ClassIcollective, 0, attrIO, 0},
	OpFileIwriteAll:    {"MPI_File_iwrite_all", ClassIcollective, 0, attrIO, 0},
	OpFileIwriteAtAll:  {"MPI_File_iwrite_at_all", ClassIcollective, 0, attrIO, 0},
	OpImprobe:          {"MPI_Improbe", ClassMprobe, 0, attrPoll, 0},
	OpMprobe:           {"MPI_Mprobe", ClassMprobe, 0, 0, 0},
	OpMrecv:            {"MPI_Mrecv", ClassMrecv, 0, 0, 0},
	OpImrecv:           {"MPI_Imrecv", ClassMrecv, 0, 0, 0},

	OpNeighborSource:      {"(neighbour source)", ClassSub, 0, 0, 0},
	OpNeighborDest:        {"(neighbour destination)", ClassSub, 0, 0, 0},
	OpNeighborAllgather:   {"MPI_Neighbor_allgather", ClassCollective, 0, 0, FlowNeighbor},
	OpNeighborAllgatherv:  {"MPI_Neighbor_allgatherv", ClassCollective, 0, 0, FlowNeighbor},
	OpNeighborAlltoall:    {"MPI_Neighbor_alltoall", ClassCollective, 0, 0, FlowNeighbor},
	OpNeighborAlltoallv:   {"MPI_Neighbor_alltoallv", ClassCollective, 0, attrPairCounts, FlowNeighbor},
	OpNeighborAlltoallw:   {"MPI_Neighbor_alltoallw", ClassCollective, 0, attrPairCounts, FlowNeighbor},
	OpIneighborAllgather:  {"MPI_Ineighbor_allgather", ClassIcollective, 0, 0, FlowNeighbor},
	OpIneighborAllgatherv: {"MPI_Ineighbor_allgatherv", ClassIcollective, 0, 0, FlowNeighbor},
	OpIneighborAlltoall:   {"MPI_Ineighbor_alltoall", ClassIcollective, 0, 0, FlowNeighbor},
	OpIneighborAlltoallv:  {"MPI_Ineighbor_alltoallv", ClassIcollective, 0, attrPairCounts, FlowNeighbor},
	OpIneighborAlltoallw:  {"MPI_Ineighbor_alltoallw", ClassIcollective, 0, attrPairCounts, FlowNeighbor},

	OpWinCreate:         {"MPI_Win_create", ClassCollective, 0, attrRMA, 0},
	OpWinAllocate:       {"MPI_Win_allocate", ClassCollective, 0, attrRMA, 0},
	OpWinAllocateShared: {"MPI_Win_allocate_shared", ClassCollective, 0, attrRMA, 0},
	OpWinCreateDynamic:  {"MPI_Win_create_dynamic", ClassCollective, 0, attrRMA, 0},
	OpWinFree:           {"MPI_Win_free", ClassCollective, 0, attrRMA, 0},
	OpWinFence:          {"MPI_Win_fence", ClassCollective, 0, attrRMA, FlowFence},
	OpPut:               {"MPI_Put", ClassRMA, 0, attrRMA | attrRMATransfer, 0},
	OpGet:               {"MPI_Get", ClassRMA, 0, attrRMA | attrRMATransfer, 0},
	OpAccumulate:        {"MPI_Accumulate", ClassRMA, 0, attrRMA | attrRMATransfer, 0},
	OpGetAccumulate:     {"MPI_Get_accumulate", ClassRMA, 0, attrRMA | attrRMATransfer, 0},
	OpFetchAndOp:        {"MPI_Fetch_and_op", ClassRMA, 0, attrRMA | attrRMATransfer, 0},
	OpCompareAndSwap:    {"MPI_Compare_and_swap", ClassRMA, 0, attrRMA | attrRMATransfer, 0},
	OpRput:              {"MPI_Rput", ClassRMARequest, 0, attrRMA | attrRMATransfer, 0},
	OpRget:              {"MPI_Rget", ClassRMARequest, 0, attrRMA | attrRMATransfer, 0},
	OpRaccumulate:       {"MPI_Raccumulate", ClassRMARequest, 0, attrRMA | attrRMATransfer, 0},
	OpRgetAccumulate:    {"MPI_Rget_accumulate", ClassRMARequest, 0, attrRMA | attrRMATransfer, 0},
	OpWinLock:           {"MPI_Win_lock", ClassRMA, 0, attrRMA, 0},
	OpWinUnlock:         {"MPI_Win_unlock", ClassRMA, 0, attrRMA, 0},
	OpWinLockAll:        {"MPI_Win_lock_all", ClassRMA, 0, attrRMA, 0},
	OpWinUnlockAll:      {"MPI_Win_unlock_all", ClassRMA, 0, attrRMA, 0},
	OpWinFlush:          {"MPI_Win_flush", ClassRMA, 0, attrRMA | attrRMAFlush, 0},
	OpWinFlushAll:       {"MPI_Win_flush_all", ClassRMA, 0, attrRMA | attrRMAFlush, 0},
	OpWinFlushLocal:     {"MPI_Win_flush_local", ClassRMA, 0, attrRMA | attrRMAFlush, 0},
	OpWinFlushLocalAll:  {"MPI_Win_flush_local_all", ClassRMA, 0, attrRMA | attrRMAFlush, 0},
	OpWinSync:           {"MPI_Win_sync", ClassRMA, 0, attrRMA, 0},
	OpWinPost:           {"MPI_Win_post", ClassRMAGroup, 0, attrRMA, 0},
	OpWinStart:          {"MPI_Win_start", ClassRMAGroup, 0, attrRMA, 0},
	OpWinComplete:       {"MPI_Win_complete", ClassRMA, 0, attrRMA, 0},
	OpWinWait:           {"MPI_Win_wait", ClassRMA, 0, attrRMA, 0},
	OpWinGroupMember:    {"(window group member)", ClassSub, 0, 0, 0},
	OpPartition:         {"(partition)", ClassSub, 0, 0, 0},

	OpFileReadAllBegin:      {"MPI_File_read_all_begin", ClassIcollective, 0, attrIO, 0},
	OpFileReadAllEnd:        {"MPI_File_read_all_end", ClassComplete, 0, attrIO, 0},
	OpFileWriteAllBegin:     {"MPI_File_write_all_begin", ClassIcollective, 0, attrIO, 0},
	OpFileWriteAllEnd:       {"MPI_File_write_all_end", ClassComplete, 0, attrIO, 0},
	OpFileReadAtAllBegin:    {"MPI_File_read_at_all_begin", ClassIcollective, 0, attrIO, 0},
	OpFileReadAtAllEnd:      {"MPI_File_read_at_all_end", ClassComplete, 0, attrIO, 0},
	OpFileWriteAtAllBegin:   {"MPI_File_write_at_all_begin", ClassIcollective, 0, attrIO, 0},
	OpFileWriteAtAllEnd:     {"MPI_File_write_at_all_end", ClassComplete, 0, attrIO, 0},
	OpFileReadOrderedBegin:  {"MPI_File_read_ordered_begin", ClassIcollective, 0, attrIO, 0},
	OpFileReadOrderedEnd:    {"MPI_File_read_ordered_end", ClassComplete, 0, attrIO, 0},
	OpFileWriteOrderedBegin: {"MPI_File_write_ordered_begin", ClassIcollective, 0, attrIO, 0},
	OpFileWriteOrderedEnd:   {"MPI_File_write_ordered_end", ClassComplete, 0, attrIO, 0},

	OpNeighborAllgatherInit:  {"MPI_Neighbor_allgather_init", ClassCollInit, 0, 0, FlowNeighbor},
	OpNeighborAllgathervInit: {"MPI_Neighbor_allgatherv_init", ClassCollInit, 0, 0, FlowNeighbor},
	OpNeighborAlltoallInit:   {"MPI_Neighbor_alltoall_init", ClassCollInit, 0, 0, FlowNeighbor},
	OpNeighborAlltoallvInit:  {"MPI_Neighbor_alltoallv_init", ClassCollInit, 0, attrPairCounts, FlowNeighbor},
	OpNeighborAlltoallwInit:  {"MPI_Neighbor_alltoallw_init", ClassCollInit, 0, attrPairCounts, FlowNeighbor},

	OpWinTest: {"MPI_Win_test", ClassRMA, 0, attrRMA | attrPoll, 0},

	OpBufferDetach: {"MPI_Buffer_detach", ClassOther, 0, 0, 0},
}

// String returns the MPI name of the operation ("MPI_Send").
func (o Op) String() string {
	if o >= NumOps {
		return "op(" + strconv.Itoa(int(o)) + ")"
	}
	return ops[o].name
}

// Class returns how the analyzer treats the operation.
func (o Op) Class() Class {
	if o >= NumOps {
		return ClassOther
	}
	return ops[o].class
}

// Valid reports whether o is a defined operation code.
func (o Op) Valid() bool { return o > OpInvalid && o < NumOps }

// IsSub reports whether records of this op are sub-records (no timestamps).
func (o Op) IsSub() bool { return o.Class() == ClassSub }

// IsCollective reports whether the op is a collective over its communicator
// and so carries a collective sequence number.
func (o Op) IsCollective() bool {
	switch o.Class() {
	case ClassCollective, ClassIcollective, ClassCommCreate, ClassCommFree:
		return true
	}
	return false
}

// IsWorldBarrier reports whether the op's call is a barrier over
// MPI_COMM_WORLD though MPI does not say so: MPI_Init and MPI_Init_thread,
// whose record spans the logger's own clock synchronisation (an Allreduce
// and a ping-pong with rank 0 over every rank), besides the start-up of
// Open MPI and MPICH, which wait for every rank too. Its record carries
// no communicator or sequence number; the analysis takes it as the one
// instance of sequence number 0 on MPI_COMM_WORLD, whose collectives
// number from 1.
func (o Op) IsWorldBarrier() bool { return o < NumOps && ops[o].attr&attrWorldBarrier != 0 }

// IsPoll reports whether the op is a non-blocking test (MPI_Test,
// MPI_Testall, MPI_Testany, MPI_Testsome, MPI_Iprobe, MPI_Improbe,
// MPI_Parrived, MPI_Win_test), whose unproductive calls the logger
// coalesces: see Record.Polls.
func (o Op) IsPoll() bool { return o < NumOps && ops[o].attr&attrPoll != 0 }

// IsNonblockingCommCreate reports whether the op is a non-blocking
// communicator constructor (MPI_Comm_idup, MPI_Comm_idup_with_info): its
// record creates request Req (FlagNewReq) and carries the new
// communicator's index in Tag; the communicator is named after the parent
// and the call's Seq on it.
func (o Op) IsNonblockingCommCreate() bool { return o < NumOps && ops[o].attr&attrIdup != 0 }

// IsIO reports whether the op is an MPI-IO file operation (MPI_File_…):
// the critical path counts its time as I/O.
func (o Op) IsIO() bool { return o < NumOps && ops[o].attr&attrIO != 0 }

// PairCounts reports whether the op is a collective whose counts are per
// pair of members (MPI_Alltoallv, _w and their neighbourhood forms):
// the log keeps their sum, so a member may have needed only some others
// (Open MPI and MPICH exchange nothing with a peer of count 0).
func (o Op) PairCounts() bool { return o < NumOps && ops[o].attr&attrPairCounts != 0 }

// IsNeighbor reports whether the op is a neighbourhood collective
// (MPI_Neighbor_…, MPI_Ineighbor_… and the persistent MPI_Neighbor_…_init): a member needs only its
// in-neighbours in the communicator's topology (Comm.Sources), and its
// Bytes are what it sends to its out-neighbours, summed.
func (o Op) IsNeighbor() bool { return o.Flow() == FlowNeighbor }

// Flow is how the op moves data among a collective's members; FlowNone
// for an op that is not a collective.
func (o Op) Flow() Flow {
	if o >= NumOps {
		return FlowNone
	}
	return ops[o].flow
}

// IsRMA reports whether the op is a one-sided (RMA) call: window
// creation and free, MPI_Win_fence (collectives over the window's
// communicator), the transfers and the synchronisation calls.
func (o Op) IsRMA() bool { return o < NumOps && ops[o].attr&attrRMA != 0 }

// IsRMAFlush reports whether the op is MPI_Win_flush or one of its
// forms, which wait for the window's one-sided operations to complete.
func (o Op) IsRMAFlush() bool { return o < NumOps && ops[o].attr&attrRMAFlush != 0 }

// IsRMATransfer reports whether the op is a one-sided transfer (Put,
// Get, the accumulates, Fetch_and_op, Compare_and_swap and their request
// forms), whose Peer is its target.
func (o Op) IsRMATransfer() bool { return o < NumOps && ops[o].attr&attrRMATransfer != 0 }

// CommLetter is the mpisee-style letter of a communicator constructor, 0
// for other ops.
func (o Op) CommLetter() byte {
	if o >= NumOps {
		return 0
	}
	return ops[o].letter
}

// OpByName maps an MPI name ("MPI_Send") to its Op.
func OpByName(name string) (Op, bool) {
	for i := range ops {
		if ops[i].name == name {
			return Op(i), true
		}
	}
	return OpInvalid, false
}
