package graph

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

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

// Run is the logs of one run, indexed by rank.
type Run struct {
	Dir  string
	Logs []*trace.Log // Logs[r] is rank r's log
	// Notes say what an incomplete run lacks (ranks that did not finalize,
	// logs cut short); analysis proceeds with what there is.
	Notes []string
}

// Load reads every log in dir, in parallel. A directory that is not one
// whole run (a missing rank, two runs mixed, a foreign, corrupt, truncated
// or version-mismatched file) is an error; logs of ranks that crashed
// (whole frames, then no trailer or a signal's) are kept, with a note.
func Load(dir string) (*Run, error) {
	files, err := LogFiles(dir)
	if err != nil {
		return nil, err
	}
	logs := make([]*trace.Log, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(files)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				logs[i], errs[i] = readLog(files[i])
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, err
		}
		// A frame cut in the middle is damage, not a crash: the logger
		// writes whole frames, so a rank that died leaves whole frames.
		if logs[i].Damage != nil {
			return nil, logs[i].Damage
		}
	}
	hs := make([]*trace.Header, len(logs))
	for i, l := range logs {
		hs[i] = &l.Header
	}
	missing, err := CheckRun(files, hs)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: no log for rank %s of %d (a rank whose log is missing cannot be analysed around)",
			dir, rankList(missing), hs[0].Size)
	}
	run := &Run{Dir: dir, Logs: make([]*trace.Log, len(logs))}
	for _, l := range logs {
		run.Logs[l.Header.Rank] = l
	}
	for _, l := range run.Logs {
		switch {
		case l.Trailer.Status != trace.EndFinalized:
			run.Notes = append(run.Notes, fmt.Sprintf("%s: rank %d ended by %v; analysed up to its last record",
				filepath.Base(l.Path), l.Header.Rank, l.Trailer.Status))
		}
	}
	return run, nil
}

func readLog(path string) (*trace.Log, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return trace.ReadFile(path)
}

func rankList(rs []int) string {
	var b strings.Builder
	for i, r := range rs {
		if i == 8 {
			fmt.Fprintf(&b, " and %d more", len(rs)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(r))
	}
	return b.String()
}
