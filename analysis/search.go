package analysis

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/imbalance"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/report"
	"github.com/cpath/cpath/traffic"
)

// share is what each rank contributes to the report's tables: its
// imbalance and traffic, and the collective instances it coordinated.
type share struct {
	Imbalance *imbalance.Result
	Colls     []graph.Collective
	Traffic   *traffic.Result
}

// startShares computes the imbalance and traffic shares beside the
// search: they read the graph and need no path, on a core the search
// leaves idle.
func (st *state) startShares() error {
	p := st.p
	if st.o.Graphless() {
		return nil // they read the graph
	}
	st.shares = make(chan share, 1)
	go func() { st.shares <- share{imbalance.Analyze(p), p.Colls, traffic.Analyze(p)} }()
	return nil
}

// gatherShares gathers the shares on rank 0 and merges them there
// (instances in communicator and sequence order) into the report's input.
func (st *state) gatherShares() error {
	c, p := st.c, st.p
	if st.shares == nil {
		if c.Rank() == 0 {
			st.in.PAG = p.Summary(nil)
		}
		return nil
	}
	mine := <-st.shares
	shares, err := mpix.Gather(c, mine.put, func(d *mpix.Decoder) share { return readShare(d, p.Ranks, len(p.Comms)) })
	if err = mpix.Agree(c, err); err != nil || c.Rank() != 0 {
		return err
	}
	var colls []graph.Collective
	parts := make([]*imbalance.Result, len(shares))
	offsets := make([]int32, len(shares))
	traffics := make([]*traffic.Result, len(shares))
	for i, s := range shares {
		parts[i] = s.Imbalance
		traffics[i] = s.Traffic
		offsets[i] = int32(len(colls))
		colls = append(colls, s.Colls...)
	}
	im := imbalance.Merge(parts, offsets)
	slices.SortFunc(im.Instances, func(a, b imbalance.Instance) int {
		x, y := &colls[a.Coll], &colls[b.Coll]
		return cmp.Or(cmp.Compare(x.Comm, y.Comm), cmp.Compare(x.Seq, y.Seq))
	})
	st.in.PAG = p.Summary(colls)
	st.in.Imbalance = im
	st.in.Traffic = traffic.Merge(traffics)
	return nil
}

// search finds the critical path with the algorithm asked.
func (st *state) search() error {
	c, p, o := st.c, st.p, st.o
	st.prog.Stage("finding the critical path (" + o.Algo + ")")
	var g *cpath.DistGraph
	if !o.Graphless() {
		g = distGraph(p)
	}
	st.in = &report.Input{Dir: o.Dir, Algo: o.Algo, GraphTime: st.graphTime, Agreement: -1,
		Analyzer: &report.AnalyzerStats{Ranks: c.Size(), BuildBytes: st.buildBytes}}
	var res *cpath.DistResult
	var err error
	switch o.Algo {
	case "dag":
		res, err = st.dag(g)
	case "dijkstra", "delta":
		// By distance label, or with vertex times by time (Orders); the
		// report names which.
		order := cmp.Or(o.Order, Orders[0])
		st.in.Algo = o.Algo + "/" + order
		if order == "time" {
			g.Time = p.Times()
		}
		if o.Algo == "dijkstra" {
			res, err = cpath.ParallelDijkstra(c, g)
		} else {
			res, err = cpath.ParallelDeltaStepping(c, g, o.Delta)
		}
	case "split":
		st.in.Algo = "split/" + string(o.SplitMode)
		var splitIn *cpath.SplitInput
		if splitIn, err = splitInput(c, p); err == nil {
			res, err = cpath.Split(c, g, splitIn, o.SplitMode)
		}
	case "topo", "topo-shuffle":
		res, err = st.topoSearch()
	}
	if err != nil {
		// Labelled where it happened: Agree hands the other ranks its text.
		what := "finding the critical path"
		if errors.Is(err, cpath.ErrCycle) {
			what = "inconsistent logs"
		}
		err = fmt.Errorf("%s: %s", what, strings.TrimPrefix(err.Error(), "cpath: "))
	}
	if err = mpix.Agree(c, err); err != nil {
		return fmt.Errorf("%s: %v", o.Dir, err)
	}
	st.res = res
	s := res.Stats
	if st.topo != nil {
		s = st.topo.Stats
	}
	a := st.in.Analyzer
	a.Rounds, a.BytesSent, a.RawBytes, a.Splits = s.Rounds, s.BytesSent, s.RawBytes, s.Splits
	a.Relaxations, a.Edges = s.Relaxations, s.Edges
	if s.Edges > 0 {
		a.RelaxationsPerEdge = float64(s.Relaxations) / float64(s.Edges)
	}
	// The search's arrays are garbage now: collect them, so that the
	// report reuses their pages (under GOGC 10 the heap's goal is above
	// what the report takes, which would otherwise come from fresh pages).
	runtime.GC()
	return nil
}

// dag is the exact path by the sweep: ordering each rank's part in rounds
// (SweepDAG), or with --frames at more than one rank on the rows
// redistributed by frame where they balance (FrameDAG); what it sweeps
// stays for the replay.
func (st *state) dag(g *cpath.DistGraph) (*cpath.DistResult, error) {
	c, p := st.c, st.p
	in, err := splitInput(c, p)
	if err != nil {
		return nil, err
	}
	if c.Size() > 1 && st.o.Frames {
		res, rows, ok, err := cpath.FrameDAG(c, g, in, kinds(p))
		if err != nil || ok {
			st.rows = rows
			st.in.Analyzer.Frames = ok
			return res, err
		}
	}
	res, sched, err := cpath.SweepDAG(c, g, in, p.Streams())
	st.sched = sched
	return res, err
}

// kinds is the part's edge kinds as the labels cpath's rows keep.
func kinds(p *graph.PAG) []uint8 {
	k, _ := mpix.FromBytes[uint8](mpix.Bytes(p.InKind)) // one byte each: never fails
	return k
}

// topoSearch runs the topological heuristics, then, with --compare-exact,
// the exact path to measure their agreement with.
func (st *state) topoSearch() (*cpath.DistResult, error) {
	c, p, o := st.c, st.p, st.o
	topo, err := cpath.Topo(c, topoCalls(p), cpath.TopoOptions{Shuffle: o.Algo == "topo-shuffle", Compress: o.Compress})
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	st.topo = topo
	if o.Graphless() {
		return &cpath.DistResult{Path: cpath.Path{Length: topo.Length}}, nil
	}
	st.prog.Stage("finding the exact path for comparison")
	st.in.Analyzer.ExactAlgo = "split/" + string(cpath.ParPar)
	splitIn, err := splitInput(c, p)
	if err != nil {
		return nil, err
	}
	return cpath.Split(c, distGraph(p), splitIn, cpath.ParPar)
}

// DistGraph is distGraph for the other stages that search the PAG (cpath
// export --otf2 marks the critical path in its archive).
func DistGraph(p *graph.PAG) *cpath.DistGraph { return distGraph(p) }

// distGraph is the algorithms' view of this rank's part of the PAG: the
// same rows, shared.
func distGraph(p *graph.PAG) *cpath.DistGraph {
	me := p.Part
	return &cpath.DistGraph{N: p.NumVertices(), Bounds: p.Bounds, Lo: p.Bounds[me], Hi: p.Bounds[me+1],
		InStart: p.InStart, InSrc: p.InSrc, InWeight: p.InWeight, Target: p.Target}
}

// splitInput labels the splits (on every rank of c together) for the
// global split algorithm: each vertex's split, and the vertices each split
// is left through, the hubs of the synchronisation points, then the target.
func splitInput(c mpix.Comm, p *graph.PAG) (*cpath.SplitInput, error) {
	if err := p.Splits(c); err != nil {
		return nil, err
	}
	graph.Timings().Mark(c.Rank(), "splits")
	return &cpath.SplitInput{Split: p.Split, Exit: append(slices.Clone(p.SyncHub), p.Target)}, nil
}

// topoCalls gives the topological heuristics this rank's calls and their
// threads' order (the sources of the program edges).
func topoCalls(p *graph.PAG) *cpath.TopoCalls {
	return &cpath.TopoCalls{Ranks: p.Ranks, RankStart: p.RankStart, RankLo: p.RankLo, RankHi: p.RankHi,
		Start: p.Start, End: p.End, Prev: p.ThreadPrev()}
}

// exactSegments is the exact path as the segments the heuristics are
// compared by (cpath.PathSegments): hubs and the run's start are no call's.
func exactSegments(g *graph.PAG, path cpath.Path, calls graph.CallTable) []cpath.TopoSegment {
	vertex := func(v int32) (int32, bool, int64, bool) {
		c, kind := g.Vertex(v)
		switch kind {
		case graph.VertexStart:
			return c, true, calls.At(c).Start, true
		case graph.VertexEnd:
			return c, false, calls.At(c).End, true
		}
		return 0, false, 0, false
	}
	return cpath.PathSegments(path, vertex, func(c int32) int32 { return int32(g.Rank(c)) })
}
