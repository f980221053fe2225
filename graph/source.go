package graph

// The input seam: where a run's per-rank records come from. A directory
// of cpath logs is read by trace.Reader; a run recorded in another
// trace format is read by the Format registered for it (package otf2
// registers OTF2), chosen by what the path given is. Load, Build and
// ReadLogSet see only RankReaders, so that analyze, info and every
// output take either, as one process or as an MPI job (each analyzer
// rank opens only the ranks it owns).

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/cpath/cpath/trace"
)

// RankReader streams one rank's records, as trace.Reader does for a
// cpath log: Batch hands them out in the log's order (each timed record
// followed by its sub-records; a rank's threads' calls in the order they
// ended), io.EOF after the last; Incomplete then reports damage; Header
// and Trailer hold what the end of the stream adds (the clock measured
// at MPI_Finalize, modules, unwrapped calls, how the rank ended).
type RankReader interface {
	Header() *trace.Header
	Batch() ([]trace.Record, error)
	Incomplete() error
	Trailer() trace.Trailer
	Paths() [][]uint64
	// Skim reads the rest as Batch would and returns the number of calls
	// (timed records); fn, if not nil, sees the records of the
	// operations want selects.
	Skim(want func(trace.Op) bool, fn func(*trace.Record)) (calls int, err error)
	Close() error
}

// Source opens the ranks of a run that is not a directory of cpath logs
// (Run.Source). It must be safe to open several ranks at once.
type Source interface {
	OpenRank(rank int) (RankReader, error)
	// Size is the bytes rank's records take in the source, for
	// cpath info.
	Size(rank int) int64
}

// Format is a trace format other than cpath's logs.
type Format struct {
	Name string
	// Detect says whether path (a file or directory given where a log
	// directory goes) holds a run in this format, and the path that
	// names it (an OTF2 archive's anchor file for its directory).
	Detect func(path string) (string, bool)
	// Open reads the run's definitions: a Run with Files (a file of each
	// rank, named in errors and weighing the rank's share of an
	// analyzer job), Headers, Calls (-1 where not known before reading)
	// and Source.
	Open func(path string) (*Run, error)
}

var (
	formatsMu sync.Mutex
	formats   []Format
)

// RegisterFormat makes Load and ReadLogSet accept runs in f wherever
// they accept a log directory. A package registers its format in its
// init function.
func RegisterFormat(f Format) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	formats = append(formats, f)
}

// foreign returns the run at path if a registered format detects one
// there, and whether one did. A directory holding cpath logs is always
// read as cpath logs.
func foreign(path string) (*Run, bool, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if fs, _ := LogFiles(path); len(fs) > 0 {
			return nil, false, nil
		}
	}
	formatsMu.Lock()
	fs := append([]Format(nil), formats...)
	formatsMu.Unlock()
	for _, f := range fs {
		if p, ok := f.Detect(path); ok {
			run, err := f.Open(p)
			return run, true, err
		}
	}
	return nil, false, nil
}

// logRank is a cpath log open for reading.
type logRank struct {
	*trace.Reader
	f *os.File
}

func (l logRank) Close() error { return l.f.Close() }

// OpenRank opens rank r of run for reading, from its log file or its
// Source, and checks that its header says it is rank r.
func (run *Run) OpenRank(r int) (RankReader, error) {
	if run.Source != nil {
		return run.Source.OpenRank(r)
	}
	f, rd, err := openRankLog(run.Files[r], r)
	if err != nil {
		return nil, err
	}
	return logRank{rd, f}, nil
}

// openLogReader opens a cpath log for summarising (no rank expected).
func openLogReader(path string) (RankReader, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file", path)
	}
	rd, err := trace.NewReader(bufio.NewReaderSize(f, 1<<20), path)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return logRank{rd, f}, st.Size(), nil
}

// MergeNotMapped sums the ranks' counts of what their trace held that
// the data model has no place for (trace.Header.NotMapped), the most
// frequent first, then by name.
func MergeNotMapped(byRank [][]trace.NotMapped) []trace.NotMapped {
	var out []trace.NotMapped
	at := map[string]int{}
	for _, ns := range byRank {
		for _, n := range ns {
			i, ok := at[n.What]
			if !ok {
				i = len(out)
				at[n.What] = i
				out = append(out, trace.NotMapped{What: n.What})
			}
			out[i].Count += n.Count
		}
	}
	slices.SortFunc(out, func(a, b trace.NotMapped) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.What, b.What))
	})
	return out
}

// NotMappedNote says what was not taken: "not analysed (the trace's
// content cpath has no meaning for): METRIC events ×84, …", "" for
// nothing.
func NotMappedNote(ns []trace.NotMapped) string {
	if len(ns) == 0 {
		return ""
	}
	return listNote("not analysed (the trace's content cpath has no meaning for): ", len(ns), func(i int) string {
		return fmt.Sprintf("%s ×%d", ns[i].What, ns[i].Count)
	})
}
