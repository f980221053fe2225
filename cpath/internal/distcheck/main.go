//go:build mpi

// Command distcheck runs cpath's distributed exact algorithms
// (ParallelDijkstra, ParallelDeltaStepping, Split in its four modes,
// DistDAG) under MPI and checks them
// against the sequential DAG: every rank of an mpirun job generates the
// same deterministic graph from the flags, takes its share of a split into
// vertex ranges (even, or uneven with possibly empty ranges), and runs the
// algorithm; rank 0 compares the path, vertex for vertex, and its length
// with DAG on the whole graph. It prints one line per case on rank 0, OK
// or MISMATCH, and exits 1 (every rank) after the first mismatch.
// cpath/dist_mpi_test.go starts it with 1 to 4 ranks; by hand it is the
// speed check:
//
//	mpirun -np 2 distcheck -kind chain-exact -n 4000000 -split even -algo dijkstra,delta
//
// Kinds: random (random DAGs with ties, ids not in topological order),
// chain (one long chain with rare skip edges, the shape of the PAGs we
// analyze; ids reversed on even seeds), chain-exact (the same with
// time-consistent weights, as in a PAG: the speed check), pag-like (per-process chains with
// communication edges, exact times on odd seeds, clock error on even
// ones), cycle (a chain with a positive back edge: every rank must return
// a cycle error), split (a graph shaped like the full PAG cut at global
// synchronisation points, cpathtest.SplitDAG, with -splits splits),
// full-pag (cpathtest.FullPAGTime: -procs processes in lockstep, time-
// consistent weights, 1-3 communication in-edges per call, a global
// collective through a hub vertex -splits times; with the vertices' times
// unless -time=false), bad-split (split with
// one vertex moved to the next split: Split must fail on every rank, the
// other algorithms are unaffected); the other kinds are one split to
// Split.
//
// Algorithms: dijkstra, delta, delta:Δ, dag (DistDAG), split:MODE (Split
// in MODE: par-par, seq-par, par-seq, seq-seq).
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/cpath/internal/cpathtest"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/emer/empi/mpi"
)

func main() {
	kinds := flag.String("kind", "random", "comma-separated graph kinds: random, chain, chain-exact, pag-like, cycle, split, full-pag, bad-split")
	n := flag.Int("n", 1000, "vertices (about, for pag-like)")
	seed := flag.Int64("seed", 1, "first seed")
	count := flag.Int("count", 1, "number of seeds, from -seed on")
	algos := flag.String("algo", "dijkstra", "comma-separated algorithms: dijkstra, delta (Δ from -delta), delta:Δ")
	delta := flag.Int64("delta", 0, "Δ for delta (<= 0: DistDefaultDelta)")
	splits := flag.String("split", "even,uneven", "comma-separated splits: even, uneven")
	procs := flag.Int("procs", 8, "pag-like: processes of the simulated run")
	nsplits := flag.Int("splits", 8, "split: splits of the generated graph")
	check := flag.Bool("check", true, "compare with DAG on rank 0")
	repeat := flag.Int("repeat", 1, "runs of each case; the times printed are the best")
	useTime := flag.Bool("time", true, "full-pag: give the vertices their times (dijkstra and delta then take them latest first; false: the largest Dist first)")
	flag.Parse()
	mpi.Init()
	c := mpix.World()
	code := 0
	if err := run(c, strings.Split(*kinds, ","), *n, *seed, *count, strings.Split(*algos, ","), *delta,
		strings.Split(*splits, ","), *procs, *nsplits, *check, max(1, *repeat), *useTime); err != nil {
		if c.Rank() == 0 {
			fmt.Println(err)
		}
		code = 1
	}
	mpi.Finalize()
	os.Exit(code)
}

// run returns an error on every rank after the first case that fails on
// any rank.
func run(c mpix.Comm, kinds []string, n int, seed0 int64, count int, algos []string, delta int64,
	splits []string, procs, nsplits int, check bool, repeat int, useTime bool) error {
	P := c.Size()
	if c.Rank() == 0 {
		fmt.Printf("job size=%d\n", P)
	}
	for _, kind := range kinds {
		for seed := seed0; seed < seed0+int64(count); seed++ {
			g, target, sin, err := generate(kind, n, seed, procs, nsplits, useTime)
			if err != nil {
				return err
			}
			var ref *cpath.Result
			var refErr error
			var refTime time.Duration
			if c.Rank() == 0 && check {
				for k := 0; k < repeat; k++ {
					t0 := time.Now()
					ref, refErr = cpath.DAG(g, target)
					if el := time.Since(t0); k == 0 || el < refTime {
						refTime = el
					}
				}
				if (refErr != nil) != (kind == "cycle") {
					return fmt.Errorf("MISMATCH kind=%s seed=%d: dag: %v", kind, seed, refErr)
				}
			}
			for _, split := range splits {
				bounds, err := cut(split, g.N, P, seed)
				if err != nil {
					return err
				}
				share := shareOf(g, target, bounds, c.Rank())
				for _, algo := range algos {
					what := fmt.Sprintf("kind=%s n=%d seed=%d split=%s algo=%s P=%d", kind, g.N, seed, split, algo, P)
					var run func() (*cpath.DistResult, error)
					d := delta
					switch name, arg, _ := strings.Cut(algo, ":"); {
					case algo == "dijkstra":
						run = func() (*cpath.DistResult, error) { return cpath.ParallelDijkstra(c, share) }
					case algo == "dag":
						run = func() (*cpath.DistResult, error) { return cpath.DistDAG(c, share) }
					case name == "split":
						in := &cpath.SplitInput{Split: sin.Split[share.Lo:share.Hi], Exit: sin.Exit}
						run = func() (*cpath.DistResult, error) { return cpath.Split(c, share, in, cpath.SplitMode(arg)) }
					case name == "delta":
						if arg != "" {
							if d, err = strconv.ParseInt(arg, 10, 64); err != nil {
								return fmt.Errorf("algorithm %q: %v", algo, err)
							}
						}
						run = func() (*cpath.DistResult, error) { return cpath.ParallelDeltaStepping(c, share, d) }
					default:
						return fmt.Errorf("unknown algorithm %q", algo)
					}
					var res *cpath.DistResult
					var err error
					var el time.Duration
					for k := 0; k < repeat; k++ {
						if _, err := mpix.AllreduceOne(c, 0, mpix.Sum); err != nil { // start together
							return err
						}
						t0 := time.Now()
						res, err = run()
						if e := time.Since(t0); k == 0 || e < el {
							el = e
						}
					}
					msg := verdict(c.Rank(), kind, strings.HasPrefix(algo, "split"), algo != "dag", check, res, err, ref)
					bad, cerr := mpix.Any(c, msg != "")
					if cerr != nil {
						return cerr
					}
					if bad {
						if c.Rank() == 0 && msg == "" {
							msg = "another rank disagrees"
						}
						return fmt.Errorf("MISMATCH %s: %s", what, msg)
					}
					if c.Rank() == 0 {
						if err != nil {
							fmt.Printf("OK %s error=%q\n", what, err)
							continue
						}
						st := res.Stats
						fmt.Printf("OK %s length=%d vertices=%d reached=%d rounds=%d phases=%d pops=%d relax=%d edges=%d relax/edge=%.3f splits=%d bytes=%d time=%.3fs dag=%.3fs\n",
							what, res.Path.Length, len(res.Path.Vertices), st.Reached, st.Rounds, st.Phases, st.Pops,
							st.Relaxations, st.Edges, float64(st.Relaxations)/float64(max(1, st.Edges)), st.Splits,
							st.BytesSent, el.Seconds(), refTime.Seconds())
					}
				}
			}
		}
	}
	return nil
}

// verdict is "" if this rank's result is right; with reached, its
// Stats.Reached is checked against DAG's too (DistDAG counts only the
// vertices on a longest path).
func verdict(rank int, kind string, splitAlgo, reached, check bool, res *cpath.DistResult, err error, ref *cpath.Result) string {
	if kind == "cycle" {
		if err == nil || !strings.Contains(err.Error(), "cycle") {
			return fmt.Sprintf("rank %d: error %v, want a cycle", rank, err)
		}
		return ""
	}
	if kind == "bad-split" && splitAlgo {
		if err == nil || !strings.Contains(err.Error(), "leads from split") {
			return fmt.Sprintf("rank %d: error %v, want an edge between splits", rank, err)
		}
		return ""
	}
	if err != nil {
		return fmt.Sprintf("rank %d: %v", rank, err)
	}
	if rank != 0 {
		if len(res.Path.Vertices) != 0 {
			return fmt.Sprintf("rank %d holds a path", rank)
		}
		return ""
	}
	if !check {
		return ""
	}
	got, want := res.Path, ref.Path
	if got.Length != want.Length || !reflect.DeepEqual(got.Vertices, want.Vertices) {
		i := 0
		for i < len(got.Vertices) && i < len(want.Vertices) && got.Vertices[i] == want.Vertices[i] {
			i++
		}
		return fmt.Sprintf("length %d, dag %d; %d vertices, dag %d; first difference at position %d",
			got.Length, want.Length, len(got.Vertices), len(want.Vertices), i)
	}
	if reached && res.Stats.Reached != ref.Stats.Reached {
		return fmt.Sprintf("reached %d, dag %d", res.Stats.Reached, ref.Stats.Reached)
	}
	return ""
}

// cut splits [0,n) into P ranges: even, or at random points (from seed and
// P, the same on every rank), some possibly empty.
func cut(split string, n, P int, seed int64) ([]int32, error) {
	b := make([]int32, P+1)
	switch split {
	case "even":
		for p := range b {
			b[p] = int32(int64(n) * int64(p) / int64(P))
		}
	case "uneven":
		rng := rand.New(rand.NewSource(seed*1000 + int64(P)))
		for p := 1; p < P; p++ {
			b[p] = int32(rng.Intn(n + 1))
		}
		b[P] = int32(n)
		sort.Slice(b, func(i, j int) bool { return b[i] < b[j] })
	default:
		return nil, fmt.Errorf("unknown split %q", split)
	}
	return b, nil
}

// shareOf is rank's DistGraph share of g.
func shareOf(g *cpath.Graph, target int32, bounds []int32, rank int) *cpath.DistGraph {
	lo, hi := bounds[rank], bounds[rank+1]
	a, b := g.InStart[lo], g.InStart[hi]
	st := make([]int32, hi-lo+1)
	for i := range st {
		st[i] = g.InStart[int(lo)+i] - a
	}
	d := &cpath.DistGraph{N: g.N, Bounds: bounds, Lo: lo, Hi: hi, InStart: st,
		InSrc: g.InSrc[a:b], InWeight: g.InWeight.Slice(a, b), Target: target}
	if g.Time != nil {
		d.Time = g.Time[lo:hi]
	}
	return d
}

// build makes the CSR-by-destination graph of n vertices and edges es.
func build(n int, es []cpathtest.Edge) *cpath.Graph {
	g := &cpath.Graph{N: n}
	g.InStart, g.InSrc, g.InWeight = cpathtest.CSR(n, es)
	return g
}

// generate makes the graph of kind, its target and its split input (one
// split for the kinds other than split).
func generate(kind string, n int, seed int64, procs, nsplits int, useTime bool) (*cpath.Graph, int32, *cpath.SplitInput, error) {
	switch kind {
	case "split", "full-pag", "bad-split":
		rng := rand.New(rand.NewSource(seed))
		var es []cpathtest.Edge
		var split, exit []int32
		var target int32
		if kind != "full-pag" {
			es, split, exit, target = cpathtest.SplitDAG(rng, n, max(2, nsplits), seed%2 == 0)
			if kind == "bad-split" {
				// An edge between two vertices of one split that are no
				// exits: its destination moves to the next split.
				isExit := make(map[int32]bool)
				for _, x := range exit {
					isExit[x] = true
				}
				for _, k := range rng.Perm(len(es)) {
					e := es[k]
					if !isExit[e.U] && !isExit[e.V] && split[e.U] == split[e.V] && int(split[e.V])+1 < len(exit) {
						split[e.V]++
						break
					}
				}
			}
		} else {
			steps := max(2, n/(2*max(1, procs)))
			var tm []int64
			es, split, exit, target, tm = cpathtest.FullPAGTime(rng, procs, steps, max(1, steps/max(1, nsplits)))
			g := build(len(split), es)
			if useTime {
				g.Time = tm
			}
			return g, target, &cpath.SplitInput{Split: split, Exit: exit}, nil
		}
		return build(len(split), es), target, &cpath.SplitInput{Split: split, Exit: exit}, nil
	}
	g, target, err := generateOne(kind, n, seed, procs)
	if err != nil {
		return nil, 0, nil, err
	}
	return g, target, &cpath.SplitInput{Split: make([]int32, g.N), Exit: []int32{target}}, nil
}

func generateOne(kind string, n int, seed int64, procs int) (*cpath.Graph, int32, error) {
	n = max(n, 2)
	rng := rand.New(rand.NewSource(seed))
	switch kind {
	case "random":
		es, t := cpathtest.RandomDAG(rng, n)
		return build(n, es), t, nil
	case "chain", "chain-exact", "cycle":
		es := cpathtest.Chain(rng, n, kind == "chain-exact")
		target := int32(n - 1)
		if kind == "cycle" {
			a := 1 + rng.Intn(n-1)
			b := rng.Intn(a)
			es = append(es, cpathtest.Edge{U: int32(a), V: int32(b), W: 1 + rng.Int63n(10)})
		} else if seed%2 == 0 {
			for i := range es {
				es[i].U, es[i].V = int32(n-1)-es[i].U, int32(n-1)-es[i].V
			}
			target = 0
		}
		return build(n, es), target, nil
	case "pag-like":
		clockErr := int64(0)
		if seed%2 == 0 {
			clockErr = 200
		}
		n, es, t := cpathtest.PAGLike(rng, n/2, max(1, procs), clockErr)
		return build(n, es), t, nil
	}
	return nil, 0, fmt.Errorf("unknown graph kind %q", kind)
}
