//go:build mpi

// Command topocheck runs topo and topo-shuffle under MPI on generated runs
// and checks that every variant, at this job's size, gives the segments
// that topo gives on one process: cpath/topo_mpi_test.go starts it with
// 1 to 4 ranks. Every rank generates the same runs (deterministic) and
// takes an uneven share of the logged ranks; rank 0 prints one line per run
// (its digest, identical at any job size) and the bytes shipped by
// topo-shuffle on a large run with and without compression. It exits 1 on
// the first disagreement.
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"os"
	"reflect"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/cpath/internal/cpathtest"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/emer/empi/mpi"
)

func main() {
	bigRanks := flag.Int("big-ranks", 16, "logged ranks of the compression run (0: none)")
	bigCalls := flag.Int("big-calls", 20000, "steps (calls per thread) of the compression run")
	flag.Parse()
	mpi.Init()
	c := mpix.World()
	err := run(c, *bigRanks, *bigCalls)
	if err != nil {
		fmt.Fprintf(os.Stderr, "topocheck rank %d of %d: %v\n", c.Rank(), c.Size(), err)
		os.Exit(1)
	}
	mpi.Finalize()
}

var opts = []cpath.TopoOptions{{}, {Compress: true}, {Shuffle: true}, {Shuffle: true, Compress: true}}

func run(c mpix.Comm, bigRanks, bigCalls int) error {
	P := c.Size()
	if c.Rank() == 0 {
		fmt.Printf("job size=%d\n", P)
	}
	for _, size := range []struct{ ranks, calls int }{{1, 50}, {3, 200}, {6, 500}, {9, 2000}} {
		for seed := int64(1); seed <= 3; seed++ {
			full := gen(seed, size.ranks, size.calls)
			var ref *cpath.TopoResult
			if c.Rank() == 0 {
				var err error
				if ref, err = cpath.Topo(&mpix.Single{}, full, cpath.TopoOptions{}); err != nil {
					return err
				}
				if err := checkTiling(full, ref); err != nil {
					return fmt.Errorf("%d×%d seed %d: %v", size.ranks, size.calls, seed, err)
				}
			}
			cuts := cpathtest.Cuts(size.ranks, P, rand.New(rand.NewSource(seed*100+int64(P))))
			for _, opt := range opts {
				res, err := cpath.Topo(c, share(full, cuts, c.Rank()), opt)
				if err != nil {
					return fmt.Errorf("%d×%d seed %d cuts %v %+v: %v", size.ranks, size.calls, seed, cuts, opt, err)
				}
				if c.Rank() == 0 && !reflect.DeepEqual(res.Segments, ref.Segments) {
					return fmt.Errorf("%d×%d seed %d cuts %v %+v: %d segments differ from topo on one process (%d)",
						size.ranks, size.calls, seed, cuts, opt, len(res.Segments), len(ref.Segments))
				}
				if c.Rank() != 0 && len(res.Segments) != 0 {
					return fmt.Errorf("segments on rank %d", c.Rank())
				}
				if ref != nil && res.Length != ref.Length {
					return fmt.Errorf("length %d, want %d", res.Length, ref.Length)
				}
			}
			if c.Rank() == 0 {
				fmt.Printf("run ranks=%d calls=%d seed=%d digest=%016x segments=%d length=%d\n",
					size.ranks, size.calls, seed, digest(ref.Segments), len(ref.Segments), ref.Length)
			}
		}
	}
	if bigRanks == 0 {
		return nil
	}
	// The compression run: each rank holds an even share.
	full := gen(42, bigRanks, bigCalls)
	cuts := make([]int, P+1)
	for p := range cuts {
		cuts[p] = p * bigRanks / P
	}
	var segs [][]cpath.TopoSegment
	var st []cpath.DistStats
	for _, compress := range []bool{false, true} {
		res, err := cpath.Topo(c, share(full, cuts, c.Rank()), cpath.TopoOptions{Shuffle: true, Compress: compress})
		if err != nil {
			return err
		}
		segs, st = append(segs, res.Segments), append(st, res.Stats)
	}
	if c.Rank() == 0 {
		if !reflect.DeepEqual(segs[0], segs[1]) {
			return fmt.Errorf("compression run: compressed segments differ")
		}
		fmt.Printf("bytes ranks=%d calls=%d segments=%d plain=%d compressed=%d raw=%d\n",
			bigRanks, len(full.Start), len(segs[0]), st[0].BytesSent, st[1].BytesSent, st[1].RawBytes)
	}
	return nil
}

// gen is cpathtest.TopoRun's run as TopoCalls.
func gen(seed int64, ranks, steps int) *cpath.TopoCalls {
	in := &cpath.TopoCalls{Ranks: ranks, RankHi: ranks}
	in.RankStart, in.Start, in.End, in.Prev = cpathtest.TopoRun(seed, ranks, steps)
	return in
}

// share is analyzer rank p's part of a full run.
func share(full *cpath.TopoCalls, cuts []int, p int) *cpath.TopoCalls {
	lo, hi := cuts[p], cuts[p+1]
	a, b := full.RankStart[lo], full.RankStart[hi]
	return &cpath.TopoCalls{Ranks: full.Ranks, RankStart: full.RankStart, RankLo: lo, RankHi: hi,
		Start: full.Start[a:b], End: full.End[a:b], Prev: full.Prev[a:b]}
}

// checkTiling checks that the segments tile the run's time.
func checkTiling(in *cpath.TopoCalls, r *cpath.TopoResult) error {
	t0, t1 := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range in.Start {
		t0, t1 = min(t0, in.Start[i]), max(t1, in.End[i], in.Start[i])
	}
	if r.Length != t1-t0 {
		return fmt.Errorf("length %d, run time %d", r.Length, t1-t0)
	}
	at := t0
	for i, s := range r.Segments {
		if s.Start != at || s.End <= s.Start {
			return fmt.Errorf("segment %d %+v does not continue at %d", i, s, at)
		}
		at = s.End
	}
	if at != t1 {
		return fmt.Errorf("segments end at %d, the run at %d", at, t1)
	}
	return nil
}

func digest(segs []cpath.TopoSegment) uint64 {
	h := fnv.New64a()
	for _, s := range segs {
		fmt.Fprintf(h, "%d %c %d %d %d\n", s.Rank, s.Kind, s.Call, s.Start, s.End)
	}
	return h.Sum64()
}
