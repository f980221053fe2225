package otf2

// event is one OTF2 event as the C side hands it over: the layout of
// cotf2.h's cp_ev (lib.go checks it), so that a batch of them is read
// in place. The converter (convert.go, events.go) sees only these, which
// tests and the fuzz target make up without the library.
type event struct {
	time             uint64
	a, b, c, d, e, f uint64
	kind             uint32
	amask            uint32
	av               [nAttr]uint64
}

// The kinds of event (cotf2.h CP_*).
const (
	evEnter = 1 + iota
	evLeave
	evMpiSend
	evMpiIsend
	evMpiIsendComplete
	evMpiIrecvRequest
	evMpiRecv
	evMpiIrecv
	evMpiRequestTest
	evMpiRequestCancelled
	evMpiCollBegin
	evMpiCollEnd
	evNbcRequest
	evNbcComplete
	evCommCreate
	evCommDestroy
	evRmaWinCreate
	evRmaWinDestroy
	evRmaCollBegin
	evRmaCollEnd
	evRmaGroupSync
	evRmaAcquireLock
	evRmaReleaseLock
	evRmaSync
	evRmaPut
	evRmaGet
	evRmaAtomic
	evRmaOpCompleteBlocking
	evRmaOpCompleteNonblocking
	evParamUint
	evMetric
	evProgramBegin
	nKinds
)

// The attributes an event may carry (cotf2.h CP_A_*): bit i of amask
// says av[i] holds attribute i.
const (
	aSeq = iota
	aFlags
	aPolls
	aReq
	aPeer
	aTag
	aBytes
	aRoot
	aComm
	aCritical
	aSCL
	aOffset
	nAttr
)

// The kinds of events the C side counts without handing them over
// (cotf2.h CP_SKIP_*).
const (
	skipBufferFlush = iota
	skipMeasurementOnOff
	skipMetric
	skipParameter
	skipProgramEnd
	skipThread
	skipOmp
	skipCallingContext
	skipIO
	skipRmaOther
	skipUnknown
	nSkip
)

// has says whether e carries attribute i.
func (e *event) has(i int) bool { return e.amask&(1<<i) != 0 }

// eventSource is one location's events, by the batch: the OTF2 library
// (cSource), or events made up by a test.
type eventSource interface {
	// next returns the next batch of events, how many events it read
	// (those it did not hand over too), and whether it is the last (a
	// batch may be empty).
	next() (evs []event, read uint64, last bool, err error)
	// skipped counts the events of each kind it did not hand over.
	skipped() [nSkip]uint64
	close()
}

// clockOffset is one of a location's clock offsets, in timer ticks.
type clockOffset struct {
	time   uint64
	offset int64
	stddev float64
}
