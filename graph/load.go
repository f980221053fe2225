package graph

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cpath/cpath/internal/par"
	"github.com/cpath/cpath/trace"
)

// LogFiles lists the *.cplog files in dir, with a one-line error for a
// missing directory, a file given instead of one, or a directory without logs.
func LogFiles(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such directory", dir)
		}
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory (give the directory holding the *.cplog files)", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".cplog") {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no cpath logs (*.cplog) in this directory", dir)
	}
	sort.Strings(files)
	return files, nil
}

var rankFileName = regexp.MustCompile(`^rank-(\d+)\.cplog$`)

// CheckRun checks that the headers (of files, in the same order) come from
// one run: one run id, one world size, each rank once, file names that agree
// with the ranks inside. It returns the ranks of the run with no log.
func CheckRun(files []string, hs []*trace.Header) (missing []int, err error) {
	if len(hs) == 0 {
		return nil, errors.New("no logs")
	}
	first := hs[0]
	seen := map[int]string{}
	for i, h := range hs {
		f := files[i]
		if m := rankFileName.FindStringSubmatch(filepath.Base(f)); m != nil {
			if n, _ := strconv.Atoi(m[1]); n != h.Rank {
				return nil, fmt.Errorf("%s: header says rank %d, file name says rank %d", f, h.Rank, n)
			}
		}
		if h.RunID != first.RunID {
			return nil, fmt.Errorf("%s: run id %q, but %s has run id %q: logs of two runs are mixed (record each run into its own directory)",
				f, h.RunID, filepath.Base(files[0]), first.RunID)
		}
		if h.Size != first.Size {
			return nil, fmt.Errorf("%s: world size %d, but %s has size %d", f, h.Size, filepath.Base(files[0]), first.Size)
		}
		if o, dup := seen[h.Rank]; dup {
			return nil, fmt.Errorf("%s: rank %d is also in %s", f, h.Rank, filepath.Base(o))
		}
		seen[h.Rank] = f
	}
	for r := 0; r < first.Size; r++ {
		if _, ok := seen[r]; !ok {
			missing = append(missing, r)
		}
	}
	return missing, nil
}

// Run is one run's logs, checked from their headers; Build streams their
// records.
type Run struct {
	Dir     string
	Files   []string       // Files[r] is rank r's log
	Headers []trace.Header // Headers[r] is its header
	// Calls[r] is the number of calls its trailer counts, -1 for a log
	// that does not end with a checked trailer (trace.TailCalls): Build
	// counts those by reading them before it reads them all.
	Calls []int64
	// Notes say what an incomplete run lacks; analysis proceeds with what
	// there is. Build adds those it finds while reading the records (ranks
	// that did not finalize).
	Notes []string
	// Source, if set, reads the ranks of a run in another trace format
	// (Format); nil: Files are cpath logs.
	Source Source
	// callsOnly: ReadCalls reads the logs. No message end is kept, and a
	// log cut short (trace.ErrTruncated: a rank that died while writing
	// it) is read up to its last whole record, with a note, where it
	// would be an error: with nothing matched, the calls missing after
	// the cut leave nothing unmatched.
	callsOnly bool
}

// cutShort reports whether err is a log's cut that the run reads up to.
func (run *Run) cutShort(err error) bool { return run.callsOnly && errors.Is(err, trace.ErrTruncated) }

// calls is Calls[r], or -1 (not counted) for a Run made without them.
func (run *Run) calls(r int) int64 {
	if r < len(run.Calls) {
		return run.Calls[r]
	}
	return -1
}

// Load checks that dir holds the logs of one whole run, from their
// headers: a directory that is not one whole run (a missing rank, two runs
// mixed, a foreign, empty or version-mismatched file, a corrupt or cut
// header) is an error. The records are read by Build, which reports damage
// further in (a corrupt or cut frame) the same way. A path that a
// registered Format detects (an OTF2 archive) is read by it instead.
func Load(dir string) (*Run, error) { return load(dir, false) }

// LoadCalls is Load for ReadCalls: a rank whose log is missing is no
// error but a rank without calls, with a note, since nothing is matched
// that its calls would have had to match.
func LoadCalls(dir string) (*Run, error) { return load(dir, true) }

func load(dir string, allowMissing bool) (*Run, error) {
	if run, ok, err := foreign(dir); ok {
		return run, err
	}
	files, err := LogFiles(dir)
	if err != nil {
		return nil, err
	}
	hs := make([]*trace.Header, len(files))
	calls := make([]int64, len(files))
	errs := make([]error, len(files))
	par.Do(len(files), func(i int) { hs[i], calls[i], errs[i] = readHeader(files[i]) })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	missing, err := CheckRun(files, hs)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 && !allowMissing {
		return nil, fmt.Errorf("%s: no log for rank %s of %d (a rank whose log is missing cannot be analysed around)",
			dir, RankList(missing), hs[0].Size)
	}
	R := len(files) + len(missing)
	run := &Run{Dir: dir, Files: make([]string, R), Headers: make([]trace.Header, R), Calls: make([]int64, R)}
	for i, h := range hs {
		run.Files[h.Rank], run.Headers[h.Rank], run.Calls[h.Rank] = files[i], *h, calls[i]
	}
	for _, r := range missing {
		// No file: read as a rank that made no calls (readRank).
		run.Headers[r] = trace.Header{RunID: hs[0].RunID, Rank: r, Size: hs[0].Size}
	}
	if len(missing) > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("no log for rank %s of %d: the path runs on the other ranks; the calls it would hold, which may have bounded the run, are not seen",
			RankList(missing), hs[0].Size))
	}
	run.Notes = append(run.Notes, Oversubscribed(run.Headers)...)
	return run, nil
}

// Oversubscribed says, for each host that ran more ranks than it had CPUs
// online (as the logs' headers record them), that its ranks shared CPUs:
// their waits and transfers then hold time they were descheduled, which
// transfer efficiency and transfers=0 take for the network's.
func Oversubscribed(hs []trace.Header) []string {
	type host struct{ ranks, cpus int }
	by := map[string]*host{}
	var names []string
	for i := range hs {
		h := &hs[i]
		if h.HostCPUs <= 0 {
			continue // not recorded
		}
		x := by[h.Host]
		if x == nil {
			x = &host{}
			by[h.Host] = x
			names = append(names, h.Host)
		}
		x.ranks++
		x.cpus = max(x.cpus, h.HostCPUs)
	}
	slices.Sort(names)
	var notes []string
	for _, n := range names {
		if x := by[n]; x.ranks > x.cpus {
			notes = append(notes, fmt.Sprintf("host %s ran %d ranks on %d CPUs: they shared CPUs, so their waits and transfers hold time they were descheduled, which transfer efficiency and transfers=0 take for the network's", n, x.ranks, x.cpus))
		}
	}
	return notes
}

// openLog opens a log file and reads its preamble and header.
func openLog(path string, bufSize int) (*os.File, *trace.Reader, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	rd, err := trace.NewReader(bufio.NewReaderSize(f, bufSize), path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, rd, nil
}

// readHeader reads a log's header, and the number of calls its trailer
// counts (-1 for none: trace.TailCalls).
func readHeader(path string) (*trace.Header, int64, error) {
	f, rd, err := openLog(path, 4<<10)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	calls := int64(-1)
	if st, err := f.Stat(); err == nil {
		if n, ok := trace.TailCalls(f, st.Size()); ok {
			calls = int64(n)
		}
	}
	return rd.Header(), calls, nil
}
