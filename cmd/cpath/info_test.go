package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// runCLI runs cpath in-process and returns its exit status, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	if s := errb.String(); strings.Contains(s, "goroutine ") || strings.Contains(s, "panic:") {
		t.Fatalf("cpath %v: stack trace on stderr:\n%s", args, s)
	}
	return code, out.String(), errb.String()
}

const (
	testIters = 10
	msgBytes  = 800
)

// haloRecords returns the records of a 1-D periodic halo exchange: Init,
// testIters × (Irecv, Irecv, Isend, Isend, Waitall with 4 ReqDone, Allreduce),
// Finalize. Every timed call takes 1 µs, computation between calls 10 µs.
func haloRecords(rank, size int) []trace.Record {
	left, right := int32((rank+size-1)%size), int32((rank+1)%size)
	t := int64(1_000_000)
	var recs []trace.Record
	var req uint32
	call := func(r trace.Record) {
		t += 10_000
		r.Start, r.End = t, t+1_000
		t = r.End
		if r.Root == 0 {
			r.Root = trace.PeerNone
		}
		recs = append(recs, r)
	}
	call(trace.Record{Op: trace.OpInit, Peer: trace.PeerNone, Comm: trace.CommNone})
	for i := 0; i < testIters; i++ {
		first := req + 1
		for _, p := range []struct {
			op   trace.Op
			peer int32
		}{{trace.OpIrecv, left}, {trace.OpIrecv, right}, {trace.OpIsend, right}, {trace.OpIsend, left}} {
			req++
			call(trace.Record{Op: p.op, Peer: p.peer, Tag: 7, Bytes: msgBytes, Req: req, Flags: trace.FlagNewReq})
		}
		call(trace.Record{Op: trace.OpWaitall, Peer: trace.PeerNone, Count: 4})
		for q, peer := range []int32{left, right, right, left} { // as posted above
			recs = append(recs, trace.Record{Op: trace.OpReqDone, Req: first + uint32(q), Peer: peer, Tag: 7, Bytes: msgBytes})
		}
		call(trace.Record{Op: trace.OpAllreduce, Peer: trace.PeerNone, Bytes: 8, Seq: uint32(i + 1)})
	}
	call(trace.Record{Op: trace.OpFinalize, Peer: trace.PeerNone, Comm: trace.CommNone})
	return recs
}

const (
	haloCalls   = 1 + testIters*6 + 1
	haloRecs    = haloCalls + testIters*4
	haloSent    = testIters * 2 * msgBytes
	defaultRun  = "run-42"
	defaultSize = 4
)

// logSpec describes one synthetic log file.
type logSpec struct {
	file    string // default rank-%06d.cplog
	rank    int
	size    int    // default defaultSize
	runID   string // default defaultRun
	version int    // format version in the preamble if not 0
	status  trace.EndStatus
	info    int32
	noClose bool  // no trailer: a killed rank
	cut     int   // bytes cut off the end of the file
	eager   int64 // btl_vader_eager_limit in the header; default 4096
	depth   int   // CPATH_CALLDEPTH: calls alternate between two call paths
}

func writeLog(t *testing.T, dir string, s logSpec) string {
	t.Helper()
	if s.size == 0 {
		s.size = defaultSize
	}
	if s.runID == "" {
		s.runID = defaultRun
	}
	if s.file == "" {
		s.file = fmt.Sprintf("rank-%06d.cplog", s.rank)
	}
	if s.status == 0 {
		s.status = trace.EndFinalized
	}
	if s.eager == 0 {
		s.eager = 4096
	}
	path := filepath.Join(dir, s.file)
	var buf bytes.Buffer
	h := &trace.Header{RunID: s.runID, Rank: s.rank, Size: s.size, Host: "node1", PID: 1000 + s.rank,
		Exe: "/opt/app/halo", StartUnixNs: 1_700_000_000_000_000_000, T0: 999_000, MPILibrary: "Open MPI v4.1.4",
		Logger: "cpathlog test",
		Clock: trace.Clock{Method: "allreduce+pingpong", AllreduceOffsetNs: int64(s.rank) * 1500,
			Init: trace.SyncPoint{LocalNs: 1_000_000, OffsetNs: int64(s.rank) * 1000, ErrNs: 250}},
		EagerLimits: []trace.ControlVar{{Name: "btl_vader_eager_limit", Value: s.eager}, {Name: "btl_self_eager_limit", Value: 1024}}}
	h.CallDepth = s.depth
	w, err := trace.NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	recs := haloRecords(s.rank, s.size)
	if s.depth > 0 {
		paths := []uint32{w.AddPath([]uint64{0x401000, 0x402000}[:s.depth]), w.AddPath([]uint64{0x401100, 0x402000}[:s.depth])}
		for i := range recs {
			if !recs[i].Op.IsSub() {
				recs[i].Path = paths[i%2]
			}
		}
	}
	// Two frames, split after a Waitall's sub-records, so that a cut leaves
	// the first intact.
	half := 1 + 6*(testIters/2)
	if err := w.WriteRecords(recs[:half+4*(testIters/2)]); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecords(recs[half+4*(testIters/2):]); err != nil {
		t.Fatal(err)
	}
	if !s.noClose {
		// 1 µs more offset after 1 s, measured ±250 ns then ±300 ns: the
		// least drift within both errors is (1700−1250) ns per s, +0.45 ppm.
		if err := w.WriteClockFinal(trace.SyncPoint{LocalNs: 1_001_000_000, OffsetNs: int64(s.rank)*1000 + 1000, ErrNs: 300}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(trace.Trailer{Status: s.status, Info: s.info}); err != nil {
			t.Fatal(err)
		}
	}
	b := buf.Bytes()
	if s.version != 0 {
		b[8] = byte(s.version)
	}
	b = b[:len(b)-s.cut]
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeRun(t *testing.T, dir string, size int) {
	for r := 0; r < size; r++ {
		writeLog(t, dir, logSpec{rank: r, size: size})
	}
}

func TestInfo(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(t *testing.T, dir string) // writes the logs into dir
		args     []string                       // before LOGDIR
		logdir   string                         // relative to dir's parent; default dir
		code     int
		out      []string // regexps stdout must match
		notOut   []string // regexps stdout must not match
		err      string   // regexp stderr must match (one line) when code != 0
		errEmpty bool
	}{
		{
			name:  "complete",
			setup: func(t *testing.T, dir string) { writeRun(t, dir, 4) },
			out: []string{
				`(?m)^run id: +run-42$`,
				`(?m)^ranks: +4 logs of 4 ranks$`,
				`(?m)^complete: +yes`,
				`(?m)^program: +/opt/app/halo$`,
				`(?m)^MPI: +Open MPI v4\.1\.4, thread level MPI_THREAD_SINGLE$`,
				// rank 2: 62 calls, 16000 B sent (15.6 KiB), 102 records, finalized
				`(?m)^ +2  node1  1002 +62  15\.6 KiB +102 +[\d.]+ (B|KiB) +[\d.]+ +62\.00 µs  672\.00 µs  finalized$`,
				`(?m)^total +248  62\.5 KiB +408 +[\d.]+ KiB +[\d.]+  248\.00 µs$`,
				`(?m)^MPI_Isend +80  80\.00 µs  62\.5 KiB$`,
				`(?m)^MPI_Allreduce +40  40\.00 µs +320 B$`,
				`(?m)^MPI_Init +4 `,
				`(?m)^method: allreduce\+pingpong$`,
				`(?m)^eager: +btl_vader_eager_limit=4096, btl_self_eager_limit=1024$`,
				`(?m)^ +1 +\+1\.50 µs +\+1\.00 µs  250 ns +\+2\.00 µs  300 ns  \+0\.450 ppm$`,
			},
			notOut: []string{`incomplete`, `\(request done\)`, `call paths`},
		},
		{
			name: "call paths",
			setup: func(t *testing.T, dir string) {
				for r := 0; r < 2; r++ {
					writeLog(t, dir, logSpec{rank: r, size: 2, depth: 2})
				}
			},
			out: []string{`(?m)^call paths: +up to 2 frames per call, 4 distinct paths in the logs$`},
		},
		{
			name: "eager limits that differ between ranks",
			setup: func(t *testing.T, dir string) {
				writeRun(t, dir, 3)
				writeLog(t, dir, logSpec{rank: 2, size: 3, eager: 32768})
			},
			out: []string{`(?m)^eager: +btl_vader_eager_limit=4096 \(2 ranks\), btl_self_eager_limit=1024, btl_vader_eager_limit=32768 \(1 rank\)$`},
		},
		{
			name: "truncated rank",
			setup: func(t *testing.T, dir string) {
				writeRun(t, dir, 4)
				writeLog(t, dir, logSpec{rank: 3, noClose: true, cut: 10})
			},
			out: []string{
				`(?m)^complete: +NO \(1 problem; see below\)$`,
				`(?m)^ +3  node1  1003 +31 .*  truncated$`, // the first frame survives: 31 calls
				`(?m)^  rank 3 \(rank-000003\.cplog\): truncated: log ends inside .* after 51 records$`,
			},
		},
		{
			name: "killed rank without trailer",
			setup: func(t *testing.T, dir string) {
				writeRun(t, dir, 2)
				writeLog(t, dir, logSpec{rank: 1, size: 2, noClose: true})
			},
			out: []string{
				`(?m)^ +1  node1  1001 +62 .*  no trailer$`,
				`(?m)^  rank 1 \(rank-000001\.cplog\) was killed before it could write a trailer \(SIGKILL or a node failure\)$`,
			},
		},
		{
			name: "aborted and signalled ranks",
			setup: func(t *testing.T, dir string) {
				writeLog(t, dir, logSpec{rank: 0, size: 3})
				writeLog(t, dir, logSpec{rank: 1, size: 3, status: trace.EndAborted, info: 3})
				writeLog(t, dir, logSpec{rank: 2, size: 3, status: trace.EndSignal, info: 11})
			},
			out: []string{
				`(?m)^complete: +NO \(2 problems; see below\)$`,
				`(?m)^ +1 .*  MPI_Abort$`,
				`rank 1 \(rank-000001\.cplog\) ended in MPI_Abort \(error code 3\)`,
				`rank 2 \(rank-000002\.cplog\) was killed by signal 11 \(segmentation fault\)`,
			},
		},
		{
			name: "missing rank",
			setup: func(t *testing.T, dir string) {
				for _, r := range []int{0, 1, 3} {
					writeLog(t, dir, logSpec{rank: r})
				}
			},
			code: 1,
			out:  []string{`(?m)^ranks: +3 logs of 4 ranks$`, `(?m)^  no log for rank 2$`},
			err:  `^cpath: \S+: rank 2 of 4 has no log \(no rank-000002\.cplog\)$`,
		},
		{
			name: "many missing ranks",
			setup: func(t *testing.T, dir string) {
				writeLog(t, dir, logSpec{rank: 2, size: 8})
				writeLog(t, dir, logSpec{rank: 6, size: 8})
			},
			code: 1,
			err:  `^cpath: \S+: 6 of 8 ranks have no log \(ranks 0-1, 3-5, 7\)$`,
		},
		{
			name: "foreign file",
			setup: func(t *testing.T, dir string) {
				writeRun(t, dir, 2)
				os.WriteFile(filepath.Join(dir, "rank-000001.cplog"), []byte("#!/bin/sh\necho hello\n"), 0o644)
			},
			code: 1, errEmpty: true,
			err: `^cpath: \S+/rank-000001\.cplog: not a cpath log: starts with "#!/bin/s", not "CPATHLOG"$`,
		},
		{
			name: "empty file",
			setup: func(t *testing.T, dir string) {
				writeRun(t, dir, 2)
				os.WriteFile(filepath.Join(dir, "rank-000000.cplog"), nil, 0o644)
			},
			code: 1, errEmpty: true,
			err: `^cpath: \S+/rank-000000\.cplog: empty file: 0 bytes$`,
		},
		{
			name: "version mismatch",
			setup: func(t *testing.T, dir string) {
				writeRun(t, dir, 2)
				writeLog(t, dir, logSpec{rank: 1, size: 2, version: 9})
			},
			code: 1, errEmpty: true,
			err: `^cpath: \S+/rank-000001\.cplog: unsupported log format version: format version 9, this cpath reads version ` + strconv.Itoa(trace.Version) + `$`,
		},
		{
			name: "corrupt block",
			setup: func(t *testing.T, dir string) {
				writeRun(t, dir, 2)
				p := filepath.Join(dir, "rank-000000.cplog")
				b, _ := os.ReadFile(p)
				b[len(b)-60] ^= 0xff // inside the last frame's data
				os.WriteFile(p, b, 0o644)
			},
			code: 1, errEmpty: true,
			err: `^cpath: \S+/rank-000000\.cplog: corrupt: `,
		},
		{
			name: "mixed run ids",
			setup: func(t *testing.T, dir string) {
				writeLog(t, dir, logSpec{rank: 0, size: 2})
				writeLog(t, dir, logSpec{rank: 1, size: 2, runID: "run-43"})
			},
			code: 1, errEmpty: true,
			err: `^cpath: \S+/rank-000001\.cplog: run id "run-43", but rank-000000\.cplog has run id "run-42": logs of two runs are mixed`,
		},
		{
			name: "different world sizes",
			setup: func(t *testing.T, dir string) {
				writeLog(t, dir, logSpec{rank: 0, size: 2})
				writeLog(t, dir, logSpec{rank: 1, size: 3})
			},
			code: 1, errEmpty: true,
			err: `^cpath: \S+/rank-000001\.cplog: world size 3, but rank-000000\.cplog has size 2$`,
		},
		{
			name: "duplicate rank",
			setup: func(t *testing.T, dir string) {
				writeRun(t, dir, 2)
				writeLog(t, dir, logSpec{rank: 1, size: 2, file: "zcopy.cplog"})
			},
			code: 1, errEmpty: true,
			err: `^cpath: \S+/zcopy\.cplog: rank 1 is also in rank-000001\.cplog$`,
		},
		{
			name: "renamed file",
			setup: func(t *testing.T, dir string) {
				writeLog(t, dir, logSpec{rank: 0, size: 2})
				writeLog(t, dir, logSpec{rank: 1, size: 2, file: "rank-000005.cplog"})
			},
			code: 1, errEmpty: true,
			err: `^cpath: \S+/rank-000005\.cplog: header says rank 1, file name says rank 5$`,
		},
		{
			name: "directory named like a log",
			setup: func(t *testing.T, dir string) {
				writeLog(t, dir, logSpec{rank: 0, size: 2})
				os.Mkdir(filepath.Join(dir, "rank-000001.cplog"), 0o755)
			},
			code: 1, errEmpty: true,
			err: `^cpath: \S+/rank-000001\.cplog: not a regular file$`,
		},
		{
			name:  "empty directory",
			setup: func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644) },
			code:  1, errEmpty: true,
			err: `^cpath: \S+: no cpath logs \(\*\.cplog\) in this directory$`,
		},
		{
			name:   "no such directory",
			setup:  func(t *testing.T, dir string) {},
			logdir: "nonexistent",
			code:   1, errEmpty: true,
			err: `^cpath: \S+/nonexistent: no such directory$`,
		},
		{
			name:   "file instead of directory",
			setup:  func(t *testing.T, dir string) { writeLog(t, dir, logSpec{rank: 0, size: 1}) },
			logdir: "logs/rank-000000.cplog",
			code:   1, errEmpty: true,
			err: `^cpath: \S+/rank-000000\.cplog: not a directory`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "logs")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, dir)
			logdir := dir
			if tc.logdir != "" {
				logdir = filepath.Join(base, tc.logdir)
			}
			code, out, errs := runCLI(t, append(append([]string{"info"}, tc.args...), logdir)...)
			t.Logf("exit %d\nstdout:\n%sstderr:\n%s", code, out, errs)
			if code != tc.code {
				t.Errorf("exit status %d, want %d; stderr: %s", code, tc.code, errs)
			}
			for _, re := range tc.out {
				if !regexp.MustCompile(re).MatchString(out) {
					t.Errorf("stdout does not match %s:\n%s", re, out)
				}
			}
			for _, re := range tc.notOut {
				if regexp.MustCompile(re).MatchString(out) {
					t.Errorf("stdout matches %s:\n%s", re, out)
				}
			}
			if tc.code == 0 {
				if errs != "" {
					t.Errorf("stderr: %s", errs)
				}
				return
			}
			if strings.Count(errs, "\n") != 1 || !regexp.MustCompile(tc.err).MatchString(strings.TrimSuffix(errs, "\n")) {
				t.Errorf("stderr %q, want one line matching %s", errs, tc.err)
			}
			if tc.errEmpty && out != "" {
				t.Errorf("stdout not empty on error:\n%s", out)
			}
		})
	}
}

func TestInfoJSON(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 3)
	writeLog(t, dir, logSpec{rank: 2, size: 3, noClose: true, cut: 10})
	code, out, errs := runCLI(t, "info", "--json", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s struct {
		RunID        string `json:"run_id"`
		Size         int    `json:"size"`
		Complete     bool   `json:"complete"`
		MissingRanks []int  `json:"missing_ranks"`
		Problems     []string
		Ranks        []struct {
			Rank      int     `json:"rank"`
			Calls     uint64  `json:"calls"`
			Records   uint64  `json:"records"`
			BytesSent uint64  `json:"bytes_sent"`
			FileBytes int64   `json:"file_bytes"`
			End       string  `json:"end"`
			Truncated string  `json:"truncated"`
			Complete  bool    `json:"complete"`
			DriftPPM  float64 `json:"drift_ppm"`
			Clock     struct {
				Init struct {
					OffsetNs int64 `json:"offset_ns"`
				} `json:"init"`
			} `json:"clock"`
		} `json:"ranks"`
		Totals struct {
			Calls uint64 `json:"calls"`
		} `json:"totals"`
		Ops []struct {
			Op    string `json:"op"`
			Calls uint64 `json:"calls"`
		} `json:"operations"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s.RunID != defaultRun || s.Size != 3 || s.Complete || len(s.MissingRanks) != 0 || len(s.Problems) != 1 {
		t.Errorf("set: %+v", s)
	}
	if len(s.Ranks) != 3 {
		t.Fatalf("%d ranks", len(s.Ranks))
	}
	r := s.Ranks[1]
	if r.Rank != 1 || r.Calls != haloCalls || r.Records != haloRecs || r.BytesSent != haloSent ||
		r.End != "finalized" || !r.Complete || r.FileBytes == 0 || r.Clock.Init.OffsetNs != 1000 || r.DriftPPM < 0.449 || r.DriftPPM > 0.451 {
		t.Errorf("rank 1: %+v", r)
	}
	if r := s.Ranks[2]; r.Complete || r.Truncated == "" || r.Calls != 31 {
		t.Errorf("rank 2: %+v", r)
	}
	if s.Totals.Calls != 2*haloCalls+31 {
		t.Errorf("total calls %d", s.Totals.Calls)
	}
	if len(s.Ops) == 0 || s.Ops[0].Op != "MPI_Isend" && s.Ops[0].Op != "MPI_Irecv" {
		t.Errorf("operations: %+v", s.Ops)
	}
}

func TestInfoUsage(t *testing.T) {
	code, out, errs := runCLI(t, "info")
	if code != 1 || out != "" || errs != "cpath: accepts 1 arg(s), received 0\n" {
		t.Errorf("info without LOGDIR: %d %q %q", code, out, errs)
	}
	code, _, errs = runCLI(t, "nosuchcommand")
	if code != 1 || errs != "cpath: \"nosuchcommand\" is neither a command nor a log directory (see cpath --help)\n" {
		t.Errorf("unknown command: %d %q", code, errs)
	}
}

func TestRankList(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{{[]int{2}, "2"}, {[]int{0, 1, 2}, "0-2"}, {[]int{0, 2, 3, 5, 7, 8, 9}, "0, 2-3, 5, 7-9"}} {
		if got := graph.RankList(tc.in); got != tc.want {
			t.Errorf("RankList(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
