package graph

// Reading and summarising a directory of logs, for cpath info.

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cpath/cpath/internal/par"
	"github.com/cpath/cpath/trace"
)

// LogSet summarises the logs of one run.
type LogSet struct {
	Dir          string     `json:"dir"`
	RunID        string     `json:"run_id"`
	Size         int        `json:"size"` // MPI_COMM_WORLD size the logs claim
	Logs         int        `json:"logs"` // log files found
	Exe          []string   `json:"exe"`  // distinct executables
	MPILibrary   string     `json:"mpi_library"`
	Logger       []string   `json:"logger"` // distinct logger versions
	StartUnixNs  int64      `json:"start_unix_ns"`
	ThreadLevel  int        `json:"thread_level"`
	Complete     bool       `json:"complete"`
	MissingRanks []int      `json:"missing_ranks"`
	Problems     []string   `json:"problems"` // what makes the set incomplete
	Ranks        []*RankLog `json:"ranks"`
	Totals       Totals     `json:"totals"`
	Ops          []OpStats  `json:"operations"`
	// EagerLimits are the MPI's eager limits as the ranks read them
	// (trace.Header.EagerLimits), one entry per name and value.
	EagerLimits []EagerLimit `json:"eager_limits"`
	// CallDepth is the largest CPATH_CALLDEPTH of the ranks (0: no call
	// paths were recorded); CallPaths the distinct call paths over ranks.
	CallDepth int `json:"call_depth,omitempty"`
	CallPaths int `json:"call_paths,omitempty"`
	// UnwrappedCalls are the calls of MPI functions that block,
	// synchronise or communicate but that the logger does not record,
	// counted (trace.Header.Unwrapped); empty when the ranks made none.
	UnwrappedCalls []UnwrappedCalls `json:"unwrapped_calls"`
	// NotMapped is what a trace in another format held that cpath has
	// no place for, summed over ranks (trace.Header.NotMapped); empty
	// for cpath logs.
	NotMapped []trace.NotMapped `json:"not_mapped"`
}

// EagerLimit is one MPI eager-limit setting and how many ranks had it.
type EagerLimit struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
	Ranks int    `json:"ranks"`
}

// rank summarises one rank's log.
type RankLog struct {
	Rank          int         `json:"rank"`
	File          string      `json:"file"`
	Host          string      `json:"host"`
	PID           int         `json:"pid"`
	Exe           string      `json:"exe"`
	Calls         uint64      `json:"calls"` // MPI calls (a record of coalesced polls counts its calls)
	SubRecords    uint64      `json:"sub_records"`
	Records       uint64      `json:"records"`    // calls + sub-records
	BytesSent     uint64      `json:"bytes_sent"` // point-to-point payload sent
	CollBytes     uint64      `json:"collective_bytes"`
	IOBytes       uint64      `json:"io_bytes"`    // MPI-IO: bytes the program asked to read or write
	MPITimeNs     int64       `json:"mpi_time_ns"` // time inside MPI calls
	SpanNs        int64       `json:"span_ns"`     // first call's start to last call's end
	FileBytes     int64       `json:"file_bytes"`
	BytesPerCall  float64     `json:"file_bytes_per_call"`
	Communicators int         `json:"communicators"` // predefined and created
	End           string      `json:"end"`           // trace.EndStatus string
	EndInfo       int32       `json:"end_info"`
	Dropped       uint64      `json:"dropped"`
	Truncated     string      `json:"truncated,omitempty"` // what the reader found, for a damaged log
	Complete      bool        `json:"complete"`
	Clock         trace.Clock `json:"clock"`
	DriftPPM      *float64    `json:"drift_ppm,omitempty"`  // the clock model's drift (trace.Clock.Line)
	Threads       bool        `json:"threads,omitempty"`    // written by MPI_THREAD_MULTIPLE threads in blocks
	CallDepth     int         `json:"call_depth,omitempty"` // CPATH_CALLDEPTH
	CallPaths     int         `json:"call_paths,omitempty"` // distinct call paths in the log

	Status       trace.EndStatus `json:"-"`
	header       trace.Header
	ops          [trace.NumOps]OpStats
	trailerRecs  uint64
	trailerCalls uint64
}

type Totals struct {
	Calls      uint64 `json:"calls"`
	SubRecords uint64 `json:"sub_records"`
	Records    uint64 `json:"records"`
	BytesSent  uint64 `json:"bytes_sent"`
	CollBytes  uint64 `json:"collective_bytes"`
	IOBytes    uint64 `json:"io_bytes"`
	MPITimeNs  int64  `json:"mpi_time_ns"`
	FileBytes  int64  `json:"file_bytes"`
	// BytesPerCall is the file size per call on disk over all ranks.
	BytesPerCall float64 `json:"file_bytes_per_call"`
}

// OpStats counts the calls of one MPI operation.
type OpStats struct {
	Op     string `json:"op"`
	Calls  uint64 `json:"calls"`
	TimeNs int64  `json:"time_ns"`
	Bytes  uint64 `json:"bytes"` // the records' byte counts, as logged
}

// ReadLogSet reads every *.cplog file in dir. It fails on anything that makes
// the set unusable: no logs, a file that is not an intact log (foreign,
// corrupt, other format version), logs of two runs, two logs of one rank. A
// missing rank is reported in MissingRanks (the caller decides); logs cut
// short or from ranks that did not finalize are reported in Problems.
func ReadLogSet(dir string) (*LogSet, error) {
	run, isForeign, err := foreign(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	open := func(i int) (RankReader, int64, error) { return openLogReader(files[i]) }
	if isForeign {
		files = run.Files
		open = func(r int) (RankReader, int64, error) {
			rd, err := run.Source.OpenRank(r)
			return rd, run.Source.Size(r), err
		}
	} else if files, err = LogFiles(dir); err != nil {
		return nil, err
	}

	ranks := make([]*RankLog, len(files))
	errs := make([]error, len(files))
	par.Do(len(files), func(i int) {
		rd, size, err := open(i)
		if err != nil {
			errs[i] = err
			return
		}
		defer rd.Close()
		ranks[i], errs[i] = summarizeRank(files[i], rd, size)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}

	s := &LogSet{Dir: dir, Logs: len(files), MissingRanks: []int{}, Problems: []string{}}
	hs := make([]*trace.Header, len(ranks))
	for i, r := range ranks {
		hs[i] = &r.header
	}
	missing, err := CheckRun(files, hs)
	if err != nil {
		return nil, err
	}
	if missing != nil {
		s.MissingRanks = missing
	}
	s.RunID, s.Size = ranks[0].header.RunID, ranks[0].header.Size
	sort.Slice(ranks, func(i, j int) bool { return ranks[i].Rank < ranks[j].Rank })
	s.Ranks = ranks

	var ops [trace.NumOps]OpStats
	exes, loggers := map[string]bool{}, map[string]bool{}
	eager := map[trace.ControlVar]int{} // index in s.EagerLimits
	s.EagerLimits = []EagerLimit{}
	for _, r := range ranks {
		h := &r.header
		for _, v := range h.EagerLimits {
			i, ok := eager[v]
			if !ok {
				i = len(s.EagerLimits)
				eager[v] = i
				s.EagerLimits = append(s.EagerLimits, EagerLimit{Name: v.Name, Value: v.Value})
			}
			s.EagerLimits[i].Ranks++
		}
		if !exes[h.Exe] {
			exes[h.Exe] = true
			s.Exe = append(s.Exe, h.Exe)
		}
		if !loggers[h.Logger] {
			loggers[h.Logger] = true
			s.Logger = append(s.Logger, h.Logger)
		}
		if s.MPILibrary == "" {
			// MPI_Get_library_version may count the terminating NUL.
			s.MPILibrary = strings.TrimRight(h.MPILibrary, "\x00 \n")
			s.ThreadLevel, s.StartUnixNs = h.ThreadLevel, h.StartUnixNs
		}
		if h.Rank == 0 {
			s.StartUnixNs = h.StartUnixNs
		}
		s.CallDepth = max(s.CallDepth, r.CallDepth)
		s.CallPaths += r.CallPaths
		t := &s.Totals
		t.Calls += r.Calls
		t.SubRecords += r.SubRecords
		t.Records += r.Records
		t.BytesSent += r.BytesSent
		t.CollBytes += r.CollBytes
		t.IOBytes += r.IOBytes
		t.MPITimeNs += r.MPITimeNs
		t.FileBytes += r.FileBytes
		for i := range r.ops {
			ops[i].Calls += r.ops[i].Calls
			ops[i].TimeNs += r.ops[i].TimeNs
			ops[i].Bytes += r.ops[i].Bytes
		}
		s.Problems = append(s.Problems, r.problems()...)
	}
	if s.Totals.Calls > 0 {
		s.Totals.BytesPerCall = float64(s.Totals.FileBytes) / float64(s.Totals.Calls)
	}
	s.Ops = []OpStats{}
	for i := range ops {
		if ops[i].Calls > 0 {
			ops[i].Op = trace.Op(i).String()
			s.Ops = append(s.Ops, ops[i])
		}
	}
	sort.SliceStable(s.Ops, func(i, j int) bool { return s.Ops[i].Calls > s.Ops[j].Calls })
	var uw [][]trace.UnwrappedCall // by rank
	for _, r := range ranks {
		if r.Rank >= 0 && len(r.header.Unwrapped) > 0 {
			uw = append(uw, make([][]trace.UnwrappedCall, max(0, r.Rank+1-len(uw)))...)
			uw[r.Rank] = r.header.Unwrapped
		}
	}
	if s.UnwrappedCalls = MergeUnwrapped(uw); s.UnwrappedCalls == nil {
		s.UnwrappedCalls = []UnwrappedCalls{}
	}
	nm := make([][]trace.NotMapped, len(ranks))
	for i, r := range ranks {
		nm[i] = r.header.NotMapped
	}
	if s.NotMapped = MergeNotMapped(nm); s.NotMapped == nil {
		s.NotMapped = []trace.NotMapped{}
	}
	s.Complete = len(s.MissingRanks) == 0 && len(s.Problems) == 0
	return s, nil
}

// missingError is the error for the ranks that have no log.
func (s *LogSet) MissingError() error {
	m := s.MissingRanks
	if len(m) == 0 {
		return nil
	}
	if len(m) == 1 {
		return fmt.Errorf("%s: rank %d of %d has no log (no rank-%06d.cplog)", s.Dir, m[0], s.Size, m[0])
	}
	return fmt.Errorf("%s: %d of %d ranks have no log (ranks %s)", s.Dir, len(m), s.Size, RankList(m))
}

// RankList prints ranks compactly: "0-3, 7, 9-10".
func RankList(rs []int) string {
	var b strings.Builder
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(rs[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(rs[j]))
		}
		i = j + 1
	}
	return b.String()
}

// problems says what keeps this rank's log from being complete.
func (r *RankLog) problems() []string {
	var p []string
	name := filepath.Base(r.File)
	if r.Truncated != "" {
		p = append(p, fmt.Sprintf("rank %d (%s): truncated: %s", r.Rank, name, r.Truncated))
	}
	switch {
	case r.Status == trace.EndFinalized:
	case r.Status == trace.EndMissing && r.Truncated != "": // said above
	default:
		p = append(p, fmt.Sprintf("rank %d (%s) %s", r.Rank, name, trace.Trailer{Status: r.Status, Info: r.EndInfo}.Ending()))
	}
	if r.Dropped > 0 {
		p = append(p, fmt.Sprintf("rank %d (%s): the logger dropped %d records", r.Rank, name, r.Dropped))
	}
	// Only a finalized rank's trailer counts its records (the logger's
	// signal path cannot and writes 0).
	if r.Status == trace.EndFinalized && r.Truncated == "" && r.trailerRecs != r.Records {
		p = append(p, fmt.Sprintf("rank %d (%s): the trailer counts %d records, the log holds %d", r.Rank, name, r.trailerRecs, r.Records))
	}
	// The count of calls (records but sub-records) places them unread:
	// the analyzer refuses a log whose trailer miscounts them.
	if r.Status == trace.EndFinalized && r.Truncated == "" && r.trailerCalls != r.Records-r.SubRecords {
		p = append(p, fmt.Sprintf("rank %d (%s): the trailer counts %d calls, the log holds %d", r.Rank, name, r.trailerCalls, r.Records-r.SubRecords))
	}
	return p
}

// summarizeRank streams one log (path, size bytes) and summarises it;
// memory does not grow with the log's length.
func summarizeRank(path string, rd RankReader, size int64) (*RankLog, error) {
	r := &RankLog{File: path, FileBytes: size, Communicators: 2} // MPI_COMM_WORLD, MPI_COMM_SELF
	if n := len(rd.Header().Comms); n > 0 {
		r.Communicators = n // defined up front
	}
	var (
		buf      []trace.Record
		pending  uint32                // sub-records still owed to the last call
		persist  = map[uint32]uint64{} // persistent send requests: bytes per start
		first    int64
		last     int64
		haveTime bool
		damage   error
	)
	sent := func(peer int32, b uint64) {
		if peer != trace.PeerProcNull {
			r.BytesSent += b
		}
	}
	for {
		var rerr error
		buf, rerr = rd.Batch()
		for i := range buf {
			rec := &buf[i]
			r.Records++
			if rec.Op.IsSub() {
				r.SubRecords++
				pending--
				if rec.Op == trace.OpReqStart {
					r.BytesSent += persist[rec.Req]
				}
				continue
			}
			pending = rec.Count
			r.Calls += rec.Polls() // a coalesced run of unproductive polls is that many calls
			d := rec.End - rec.Start
			r.MPITimeNs += d
			if !haveTime || rec.Start < first {
				first = rec.Start
			}
			if !haveTime || rec.End > last {
				last = rec.End
			}
			haveTime = true
			o := &r.ops[rec.Op]
			o.Calls += rec.Polls()
			o.TimeNs += d
			o.Bytes += rec.Bytes
			switch cls := rec.Op.Class(); {
			case rec.Op.IsIO():
				r.IOBytes += rec.Bytes // collective file operations are not collectives' buffers
			case rec.Op.IsRMA():
				// A window's size and one-sided transfers are neither
				// messages nor collectives' buffers: the per-op table has them.
			case cls == trace.ClassSend, cls == trace.ClassSendRecv, cls == trace.ClassIsend:
				sent(rec.Peer, rec.Bytes)
			case cls == trace.ClassSendInit:
				if rec.Req != 0 && rec.Peer != trace.PeerProcNull {
					persist[rec.Req] = rec.Bytes
				}
			case cls == trace.ClassStart:
				if rec.Count == 0 && rec.Req != 0 {
					r.BytesSent += persist[rec.Req]
				}
			case cls == trace.ClassRequestFree:
				delete(persist, rec.Req)
			case cls == trace.ClassCollective, cls == trace.ClassIcollective:
				r.CollBytes += rec.Bytes
			case cls == trace.ClassCommCreate:
				if rec.Req != 0 {
					r.Communicators++
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if !errors.Is(rerr, trace.ErrTruncated) {
				return nil, rerr
			}
			damage = rerr
			break
		}
	}
	if damage == nil && pending != 0 {
		damage = &trace.Error{File: path, Err: trace.ErrTruncated, Detail: fmt.Sprintf("log ends %d sub-records short", pending)}
	}
	if damage != nil {
		var te *trace.Error
		if errors.As(damage, &te) && te.Detail != "" {
			r.Truncated = te.Detail
		} else {
			r.Truncated = damage.Error()
		}
	}
	r.header = *rd.Header()
	h := &r.header
	tr := rd.Trailer()
	r.Rank, r.Host, r.PID, r.Exe = h.Rank, h.Host, h.PID, h.Exe
	r.Status, r.End, r.EndInfo, r.Dropped, r.trailerRecs, r.trailerCalls = tr.Status, tr.Status.String(), tr.Info, tr.Dropped, tr.Records, tr.Calls
	r.Complete = damage == nil && tr.Status == trace.EndFinalized && tr.Dropped == 0
	r.Clock = h.Clock
	r.Threads, r.CallDepth, r.CallPaths = h.Threads, h.CallDepth, len(rd.Paths())-1
	if fp := h.Clock.Final; fp != nil && fp.LocalNs != h.Clock.Init.LocalNs {
		d := h.Clock.Line().Slope * 1e6
		r.DriftPPM = &d
	}
	if haveTime {
		r.SpanNs = last - first
	}
	if r.Calls > 0 {
		r.BytesPerCall = float64(r.FileBytes) / float64(r.Calls)
	}
	return r, nil
}
