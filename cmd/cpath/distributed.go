package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/imbalance"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/report"
)

// distributedAlgos are the algorithms that run on the PAG distributed over
// the analyzer's ranks (one rank without mpirun).
var distributedAlgos = []string{"dijkstra", "delta", "split", "topo", "topo-shuffle"}

// analyzeDistributed is the analysis as an MPI job: every rank of c reads
// its share of the logs and builds its part of the PAG, the algorithm runs
// over the parts, and rank 0 gathers the path, the imbalance shares and
// the run's summary for the report. Errors are agreed on, so every rank
// returns the same one.
func analyzeDistributed(o analyzeOpts, dir string, c mpix.Comm, stdout io.Writer) error {
	prog := newProgress(c.Rank())
	defer prog.Done()
	t0 := time.Now()
	prog.Stage("reading the logs")
	run, err := graph.Load(dir)
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	prog.Stage("building the graph")
	b0, _ := c.Stats()
	p, err := graph.BuildPart(c, run)
	if err != nil {
		return err
	}
	b1, _ := c.Stats()
	gt := time.Since(t0)
	run = nil
	buildBytes, err := mpix.AllreduceOne(c, b1-b0, mpix.Sum)
	if err != nil {
		return err
	}
	prog.Stage("finding the critical path (" + o.algo + ")")
	g := cpath.FromPart(p)
	in := &report.Input{Dir: dir, Algo: o.algo, GraphTime: gt, Agreement: -1,
		Analyzer: &report.AnalyzerStats{Ranks: c.Size(), BuildBytes: buildBytes}}
	splitIn := &cpath.SplitInput{RankStart: p.RankStart, RankLo: p.RankLo, RankHi: p.RankHi, Syncs: p.Syncs}
	var res *cpath.DistResult
	var topo *cpath.TopoResult
	switch o.algo {
	case "dijkstra":
		res, err = cpath.ParallelDijkstra(c, g)
	case "delta":
		res, err = cpath.ParallelDeltaStepping(c, g, o.delta)
	case "split":
		in.Algo = "split/" + o.splitMode
		res, err = cpath.Split(c, g, splitIn, cpath.SplitMode(o.splitMode))
	case "topo", "topo-shuffle":
		topo, err = cpath.Topo(c, cpath.TopoFromPart(p), cpath.TopoOptions{Shuffle: o.algo == "topo-shuffle", Compress: o.compress})
		if err = mpix.Agree(c, err); err != nil {
			return err
		}
		// The exact path, to measure the heuristic's agreement with it.
		prog.Stage("finding the exact path for comparison")
		in.Analyzer.ExactAlgo = "split/" + string(cpath.ParPar)
		res, err = cpath.Split(c, g, splitIn, cpath.ParPar)
	}
	if err = mpix.Agree(c, err); err != nil {
		return fmt.Errorf("%s: %v", dir, strings.TrimPrefix(err.Error(), "cpath: "))
	}
	st := res.Stats
	if topo != nil {
		st = topo.Stats
	}
	in.Analyzer.Rounds, in.Analyzer.BytesSent, in.Analyzer.RawBytes, in.Analyzer.Splits = st.Rounds, st.BytesSent, st.RawBytes, st.Splits

	prog.Stage("gathering the report")
	// The calls the report names: the path's (and the heuristic's).
	var want []int32
	for _, v := range res.Path.Vertices {
		want = append(want, v>>1)
	}
	if topo != nil {
		for _, s := range topo.Segments {
			want = append(want, s.Call)
		}
	}
	calls, err := p.FetchCalls(c, want)
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	type share struct {
		Imbalance *imbalance.Result
		Colls     []graph.Collective
	}
	shares, err := graph.GatherGob(c, share{imbalance.AnalyzePart(p), p.Colls})
	if err = mpix.Agree(c, err); err != nil {
		return err
	}
	var dotEdges []report.DOTEdge
	if o.dot != "" {
		if dotEdges, err = condensedEdges(c, p, res.Path, calls); err != nil {
			return err
		}
	}
	if c.Rank() != 0 {
		return nil
	}
	// Rank 0: merge the shares (instances in communicator and sequence
	// order, as the one-process analysis lists them) and report.
	var colls []graph.Collective
	parts := make([]*imbalance.Result, len(shares))
	offsets := make([]int32, len(shares))
	for i, s := range shares {
		parts[i] = s.Imbalance
		offsets[i] = int32(len(colls))
		colls = append(colls, s.Colls...)
	}
	im := imbalance.Merge(parts, offsets)
	slices.SortFunc(im.Instances, func(a, b imbalance.Instance) int {
		x, y := &colls[a.Coll], &colls[b.Coll]
		return cmp.Or(cmp.Compare(x.Comm, y.Comm), cmp.Compare(x.Seq, y.Seq))
	})
	in.PAG = p.Summary(colls)
	in.Imbalance = im
	in.PathCalls = calls
	in.Path = res.Path
	if topo != nil {
		rankOf := func(call int32) int32 { return int32(p.Rank(call)) }
		exact := cpath.PathSegments(res.Path, calls.Time, rankOf)
		in.Agreement = cpath.Agreement(exact, topo.Segments)
		in.Path = cpath.Path{Length: topo.Length}
		for _, s := range topo.Segments {
			in.Heuristic = append(in.Heuristic, report.HeuristicSegment{Rank: int(s.Rank), Kind: s.Kind, Call: s.Call, Start: s.Start, End: s.End})
		}
	}
	sym := report.NewSymbolizer(in.PAG)
	in.Symbolize = sym.Lookup
	rep := report.Build(in)
	prog.Done()
	if o.dot != "" {
		if err := writeTo(o.dot, stdout, func(w io.Writer) error { return report.WriteCondensedDOT(w, dotEdges, p.LoadAddress) }); err != nil {
			return err
		}
	}
	return writeReport(o, rep, stdout)
}

// condensedEdges builds the condensed DOT graph (ranks × call sites) of the
// distributed PAG on rank 0: each rank sums the edges into its vertices,
// asking the owners of remote sources for their call sites.
func condensedEdges(c mpix.Comm, p *graph.Part, path cpath.Path, pc graph.CallTable) ([]report.DOTEdge, error) {
	var remote []int32
	for _, u := range p.InSrc {
		if x := u >> 1; x < p.CallLo || x >= p.CallHi {
			remote = append(remote, x)
		}
	}
	sites, err := p.FetchCalls(c, remote)
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	site := func(x int32) uint64 {
		if x >= p.CallLo && x < p.CallHi {
			return p.CallSite[x-p.CallLo]
		}
		return sites[x].CallSite
	}
	m := map[[4]uint64]*report.DOTEdge{}
	for l := 0; l+1 < len(p.InStart); l++ {
		v := int32(l) + 2*p.CallLo
		for e := p.InStart[l]; e < p.InStart[l+1]; e++ {
			if p.InKind[e] == graph.EdgeCall {
				continue
			}
			cu, cv := p.InSrc[e]>>1, v>>1
			report.AddDOTEdge(m, p.Rank(cu), site(cu), p.Rank(cv), site(cv), p.InWeight[e], false)
		}
	}
	mine := make([]report.DOTEdge, 0, len(m))
	for _, e := range m {
		mine = append(mine, *e)
	}
	all, err := graph.GatherGob(c, mine)
	if err = mpix.Agree(c, err); err != nil || c.Rank() != 0 {
		return nil, err
	}
	// Rank 0 marks the condensed edges the path runs along: it has the
	// path's calls' sites from FetchCalls.
	onPath := map[[4]uint64]bool{}
	vs := path.Vertices
	for i := 1; i < len(vs); i++ {
		u, v := vs[i-1], vs[i]
		if u>>1 == v>>1 {
			continue // inside a call
		}
		onPath[[4]uint64{uint64(p.Rank(u >> 1)), pc.CallSite(u >> 1), uint64(p.Rank(v >> 1)), pc.CallSite(v >> 1)}] = true
	}
	merged := map[[4]uint64]*report.DOTEdge{}
	for _, es := range all {
		for _, e := range es {
			k := [4]uint64{uint64(e.FromRank), e.FromSite, uint64(e.ToRank), e.ToSite}
			if x := merged[k]; x != nil {
				x.Ns += e.Ns
				x.N += e.N
			} else {
				e := e
				merged[k] = &e
			}
		}
	}
	out := make([]report.DOTEdge, 0, len(merged))
	for k, e := range merged {
		e.OnPath = onPath[k]
		out = append(out, *e)
	}
	return out, nil
}

// writeReport writes the JSON report and/or the text report, as asked.
func writeReport(o analyzeOpts, rep *report.Report, stdout io.Writer) error {
	if o.json != "" {
		if err := writeTo(o.json, stdout, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", " ")
			return enc.Encode(rep)
		}); err != nil {
			return err
		}
		if o.json == "-" {
			return nil
		}
	}
	if o.dot == "-" {
		return nil
	}
	return writeTo("-", stdout, func(w io.Writer) error {
		report.WriteText(w, rep, o.top)
		return nil
	})
}
