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
}

// Write writes Ranks log files into Dir.
func Write(s Spec) error {
	if s.Ranks < 2 {
		return fmt.Errorf("gen: need at least 2 ranks, got %d", s.Ranks)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	for r := 0; r < s.Ranks; r++ {
		if err := writeRank(s, r); err != nil {
			return err
		}
	}
	return nil
}

// rankWriter streams one rank's records in bounded buffers, like the logger.
type rankWriter struct {
	w    *trace.Writer
	buf  []trace.Record
	t    int64
	req  uint32
	seq  uint32
	rng  *rand.Rand
	err  error
	rank int
}

func (w *rankWriter) flush() {
	if w.err == nil && len(w.buf) > 0 {
		w.err = w.w.WriteRecords(w.buf)
	}
	w.buf = w.buf[:0]
}

func (w *rankWriter) put(r trace.Record) {
	w.buf = append(w.buf, r)
	if len(w.buf) >= 16384 {
		w.flush()
	}
}

// call appends a timed record after compute ns of computation, lasting dur.
func (w *rankWriter) call(r trace.Record, compute, dur int64) {
	w.t += compute
	r.Start, r.End = w.t, w.t+dur
	w.t = r.End
	if r.Root == 0 && r.Op.Class() != trace.ClassCollective {
		r.Root = trace.PeerNone
	}
	w.put(r)
}

func writeRank(s Spec, rank int) error {
	path := filepath.Join(s.Dir, fmt.Sprintf("rank-%06d.cplog", rank))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	h := &trace.Header{RunID: fmt.Sprintf("gen-%d", s.Seed), Rank: rank, Size: s.Ranks, Host: "gen", PID: 1 + rank,
		Exe: "/gen/" + string(s.Pattern), T0: 0, Logger: "cpath bench/gen",
		Clock: trace.Clock{Method: "pingpong"}}
	tw, err := trace.NewWriter(bw, h)
	if err != nil {
		return err
	}
	w := &rankWriter{w: tw, t: 1000, rng: rand.New(rand.NewSource(s.Seed*7919 + int64(rank))), rank: rank}
	P := int32(s.Ranks)
	me := int32(rank)
	left, right := (me+P-1)%P, (me+1)%P
	// All ranks draw the same pairs for the random pattern.
	pairs := rand.New(rand.NewSource(s.Seed))
	w.call(trace.Record{Op: trace.OpInit, Peer: trace.PeerNone, Comm: trace.CommNone}, 0, 100_000)
	jitter := func(base int64) int64 { return base + w.rng.Int63n(base/4+1) }
	draws := s.CallsPerRank * s.Ranks / 2 // random pattern: the same draws on every rank
	for n, d := 1, 0; n < s.CallsPerRank-1; {
		switch s.Pattern {
		case Halo, Imbalanced:
			work := jitter(20_000)
			if s.Pattern == Imbalanced && rank == s.Ranks/2 {
				work *= 3
			}
			first := w.req + 1
			for _, p := range []struct {
				op   trace.Op
				peer int32
			}{{trace.OpIrecv, left}, {trace.OpIrecv, right}, {trace.OpIsend, right}, {trace.OpIsend, left}} {
				w.req++
				w.call(trace.Record{Op: p.op, Peer: p.peer, Tag: 1, Bytes: 8192, Req: w.req, Flags: trace.FlagNewReq, CallSite: 0x1000 + uint64(p.op)}, 200, 300)
			}
			w.call(trace.Record{Op: trace.OpWaitall, Peer: trace.PeerNone, Comm: trace.CommNone, Count: 4, CallSite: 0x2000}, work, 2_000)
			for k, peer := range []int32{left, right, right, left} {
				w.put(trace.Record{Op: trace.OpReqDone, Req: first + uint32(k), Peer: peer, Tag: 1, Bytes: 8192 * uint64(1-k/2), Root: trace.PeerNone})
			}
			n += 5
			if (w.req/4)%10 == 0 {
				w.seq++
				w.call(trace.Record{Op: trace.OpAllreduce, Peer: trace.PeerNone, Bytes: 8, Seq: w.seq, Root: trace.PeerNone, CallSite: 0x3000}, 1000, 5_000)
				n++
			}
		case Collectives:
			for _, op := range []trace.Op{trace.OpAllreduce, trace.OpBcast, trace.OpBarrier, trace.OpAlltoall} {
				w.seq++
				root := trace.PeerNone
				if op == trace.OpBcast {
					root = int32(w.seq) % P
				}
				w.call(trace.Record{Op: op, Peer: trace.PeerNone, Bytes: 64, Seq: w.seq, Root: root, CallSite: 0x4000 + uint64(op)}, jitter(5_000), 3_000)
			}
			n += 4
		case RandomP2P:
			if d == draws {
				n = s.CallsPerRank
				continue
			}
			d++
			a, b := int32(pairs.Intn(s.Ranks)), int32(pairs.Intn(s.Ranks-1))
			if b >= a {
				b++
			}
			switch me {
			case a:
				w.call(trace.Record{Op: trace.OpSend, Peer: b, Tag: 3, Bytes: 1024, CallSite: 0x5000}, jitter(3_000), 1_000)
			case b:
				w.call(trace.Record{Op: trace.OpRecv, Peer: a, Tag: 3, Bytes: 1024, CallSite: 0x5100}, jitter(3_000), 1_000)
			default:
				w.t += 3_000 // others compute
				continue
			}
			n++
		default:
			return fmt.Errorf("gen: unknown pattern %q", s.Pattern)
		}
		if w.err != nil {
			return w.err
		}
	}
	w.call(trace.Record{Op: trace.OpFinalize, Peer: trace.PeerNone, Comm: trace.CommNone}, 1000, 1000)
	w.flush()
	if w.err != nil {
		return w.err
	}
	if err := tw.Close(trace.Trailer{Status: trace.EndFinalized}); err != nil {
		return err
	}
	return bw.Flush()
}
