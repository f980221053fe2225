// Command logger is libcpathlog.so, the preloaded PMPI logger (build with
// -buildmode=c-shared -tags mpi). It owns the wrappers (generated C, see
// internal/gen), the record buffer and the file writer.
//
// The per-call path is C only: a wrapper reads the TSC, calls PMPI, reads
// the TSC again, builds the call's records and codes them (code.h, inline;
// encode.c) into a shared mapping of the log file. Go runs at MPI_Init (cpathGoInit: clock
// synchronisation, the log header, the modules), when a call site falls in
// a module the log does not name yet (cpathGoModules), and at the end
// (cpathGoFinish: clock synchronisation again; C writes the trailer). A
// rank that dies by a signal or exits without MPI_Finalize ends its log
// from C (runtime.c, encode.c).
package main

/*
#cgo CFLAGS: -O2 -Wall -Wno-unused-function
#cgo LDFLAGS: -ldl -lgcc_s
#include <stdlib.h>
#include "cpathlog.h"

#include "encode.h"
#include "modules.h"
#include "mpit.h"
#include "world.h"
extern int64_t cp_skew_off, cp_skew_base;
extern double cp_skew_ppm;
extern int64_t cp_setup_tick, cp_setup_ns;
extern int cp_calldepth;
uint64_t cp_load_address(void);

static int64_t cp_go_now_ticks(void) { return cp_now(); }
static int64_t cp_go_mono(void) { return cp_mono_ns(); }
static int cp_go_use_tsc(void) { return cp_use_tsc; }
static uint64_t *cp_go_pend(void) { return cp_mods_pend; }
static void cp_go_libversion(char *buf, int *len) { PMPI_Get_library_version(buf, len); }
static int cp_go_spawned(void) {
	MPI_Comm p = MPI_COMM_NULL;
	PMPI_Comm_get_parent(&p);
	return p != MPI_COMM_NULL;
}
*/
import "C"

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/cpath/cpath/clocksync"
	"github.com/cpath/cpath/trace"
)

//go:generate go run ./internal/gen

// Version of the logger, written into every header.
const Version = "cpath-logger 0.1"

// DefaultDir is where logs go when CPATH_DIR is not set.
const DefaultDir = "cpath-logs"

// pingPongRounds trades init time for accuracy: the best of 16 round trips
// is within a microsecond on shared memory (clocksync adds rounds, up to
// 8 times as many, while the best is worse than clocksync.GoodErrNs).
const pingPongRounds = 16

type state struct {
	f      *os.File
	comm   *worldComm
	skew   trace.Skew
	useTSC bool
	hdr    trace.Header
	mods   []trace.Module     // modules loaded
	logged map[[2]uint64]bool // modules the log names, by address range
	method string             // how the init sync was measured: every rank knows it, logging or not
}

var st state

func main() {}

// localNow is this rank's local clock: CLOCK_MONOTONIC, distorted only when
// a test asked for it.
func localNow() int64 { return st.applySkew(int64(C.cp_go_mono())) }

func (s *state) applySkew(ns int64) int64 {
	if s.skew.OffsetNs == 0 && s.skew.DriftPPM == 0 {
		return ns
	}
	return ns + s.skew.OffsetNs + int64(float64(ns-s.skew.BaseNs)*s.skew.DriftPPM/1e6)
}

// parseSkew reads CPATH_TEST_CLOCK_SKEW="OFFSET_NS:DRIFT_PPM": rank r shifts
// its clock by r·OFFSET and makes it run r·DRIFT ppm fast.
func parseSkew(v string, rank int, base int64) (trace.Skew, error) {
	if v == "" {
		return trace.Skew{}, nil
	}
	a, b, _ := strings.Cut(v, ":")
	off, err := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	if err != nil {
		return trace.Skew{}, fmt.Errorf("CPATH_TEST_CLOCK_SKEW=%q: offset: %v", v, err)
	}
	var ppm float64
	if b != "" {
		if ppm, err = strconv.ParseFloat(strings.TrimSpace(b), 64); err != nil {
			return trace.Skew{}, fmt.Errorf("CPATH_TEST_CLOCK_SKEW=%q: drift: %v", v, err)
		}
	}
	if off == 0 && ppm == 0 {
		return trace.Skew{}, nil
	}
	return trace.Skew{OffsetNs: off * int64(rank), DriftPPM: ppm * float64(rank), BaseNs: base}, nil
}

// worldComm is MPI_COMM_WORLD for clocksync.Comm, through PMPI (world.c):
// the logger's own calls are not logged, and it needs no Go MPI binding,
// so that one source builds against Open MPI and MPICH alike (see
// mpi_openmpi.go, mpi_mpich.go).
type worldComm struct{ rank, size int }

func newWorldComm() (*worldComm, error) {
	var rank, size C.int
	if rc := C.cp_w_rank_size(&rank, &size); rc != 0 {
		return nil, fmt.Errorf("MPI error %d", int(rc))
	}
	return &worldComm{int(rank), int(size)}, nil
}

func mpiErr(rc C.int) error {
	if rc != 0 {
		return fmt.Errorf("MPI error %d", int(rc))
	}
	return nil
}

func (w worldComm) Rank() int      { return w.rank }
func (w worldComm) Size() int      { return w.size }
func (w worldComm) Barrier() error { return mpiErr(C.cp_w_barrier()) }
func (w worldComm) AllreduceMax(v int64) (int64, error) {
	var out C.int64_t
	err := mpiErr(C.cp_w_allreduce_max(C.int64_t(v), &out))
	return int64(out), err
}
func (w worldComm) Bcast(root int, v []int64) error {
	return mpiErr(C.cp_w_bcast((*C.int64_t)(unsafe.Pointer(&v[0])), C.int(len(v)), C.int(root)))
}
func (w worldComm) Send(to, tag int, v []int64) error {
	return mpiErr(C.cp_w_send((*C.int64_t)(unsafe.Pointer(&v[0])), C.int(len(v)), C.int(to), C.int(tag)))
}
func (w worldComm) Recv(from, tag int, v []int64) error {
	return mpiErr(C.cp_w_recv((*C.int64_t)(unsafe.Pointer(&v[0])), C.int(len(v)), C.int(from), C.int(tag)))
}

func warnf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "cpath logger: "+format+"\n", a...)
}

// parseCallDepth reads CPATH_CALLDEPTH: how many return addresses above
// the call site each call records (0, the default, for none).
func parseCallDepth(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	d, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || d < 0 || d > trace.MaxCallDepth {
		return 0, fmt.Errorf("CPATH_CALLDEPTH=%q: want a number of frames from 0 to %d", v, trace.MaxCallDepth)
	}
	return d, nil
}

//export cpathGoInit
func cpathGoInit(provided C.int, t0 C.int64_t, threads C.int) C.int {
	wc, err := newWorldComm()
	if err != nil {
		warnf("cannot use MPI_COMM_WORLD: %v; not logging", err)
		return 0
	}
	rank, size := wc.Rank(), wc.Size()
	st.comm = wc
	st.useTSC = C.cp_go_use_tsc() != 0
	st.skew, err = parseSkew(os.Getenv("CPATH_TEST_CLOCK_SKEW"), rank, int64(C.cp_go_mono()))
	if err != nil && rank == 0 {
		warnf("%v; ignored", err)
	}
	depth, err := parseCallDepth(os.Getenv("CPATH_CALLDEPTH"))
	if err != nil && rank == 0 {
		warnf("%v; no call paths", err)
	}
	C.cp_calldepth = C.int(depth)
	C.cp_skew_off = C.int64_t(st.skew.OffsetNs)
	C.cp_skew_base = C.int64_t(st.skew.BaseNs)
	C.cp_skew_ppm = C.double(st.skew.DriftPPM)

	// One run id for all ranks, so the analyzer can tell runs apart.
	id := make([]int64, 2)
	if rank == 0 {
		var b [16]byte
		_, _ = rand.Read(b[:])
		for i := 0; i < 2; i++ {
			for j := 0; j < 8; j++ {
				id[i] = id[i]<<8 | int64(b[i*8+j])
			}
		}
	}
	_ = wc.Bcast(0, id)
	var idb [16]byte
	for i := 0; i < 2; i++ {
		for j := 0; j < 8; j++ {
			idb[i*8+j] = byte(id[i] >> (56 - 8*j))
		}
	}

	// Clock synchronisation: the paper's Allreduce, then ping-pong.
	arOff, err1 := clocksync.Allreduce(wc, localNow)
	sp, err2 := clocksync.PingPong(wc, localNow, pingPongRounds)
	method := "pingpong"
	if err2 != nil {
		method = "allreduce"
		sp = trace.SyncPoint{LocalNs: localNow(), OffsetNs: arOff}
	}
	if err1 != nil && err2 != nil {
		method = "none"
	}
	st.method = method

	// The file. Every rank tries; the lowest rank that failed tells the user,
	// once, and ranks that failed run on unlogged.
	dir := os.Getenv("CPATH_DIR")
	if dir == "" {
		dir = DefaultDir
	}
	if C.cp_go_spawned() != 0 {
		// A job started by MPI_Comm_spawn is a run of its own, whose ranks
		// would overwrite the parent job's files of the same numbers.
		dir = filepath.Join(dir, "spawned-"+hex.EncodeToString(idb[:]))
	}
	path := filepath.Join(dir, fmt.Sprintf("rank-%06d.cplog", rank))
	f, ferr := openLog(dir, path)
	failed := int64(0)
	if ferr != nil {
		failed = int64(size - rank)
	}
	if worst, err := wc.AllreduceMax(failed); err == nil && worst > 0 && size-int(worst) == rank {
		warnf("cannot write logs to %s: %v; the program runs on without logging on the ranks affected", dir, ferr)
	}
	if ferr != nil {
		return 0
	}

	host, _ := os.Hostname()
	exe, _ := os.Executable()
	var lib [C.MPI_MAX_LIBRARY_VERSION_STRING]C.char
	var libLen C.int
	C.cp_go_libversion(&lib[0], &libLen)
	libName, _, _ := strings.Cut(strings.TrimRight(C.GoStringN(&lib[0], libLen), "\x00"), "\n")
	st.hdr = trace.Header{
		RunID: hex.EncodeToString(idb[:]), Rank: rank, Size: size, Host: host, PID: os.Getpid(),
		CPUs: runtime.NumCPU(), HostCPUs: hostCPUs(),
		Exe: exe, LoadAddress: uint64(C.cp_load_address()), StartUnixNs: time.Now().UnixNano(),
		T0: localNow(), ThreadLevel: int(provided), MPILibrary: strings.TrimSpace(libName), Logger: Version,
		Clock:   trace.Clock{Method: method, AllreduceOffsetNs: arOff, Init: sp},
		Threads: threads != 0, CallDepth: depth,
	}
	if st.skew.OffsetNs != 0 || st.skew.DriftPPM != 0 {
		sk := st.skew
		st.hdr.Clock.Injected = &sk
	}
	// The tick rate, measured from MPI_Init's entry to now; the reader
	// refines it with the calibration points of the stream.
	tick0, raw0 := int64(C.cp_go_now_ticks()), int64(C.cp_go_mono())
	ns0 := st.applySkew(raw0)
	if !st.useTSC {
		tick0 = raw0
	}
	rate := float64(ns0-st.applySkew(int64(C.cp_setup_ns))) / float64(tick0-int64(C.cp_setup_tick))
	if !(rate > 0) || tick0 == int64(C.cp_setup_tick) {
		rate = 1
	}
	st.hdr.Ticks = &trace.Ticks{Tick: tick0, Ns: ns0, NsPerTick: rate}
	st.mods = listModules()
	st.logged = map[[2]uint64]bool{}
	if len(st.mods) > 0 { // the executable; other modules when a call site needs them
		st.hdr.Modules = st.mods[:1:1]
		st.logged[[2]uint64{st.mods[0].Start, st.mods[0].End}] = true
	}
	setModules(st.mods, st.logged)
	pre, err := trace.EncodeHeader(&st.hdr)
	if err == nil {
		_, err = f.Write(pre)
	}
	// Calibration points every 100 ms of ticks.
	if err == nil && C.cp_enc_open(C.int(f.Fd()), C.uint64_t(len(pre)), C.int64_t(tick0), C.int64_t(1e8/rate), threads, C.int(depth)) == 0 {
		err = fmt.Errorf("cannot map the log file")
	}
	if err != nil {
		warnf("rank %d: writing %s: %v; not logging", rank, path, err)
		f.Close()
		return 0
	}
	st.f = f
	return 1
}

func openLog(dir, path string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Read and write: the records go through a shared mapping of the file.
	return os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
}

// finalSync measures the sync point at MPI_Finalize. Every rank that
// initialised through the logger calls it, logging or not (a rank whose log
// could not be opened, a rank paused by MPI_Pcontrol(0)): rank 0's
// ping-pong waits for every other rank, so the ranks first agree, with one
// Allreduce that all of them join, whether all of them can take part; if
// one cannot (its init ping-pong failed), none measures.
func finalSync() (trace.SyncPoint, bool) {
	if st.comm == nil {
		return trace.SyncPoint{}, false
	}
	unable := int64(0)
	if st.method != "pingpong" {
		unable = 1
	}
	if worst, err := st.comm.AllreduceMax(unable); err != nil || worst != 0 {
		return trace.SyncPoint{}, false
	}
	sp, err := clocksync.PingPong(st.comm, localNow, pingPongRounds)
	return sp, err == nil
}

// cpathGoFinalizeSync is MPI_Finalize on a rank that initialised but logs
// nothing (its log could not be opened): it only answers the final clock
// synchronisation, so that the other ranks do not wait for it forever.
//
//export cpathGoFinalizeSync
func cpathGoFinalizeSync() {
	_, _ = finalSync()
}

// eagerLimits reads the MPI's eager limits (mpit.c), as the run's
// environment set them.
func eagerLimits() []trace.ControlVar {
	const max = 64
	buf := make([]C.cp_cvar, max)
	n := int(C.cp_eager_limits(&buf[0], max))
	out := make([]trace.ControlVar, n)
	for i := range out {
		out[i] = trace.ControlVar{Name: C.GoString(&buf[i].name[0]), Value: int64(buf[i].value)}
	}
	return out
}

// maxModules bounds the modules listed at once.
const maxModules = 1024

// listModules lists the objects mapped into the process, the executable
// first.
func listModules() []trace.Module {
	buf := make([]C.cp_module, maxModules)
	n := int(C.cp_modules(&buf[0], maxModules))
	exe, _ := os.Executable()
	mods := make([]trace.Module, 0, n)
	for i := 0; i < n; i++ {
		m := &buf[i]
		path := C.GoString(m.name)
		if i == 0 && path == "" {
			path = exe
		}
		mods = append(mods, trace.Module{Path: path, Base: uint64(m.base), Start: uint64(m.start), End: uint64(m.end),
			BuildID: hex.EncodeToString(C.GoBytes(unsafe.Pointer(&m.id[0]), m.idlen))})
	}
	return mods
}

// setModules hands the module table to the C runtime, with which modules
// the log names already.
func setModules(mods []trace.Module, logged map[[2]uint64]bool) {
	if len(mods) == 0 {
		return
	}
	cm := make([]C.cp_module, len(mods))
	lg := make([]C.int, len(mods))
	for i, m := range mods {
		cm[i].start, cm[i].end = C.uint64_t(m.Start), C.uint64_t(m.End)
		if logged[[2]uint64{m.Start, m.End}] {
			lg[i] = 1
		}
	}
	C.cp_modules_known(&cm[0], &lg[0], C.int(len(mods)))
}

// cpathGoModules runs when call sites fall in modules the log does not
// name yet: it writes those modules as a module chunk (listing the modules
// again for a call site in none, a library loaded since).
//
//export cpathGoModules
func cpathGoModules() {
	if st.f == nil {
		return
	}
	pend := unsafe.Slice(C.cp_go_pend(), int(C.cp_nmods_pend))
	var fresh []trace.Module
	relisted := false
	for _, a := range pend {
		addr := uint64(a)
		var m *trace.Module
		for i := range st.mods {
			if st.mods[i].Contains(addr) {
				m = &st.mods[i]
				break
			}
		}
		if m == nil && !relisted {
			st.mods = listModules()
			relisted = true
			for i := range st.mods {
				if st.mods[i].Contains(addr) {
					m = &st.mods[i]
					break
				}
			}
		}
		if m == nil || st.logged[[2]uint64{m.Start, m.End}] {
			continue
		}
		st.logged[[2]uint64{m.Start, m.End}] = true
		fresh = append(fresh, *m)
	}
	setModules(st.mods, st.logged)
	if len(fresh) == 0 {
		return
	}
	js, err := json.Marshal(fresh)
	if err == nil && len(js) > 0 {
		C.cp_enc_chunk(trace.ChunkModules, unsafe.Pointer(&js[0]), C.int(len(js)))
	}
}

//export cpathGoFinish
func cpathGoFinish(status, info C.int) {
	if st.f == nil {
		return
	}
	if status == C.CP_END_FINALIZED {
		// All ranks are in MPI_Finalize: measure again for the drift.
		if sp, ok := finalSync(); ok {
			var b [24]byte
			binary.LittleEndian.PutUint64(b[0:], uint64(sp.LocalNs))
			binary.LittleEndian.PutUint64(b[8:], uint64(sp.OffsetNs))
			binary.LittleEndian.PutUint64(b[16:], uint64(sp.ErrNs))
			C.cp_enc_chunk(trace.ChunkClockFinal, unsafe.Pointer(&b[0]), 24)
		}
		// The eager limits, now that MPI_Finalize is recorded: where they
		// come through MPI_T, its start-up (about 0.2 s in Open MPI 4.1)
		// would lengthen the call it happened in (mpit.c).
		if vars := eagerLimits(); len(vars) > 0 {
			if js, err := json.Marshal(vars); err == nil {
				C.cp_enc_chunk(trace.ChunkControlVars, unsafe.Pointer(&js[0]), C.int(len(js)))
			}
		}
	}
	// The C caller holds every thread out of the logger: the end is checked.
	if dropped := C.cp_enc_end(C.int(status), C.int(info), 1, 1); dropped != 0 {
		warnf("rank %d: %d records could not be written to the log", st.hdr.Rank, uint64(dropped))
	}
	st.f.Close()
	st.f = nil
}

// hostCPUs is how many CPUs the host has online (/sys's list, "0-3,6"),
// 0 where that cannot be read.
func hostCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 0
	}
	n := 0
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		z := a
		var err2 error
		if isRange {
			z, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || z < a {
			return 0
		}
		n += z - a + 1
	}
	return n
}
