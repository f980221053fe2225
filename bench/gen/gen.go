// Package gen writes synthetic cpath logs of any size in the real format,
// for benchmarks and scale tests: every message matches and every
// collective is complete, so the analyzer does its full work on them.
package gen

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"

	"github.com/cpath/cpath/trace"
)

// Pattern names what the ranks do.
type Pattern string

const (
	Halo        Pattern = "halo"        // 1-D periodic halo exchange (Irecv×2, Isend×2, Waitall), Allreduce every 10 iterations
	Collectives Pattern = "collectives" // Allreduce, Bcast, Barrier, Alltoall in turn
	RandomP2P   Pattern = "random"      // Send/Recv between random pairs chosen alike on all ranks
	Imbalanced  Pattern = "imbalanced"  // halo with one rank computing 3× longer
)

// Patterns lists the patterns Write knows.
var Patterns = []Pattern{Halo, Collectives, RandomP2P, Imbalanced}

// Spec says what to generate.
type Spec struct {
	Dir          string
	Ranks        int
	CallsPerRank int // approximate: whole iterations are generated
	Pattern      Pattern
	Seed         int64
	// Synchronised makes the logs causal, as the logger's synchronised
	// clocks show a run: a receive or a collective ends after what it
	// needs started (plus a latency). Otherwise each rank's timeline runs
	// on its own, and about a third of the messages arrive before they
	// were sent: the clock correction then moves most calls, the worst
	// case for it.
	Synchronised bool
}

// latency is a message's or a collective's least time from the start of
// what it needs to its end, in synchronised logs.
const latency = 1_500

// Write writes Ranks log files into Dir. The ranks are simulated together,
// an iteration at a time, so that a synchronised log can follow the
// others' sends.
func Write(s Spec) error {
	if s.Ranks < 2 {
		return fmt.Errorf("gen: need at least 2 ranks, got %d", s.Ranks)
	}
	switch s.Pattern {
	case Halo, Imbalanced, Collectives, RandomP2P:
	default:
		return fmt.Errorf("gen: unknown pattern %q", s.Pattern)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	// Buffers for every rank at once: smaller when there are many.
	bufBytes, bufRecs := 1<<20, 16384
	if s.Ranks > 64 {
		bufBytes, bufRecs = 64<<10, 1024
	}
	ws := make([]*rankWriter, s.Ranks)
	defer func() {
		for _, w := range ws {
			if w != nil && w.f != nil {
				w.f.Close()
			}
		}
	}()
	for r := range ws {
		w, err := newRankWriter(s, r, bufBytes, bufRecs)
		if err != nil {
			return err
		}
		ws[r] = w
	}
	if err := simulate(s, ws); err != nil {
		return err
	}
	for _, w := range ws {
		if err := w.close(); err != nil {
			return err
		}
	}
	return nil
}

// rankWriter streams one rank's records in bounded buffers, like the logger.
type rankWriter struct {
	f   *os.File
	bw  *bufio.Writer
	w   *trace.Writer
	buf []trace.Record
	max int // records buffered before a write
	t   int64
	req uint32
	seq uint32
	rng *rand.Rand
	err error
}

func newRankWriter(s Spec, rank, bufBytes, bufRecs int) (*rankWriter, error) {
	path := filepath.Join(s.Dir, fmt.Sprintf("rank-%06d.cplog", rank))
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, bufBytes)
	h := &trace.Header{RunID: fmt.Sprintf("gen-%d", s.Seed), Rank: rank, Size: s.Ranks, Host: "gen", PID: 1 + rank,
		Exe: "/gen/" + string(s.Pattern), T0: 0, Logger: "cpath bench/gen",
		Clock: trace.Clock{Method: "pingpong"}}
	tw, err := trace.NewWriter(bw, h)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &rankWriter{f: f, bw: bw, w: tw, max: bufRecs, t: 1000,
		rng: rand.New(rand.NewSource(s.Seed*7919 + int64(rank)))}, nil
}

func (w *rankWriter) flush() {
	if w.err == nil && len(w.buf) > 0 {
		w.err = w.w.WriteRecords(w.buf)
	}
	w.buf = w.buf[:0]
}

func (w *rankWriter) put(r trace.Record) {
	w.buf = append(w.buf, r)
	if len(w.buf) >= w.max {
		w.flush()
	}
}

// call appends a timed record after compute ns of computation, lasting
// dur, or until notBefore if that is later; it returns the call's start.
func (w *rankWriter) call(r trace.Record, compute, dur, notBefore int64) int64 {
	w.t += compute
	r.Start, r.End = w.t, max(w.t+dur, notBefore)
	w.t = r.End
	if r.Root == 0 && r.Op.Class() != trace.ClassCollective {
		r.Root = trace.PeerNone
	}
	w.put(r)
	return r.Start
}

func (w *rankWriter) jitter(base int64) int64 { return base + w.rng.Int63n(base/4+1) }

// close writes MPI_Finalize, the trailer and the rest of the buffers.
func (w *rankWriter) close() error {
	w.call(trace.Record{Op: trace.OpFinalize, Peer: trace.PeerNone, Comm: trace.CommNone}, 1000, 1000, 0)
	w.flush()
	if w.err != nil {
		return w.err
	}
	if err := w.w.Close(trace.Trailer{Status: trace.EndFinalized}); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// simulate writes every rank's calls from MPI_Init to before MPI_Finalize.
// Each rank draws its random numbers in the same order whether or not the
// logs are synchronised, so the two differ only in the times.
func simulate(s Spec, ws []*rankWriter) error {
	P := int32(s.Ranks)
	need := func(t int64) int64 { // the least end of a call that needs what started at t
		if !s.Synchronised {
			return 0
		}
		return t + latency
	}
	// MPI_Init: the logger's clock synchronisation ends it on every rank
	// after all entered.
	for _, w := range ws {
		w.call(trace.Record{Op: trace.OpInit, Peer: trace.PeerNone, Comm: trace.CommNone}, 0, 100_000, 0)
	}
	starts := make([]int64, s.Ranks)    // a collective's members'
	work := make([]int64, s.Ranks)      // halo: each rank's computation before its Waitall
	sendTo := make([][2]int64, s.Ranks) // halo: each rank's Isends' starts, to the right and to the left
	// collective ends every member after the last one started, in
	// synchronised logs (starts holds the members' starts).
	collective := func(rec func(w *rankWriter) trace.Record, compute func(w *rankWriter) int64, dur int64) {
		for r, w := range ws {
			w.t += compute(w)
			starts[r] = w.t
		}
		last := slices.Max(starts)
		for _, w := range ws {
			w.call(rec(w), 0, dur, need(last))
		}
	}
	switch s.Pattern {
	case Halo, Imbalanced:
		for n := 1; n < s.CallsPerRank-1; {
			for r, w := range ws {
				me := int32(r)
				left, right := (me+P-1)%P, (me+1)%P
				work[r] = w.jitter(20_000)
				if s.Pattern == Imbalanced && r == s.Ranks/2 {
					work[r] *= 3
				}
				for k, p := range []struct {
					op   trace.Op
					peer int32
				}{{trace.OpIrecv, left}, {trace.OpIrecv, right}, {trace.OpIsend, right}, {trace.OpIsend, left}} {
					w.req++
					at := w.call(trace.Record{Op: p.op, Peer: p.peer, Tag: 1, Bytes: 8192, Req: w.req, Flags: trace.FlagNewReq, CallSite: 0x1000 + uint64(p.op)}, 200, 300, 0)
					if k >= 2 {
						sendTo[r][k-2] = at
					}
				}
			}
			for r, w := range ws {
				me := int32(r)
				left, right := (me+P-1)%P, (me+1)%P
				// The messages from the left (its Isend to the right) and
				// from the right (its Isend to the left).
				arrive := max(need(sendTo[left][0]), need(sendTo[right][1]))
				first := w.req - 3
				w.call(trace.Record{Op: trace.OpWaitall, Peer: trace.PeerNone, Comm: trace.CommNone, Count: 4, CallSite: 0x2000}, work[r], 2_000, arrive)
				for k, peer := range []int32{left, right, right, left} {
					w.put(trace.Record{Op: trace.OpReqDone, Req: first + uint32(k), Peer: peer, Tag: 1, Bytes: 8192 * uint64(1-k/2), Root: trace.PeerNone})
				}
			}
			n += 5
			if (ws[0].req/4)%10 == 0 { // alike on every rank
				collective(func(w *rankWriter) trace.Record {
					w.seq++
					return trace.Record{Op: trace.OpAllreduce, Peer: trace.PeerNone, Bytes: 8, Seq: w.seq, Root: trace.PeerNone, CallSite: 0x3000}
				}, func(*rankWriter) int64 { return 1000 }, 5_000)
				n++
			}
			if err := firstErr(ws); err != nil {
				return err
			}
		}
	case Collectives:
		for n := 1; n < s.CallsPerRank-1; n += 4 {
			for _, op := range []trace.Op{trace.OpAllreduce, trace.OpBcast, trace.OpBarrier, trace.OpAlltoall} {
				collective(func(w *rankWriter) trace.Record {
					w.seq++
					root := trace.PeerNone
					if op == trace.OpBcast {
						root = int32(w.seq) % P
					}
					return trace.Record{Op: op, Peer: trace.PeerNone, Bytes: 64, Seq: w.seq, Root: root, CallSite: 0x4000 + uint64(op)}
				}, func(w *rankWriter) int64 { return w.jitter(5_000) }, 3_000)
			}
			if err := firstErr(ws); err != nil {
				return err
			}
		}
	case RandomP2P:
		// All ranks draw the same pairs.
		pairs := rand.New(rand.NewSource(s.Seed))
		draws := s.CallsPerRank * s.Ranks / 2
		for d := 0; d < draws; d++ {
			a, b := int32(pairs.Intn(s.Ranks)), int32(pairs.Intn(s.Ranks-1))
			if b >= a {
				b++
			}
			for r, w := range ws {
				if int32(r) != a && int32(r) != b {
					w.t += 3_000 // others compute
				}
			}
			sent := ws[a].call(trace.Record{Op: trace.OpSend, Peer: b, Tag: 3, Bytes: 1024, CallSite: 0x5000}, ws[a].jitter(3_000), 1_000, 0)
			ws[b].call(trace.Record{Op: trace.OpRecv, Peer: a, Tag: 3, Bytes: 1024, CallSite: 0x5100}, ws[b].jitter(3_000), 1_000, need(sent))
			if d%4096 == 0 {
				if err := firstErr(ws); err != nil {
					return err
				}
			}
		}
	}
	return firstErr(ws)
}

func firstErr(ws []*rankWriter) error {
	for _, w := range ws {
		if w.err != nil {
			return w.err
		}
	}
	return nil
}
