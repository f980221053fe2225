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
	"sort"

	"github.com/cpath/cpath/cpath"
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
			cuts := uneven(size.ranks, P, rand.New(rand.NewSource(seed*100+int64(P))))
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

// gen makes a deterministic run of steps: in each, every thread of every
// rank (rank 0 has three, rank 2 none when there are more than 3 ranks)
// computes and calls MPI for random lengths (some zero, rare clock error,
// long waits); at random steps all calls end together, as in a barrier.
// Each rank's calls are numbered by start time; Prev links each thread's.
func gen(seed int64, ranks, steps int) *cpath.TopoCalls {
	rng := rand.New(rand.NewSource(seed))
	type call struct {
		s, e   int64
		thread int
	}
	threads := func(r int) int {
		switch {
		case r == 0:
			return 3
		case r == 2 && ranks > 3:
			return 0
		}
		return 1
	}
	per := make([][]call, ranks)
	clock := make([][]int64, ranks)
	for r := range clock {
		clock[r] = make([]int64, threads(r))
		for k := range clock[r] {
			clock[r][k] = rng.Int63n(100)
		}
	}
	at := make([]int, ranks)
	for step := 0; step < steps; step++ {
		barrier := rng.Intn(6) == 0
		latest := int64(math.MinInt64)
		for r := range per {
			at[r] = len(per[r])
			for k := range clock[r] {
				comp := rng.Int63n(1000)
				switch rng.Intn(20) {
				case 0:
					comp = 0
				case 1:
					comp = -rng.Int63n(5)
				}
				s := clock[r][k] + comp
				e := s + rng.Int63n(300)
				switch rng.Intn(10) {
				case 0:
					e = s
				case 1:
					e += rng.Int63n(3000)
				}
				per[r] = append(per[r], call{s, e, k})
				latest = max(latest, s)
			}
		}
		for r := range per {
			for i := at[r]; i < len(per[r]); i++ {
				cl := &per[r][i]
				if barrier {
					cl.e = latest + rng.Int63n(3)
				}
				clock[r][cl.thread] = cl.e
			}
		}
	}
	in := &cpath.TopoCalls{Ranks: ranks, RankStart: []int32{0}, RankHi: ranks}
	for r, cs := range per {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].s < cs[j].s })
		last := make([]int32, threads(r))
		for k := range last {
			last[k] = -1
		}
		for _, cl := range cs {
			id := int32(len(in.Start))
			in.Start, in.End, in.Prev = append(in.Start, cl.s), append(in.End, cl.e), append(in.Prev, last[cl.thread])
			last[cl.thread] = id
		}
		in.RankStart = append(in.RankStart, int32(len(in.Start)))
	}
	return in
}

// uneven cuts ranks logged ranks into P contiguous shares of random sizes
// (some empty).
func uneven(ranks, P int, rng *rand.Rand) []int {
	cuts := make([]int, P+1)
	for p := 1; p < P; p++ {
		cuts[p] = rng.Intn(ranks + 1)
	}
	cuts[P] = ranks
	sort.Ints(cuts)
	return cuts
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
