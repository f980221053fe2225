package trace

import "math"

// Version is the log format version this package writes. The reader accepts
// exactly this version and rejects others with ErrVersion. Version 6: the
// trailer counts the calls too, so that the analyzer can place a finalized
// log's calls before it reads them (TailCalls); 5: the threads of an MPI_THREAD_MULTIPLE program fill regions, blocks claimed
// ahead whose unused rest is zero, and the reader puts their calls in the
// order they ended; 4 had a block per call, claimed as it ended, and call
// paths; 3 was one stream of items coded in C into a mapped file, 2 main's
// LZ4 format with coalesced polls (issue 14), 1 LZ4 frames.
const Version = 6

// Magic opens every cpath log file.
const Magic = "CPATHLOG"

// Header describes one rank's log. It is stored as JSON right after the
// preamble so that it can grow without a format change.
type Header struct {
	Version int    `json:"version"`
	RunID   string `json:"run_id"` // the same for every rank of one run (chosen by rank 0)
	Rank    int    `json:"rank"`   // rank in MPI_COMM_WORLD
	Size    int    `json:"size"`   // size of MPI_COMM_WORLD
	Host    string `json:"host"`
	PID     int    `json:"pid"`
	// CPUs is how many CPUs the process could run on (its affinity at
	// start), HostCPUs how many the host had online: ranks of one host
	// more than its CPUs shared them. 0: not recorded (older loggers).
	CPUs        int    `json:"cpus,omitempty"`
	HostCPUs    int    `json:"host_cpus,omitempty"`
	Exe         string `json:"exe"`          // executable path
	LoadAddress uint64 `json:"load_address"` // where the executable is mapped, to symbolize call sites
	StartUnixNs int64  `json:"start_unix_ns"`
	T0          int64  `json:"t0_ns"`        // local clock at logger start; the first record's start is delta-coded against it
	ThreadLevel int    `json:"thread_level"` // MPI thread support provided
	MPILibrary  string `json:"mpi_library"`
	Logger      string `json:"logger"` // logger version
	Clock       Clock  `json:"clock"`
	// Ticks, when set, says that record times in the stream are clock ticks
	// (the TSC) and how they map to ns; the reader applies it, so
	// Record.Start and End are always ns. Absent: the stream holds ns.
	Ticks *Ticks `json:"ticks,omitempty"`
	// Modules are the objects loaded in the process at MPI_Init (the
	// executable first); modules loaded later come in module chunks, which
	// the reader appends here.
	Modules []Module `json:"modules,omitempty"`
	// EagerLimits are the MPI's control variables (Open MPI's MCA
	// variables, MPI_T cvars) that bound the size of a send it may
	// complete before the receiver takes part, with the values this run
	// used (environment overrides included).
	// The logger reads them at MPI_Finalize and writes them in a
	// ControlVars chunk, which the reader puts here (logs of loggers
	// before that have them in the header itself, read at MPI_Init).
	EagerLimits []ControlVar `json:"eager_limits,omitempty"`
	// Threads says that the body was written by several threads at once
	// (MPI_THREAD_MULTIPLE): each call's items are in a block of its
	// thread's stream, and a zero byte followed by a length is a block
	// that was not committed (its thread died in it), to be skipped.
	Threads bool `json:"threads,omitempty"`
	// CallDepth is CPATH_CALLDEPTH: up to this many return addresses
	// above the call site were logged with each call (Record.Path). 0:
	// no call paths.
	CallDepth int `json:"call_depth,omitempty"`
	// Unwrapped are the calls of MPI functions that block, synchronise or
	// communicate but that the logger does not record: how often the rank
	// called each and its time in them. Not written in the header: the
	// reader puts the Unwrapped chunk here, at the end of the log.
	Unwrapped []UnwrappedCall `json:"unwrapped,omitempty"`
	// Comms, when set, is the rank's communicator table as it stands
	// before any record: a run recorded in another trace format defines
	// its communicators up front (package otf2), where a cpath log's
	// constructor records build them (NewCommBuilder starts from it).
	Comms []Comm `json:"comms,omitempty"`
	// NotMapped counts what a run recorded in another trace format held
	// that the data model has no place for (package otf2: the events
	// cpath has no meaning for, by kind), as its reader found them; a
	// cpath log has none.
	NotMapped []NotMapped `json:"not_mapped,omitempty"`
}

// NotMapped is one kind of thing a trace in another format held that
// cpath did not take, and how many there were.
type NotMapped struct {
	What  string `json:"what"`
	Count uint64 `json:"count"`
}

// UnwrappedCall is one MPI function the logger does not record, counted:
// the rank's calls of it and the time it spent in them.
type UnwrappedCall struct {
	Name  string `json:"name"` // "MPI_Comm_set_info"
	Calls uint64 `json:"calls"`
	Ns    int64  `json:"ns"`
}

// ControlVar is one MPI control variable (MPI_T cvar) and its value.
type ControlVar struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

// Ticks is the first calibration point of a log whose times are ticks:
// tick Tick was local time Ns, and NsPerTick the rate measured at MPI_Init.
// Later calibration points in the stream refine the rate.
type Ticks struct {
	Tick      int64   `json:"tick"`
	Ns        int64   `json:"ns"`
	NsPerTick float64 `json:"ns_per_tick"`
}

// Module is one object (executable or shared library) mapped into a
// logging process.
type Module struct {
	Path    string `json:"path"`
	Base    uint64 `json:"base"`     // load address: file offsets (ELF vaddrs) are relative to it
	Start   uint64 `json:"start"`    // lowest address of its loaded segments
	End     uint64 `json:"end"`      // end of its highest loaded segment
	BuildID string `json:"build_id"` // GNU build-id in hex, "" if it has none
	// Funcs, when set, names the module's offsets itself: offset i is
	// Funcs[i]. Such a module has no file behind it: a trace in another
	// format names its call sites by its regions (package otf2), and
	// trace/symbol reads them from here.
	Funcs []Func `json:"funcs,omitempty"`
}

// Func names one offset of a module without a file (Module.Funcs): the
// function, and the source line where known.
type Func struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Offset is where in the function the call site is, for one known
	// without its source line: it is named function+0xoffset, as a
	// symbol table names it.
	Offset uint64 `json:"offset,omitempty"`
	// Module, for a call site no symbol names, is the module it is in
	// (Name is empty; Offset is its offset in the module): it is named
	// module+0xoffset.
	Module string `json:"module,omitempty"`
}

// Contains reports whether addr lies within the module's loaded segments.
func (m *Module) Contains(addr uint64) bool { return addr >= m.Start && addr < m.End }

// ModuleOf returns the module holding addr (a call site) and addr's offset
// in it (addr − Base: the ELF virtual address, as in the module's symbol
// table and DWARF), or nil if no known module holds it.
func (h *Header) ModuleOf(addr uint64) (m *Module, offset uint64) {
	return ModuleOf(h.Modules, addr)
}

// ModuleOf returns the module of mods holding addr and addr's offset in
// it, or nil: Header.ModuleOf over a module list kept apart from its
// header (the analyzer's, by rank).
func ModuleOf(mods []Module, addr uint64) (m *Module, offset uint64) {
	for i := range mods {
		if mods[i].Contains(addr) {
			return &mods[i], addr - mods[i].Base
		}
	}
	return nil, 0
}

// Clock holds the clock-synchronisation parameters of a rank. The analyzer
// maps a local time t to the global timeline with Global. Final comes from
// a chunk written at MPI_Finalize and is absent in a log from a crashed run.
type Clock struct {
	Method string `json:"method"`
	// AllreduceOffsetNs is the paper's offset: max over ranks of the clock
	// read after a barrier, minus the local read.
	AllreduceOffsetNs int64      `json:"allreduce_offset_ns"`
	Init              SyncPoint  `json:"init"`
	Final             *SyncPoint `json:"final,omitempty"`
	// Injected is set only when the test-only CPATH_TEST_CLOCK_SKEW variable
	// made the logger distort its own clock; it lets tests check the sync.
	Injected *Skew `json:"injected,omitempty"`
}

// SyncPoint is one offset measurement: at local time LocalNs, the global
// clock (rank 0's) read LocalNs+OffsetNs, within ±ErrNs.
type SyncPoint struct {
	LocalNs  int64 `json:"local_ns"`
	OffsetNs int64 `json:"offset_ns"`
	ErrNs    int64 `json:"err_ns"`
}

// Skew is an injected clock distortion:
// local = true + OffsetNs + (true-BaseNs)·DriftPPM/1e6.
type Skew struct {
	OffsetNs int64   `json:"offset_ns"`
	DriftPPM float64 `json:"drift_ppm"`
	BaseNs   int64   `json:"base_ns"`
}

// ClockLine is a rank's clock model: the offset to add to local time t is
// OffsetNs + Slope·(t − BaseNs).
type ClockLine struct {
	BaseNs   int64
	OffsetNs int64
	Slope    float64 // drift, ns per ns
}

// Offset returns the offset to add to local time t.
func (l ClockLine) Offset(t int64) int64 {
	if l.Slope == 0 {
		return l.OffsetNs
	}
	return l.OffsetNs + int64(math.Round(l.Slope*float64(t-l.BaseNs)))
}

// Line returns the clock model of the sync points: the init offset alone,
// or, with a final one, the line of least drift that passes within both
// points' errors. A sync point says the true offset lies within ±ErrNs
// (half the best round trip), so a line through the two midpoints would
// turn the error of a point measured under load (milliseconds, where the
// other is good to a microsecond) into a drift of thousands of ppm. When
// the two intervals overlap no drift is shown and the offset is the
// precision-weighted mean, kept inside both; when they do not, the line
// joins their nearest ends. Either way every time is within the larger of
// the two errors of the truth, as a clock whose drift is constant must be.
func (c *Clock) Line() ClockLine {
	if c.Final == nil || c.Final.LocalNs == c.Init.LocalNs {
		return ClockLine{BaseNs: c.Init.LocalNs, OffsetNs: c.Init.OffsetNs}
	}
	i, f := c.Init, *c.Final
	if f.LocalNs < i.LocalNs {
		i, f = f, i
	}
	ei, ef := max(i.ErrNs, 0), max(f.ErrNs, 0)
	loI, hiI, loF, hiF := i.OffsetNs-ei, i.OffsetNs+ei, f.OffsetNs-ef, f.OffsetNs+ef
	var from, to int64 // the offsets at i.LocalNs and f.LocalNs
	switch {
	case hiI < loF:
		from, to = hiI, loF
	case hiF < loI:
		from, to = loI, hiF
	default:
		lo, hi := max(loI, loF), min(hiI, hiF)
		var o int64
		switch {
		case ei == 0:
			o = i.OffsetNs
		case ef == 0:
			o = f.OffsetNs
		default:
			wi, wf := 1/(float64(ei)*float64(ei)), 1/(float64(ef)*float64(ef))
			o = int64(math.Round((wi*float64(i.OffsetNs) + wf*float64(f.OffsetNs)) / (wi + wf)))
		}
		return ClockLine{BaseNs: i.LocalNs, OffsetNs: min(max(o, lo), hi)}
	}
	return ClockLine{BaseNs: i.LocalNs, OffsetNs: from, Slope: float64(to-from) / float64(f.LocalNs-i.LocalNs)}
}

// Offset returns the offset to add to local time t (see Line).
func (c *Clock) Offset(t int64) int64 { return c.Line().Offset(t) }

// Global maps local time t to the synchronised global timeline.
func (c *Clock) Global(t int64) int64 { return t + c.Offset(t) }
