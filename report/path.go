package report

import (
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// pathBuilder turns the critical path into the report's segments and
// sums them by rank and by operation as it goes.
type pathBuilder struct {
	in     *Input
	g      *graph.PAG
	cp     CriticalPath
	byRank []RankShare
	byOp   map[string]*opAcc
	opAccs [257]*opAcc // by operation; computation is opAccs[0] (OpInvalid), launch opAccs[launchOp]
	sites  map[[2]uint64]siteName
	rank   int // the rank of the last call looked up (rankOf)
}

type opAcc struct {
	ns    int64
	count int
}

// criticalPath turns the path's vertices (or the heuristic's segments)
// into segments and profiles.
func criticalPath(in *Input) CriticalPath {
	g := in.PAG
	b := &pathBuilder{in: in, g: g, byRank: make([]RankShare, g.Ranks), byOp: map[string]*opAcc{}, sites: map[[2]uint64]siteName{},
		cp: CriticalPath{Algo: in.Algo, LengthNs: in.Path.Length, Segments: make([]Segment, 0, max(len(in.Path.Vertices)-1, len(in.Heuristic)))}}
	// (Sized up front: a heuristic's path has a segment per call on it,
	// hundreds of thousands on a real run, each copied at every growth.)
	for i := range b.byRank {
		b.byRank[i].Rank = i
	}
	b.heuristic()
	b.exact()
	return b.finish()
}

// acc adds a segment of ns to operation op's sum (launchOp: the launch,
// OpInvalid: computation).
func (b *pathBuilder) acc(op int, ns int64) {
	a := b.opAccs[op]
	if a == nil {
		name := Computation
		switch op {
		case launchOp:
			name = Launch
		case int(trace.OpInvalid):
		default:
			name = trace.Op(op).String()
		}
		if a = b.byOp[name]; a == nil {
			a = &opAcc{}
			b.byOp[name] = a
		}
		b.opAccs[op] = a
	}
	a.ns += ns
	a.count++
}

// add appends seg, of kind seg.Kind and operation op, to the path and
// its sums.
func (b *pathBuilder) add(seg Segment, op trace.Op) {
	ns := seg.EndNs - seg.StartNs
	r := &b.byRank[seg.Rank]
	switch seg.Kind {
	case "launch":
		r.LaunchNs += ns
		b.acc(launchOp, ns)
	case "compute":
		r.ComputeNs += ns
		b.acc(int(trace.OpInvalid), ns)
	case "io":
		r.IONs += ns
		b.acc(int(op), ns)
	case "transfer":
		r.TransferNs += ns
		b.acc(int(op), ns)
	default:
		r.MPINs += ns
		b.acc(int(op), ns)
	}
	b.cp.Segments = append(b.cp.Segments, seg)
}

// rankOf is the rank of call c: the path stays on a rank for long
// stretches, so from the last one.
func (b *pathBuilder) rankOf(c int32) int {
	if c < b.g.RankStart[b.rank] || c >= b.g.RankStart[b.rank+1] {
		b.rank = b.g.Rank(c)
	}
	return b.rank
}

// name names seg's call site, ci's, each of a run's few sites once.
func (b *pathBuilder) name(seg *Segment, ci *graph.CallInfo) {
	k := [2]uint64{uint64(seg.Rank), ci.CallSite}
	n, ok := b.sites[k]
	if !ok {
		n.site, n.function = b.in.site(seg.Rank, ci.CallSite)
		b.sites[k] = n
	}
	seg.Callsite, seg.Function = n.site, n.function
	seg.caller = b.in.callers.of(seg.Rank, ci.Site) + 1
}

// heuristic adds the segments of a topological heuristic's path.
func (b *pathBuilder) heuristic() {
	g := b.g
	for _, h := range b.in.Heuristic {
		ci := b.in.PathCalls.At(h.Call)
		seg := Segment{Rank: h.Rank, Op: ci.Op.String(), StartNs: h.Start - g.T0, EndNs: h.End - g.T0, Vertex: 2 * h.Call}
		b.name(&seg, &ci)
		switch {
		case h.Kind == 'c':
			seg.Kind = "compute"
		case ci.Op.IsIO() || ci.FileIO:
			seg.Kind, seg.Vertex = "io", seg.Vertex+1 // E(Call)
		default:
			seg.Kind, seg.Vertex = "mpi", seg.Vertex+1
		}
		b.add(seg, ci.Op)
	}
}

// exact adds the segments of the exact path: one for each edge between
// its vertices but its hubs (a hub joins the start of the last member to
// arrive with each member's end, so the stretch across it is one).
func (b *pathBuilder) exact() {
	g := b.g
	type pv struct {
		call int32
		kind graph.VertexKind
	}
	vs := make([]pv, 0, len(b.in.Path.Vertices))
	for _, v := range b.in.Path.Vertices {
		if c, kind := g.Vertex(v); kind != graph.VertexHub {
			vs = append(vs, pv{c, kind})
		}
	}
	time := func(x pv, info *graph.CallInfo) int64 {
		switch x.kind {
		case graph.VertexStart:
			return info.Start
		case graph.VertexEnd:
			return info.End
		}
		return g.T0
	}
	// Each vertex's call looked up once: u's is the previous v's.
	var infoU, infoV graph.CallInfo
	if len(vs) > 0 {
		infoV = b.in.PathCalls.At(vs[0].call)
	}
	for i := 1; i < len(vs); i++ {
		u, v := vs[i-1], vs[i]
		infoU, infoV = infoV, b.in.PathCalls.At(v.call)
		rv := b.rankOf(v.call)
		op := infoV.Op
		seg := Segment{Rank: rv, Op: op.String(), StartNs: time(u, &infoU) - g.T0, EndNs: time(v, &infoV) - g.T0,
			Vertex: 2*v.call + int32(v.kind)}
		b.name(&seg, &infoV)
		across := b.rankOf(u.call) != rv
		switch {
		case u.kind == graph.VertexRun: // the run's start → the thread's first call
			seg.Kind = "launch"
		case across && (op.IsIO() || infoV.FileIO):
			// A collective file operation after its last member arrived:
			// the member's I/O (its part, or the part it waits for), not
			// a message's transfer.
			seg.Kind = "io"
		case across && op.IsWorldBarrier():
			// MPI_Init after its last rank arrived: MPI's start-up, not a
			// message's transfer.
			seg.Kind = "mpi"
		case across:
			seg.Kind = "transfer"
		case u.kind == graph.VertexEnd: // E(c) → S(next): between calls
			seg.Kind = "compute"
		case op.IsIO() || infoV.FileIO:
			seg.Kind = "io" // MPI-IO, or a completion of file requests
		default:
			seg.Kind = "mpi"
		}
		b.add(seg, op)
	}
}

// finish gives the shares of the sums.
func (b *pathBuilder) finish() CriticalPath {
	cp := b.cp
	for i := range b.byRank {
		r := &b.byRank[i]
		if cp.LengthNs > 0 {
			r.Share = float64(r.LaunchNs+r.ComputeNs+r.MPINs+r.IONs+r.TransferNs) / float64(cp.LengthNs)
		}
	}
	cp.ByRank = b.byRank
	for op, a := range b.byOp {
		s := OpShare{Op: op, Ns: a.ns, Count: a.count}
		if cp.LengthNs > 0 {
			s.Share = float64(a.ns) / float64(cp.LengthNs)
		}
		cp.ByOp = append(cp.ByOp, s)
	}
	sortByOp(cp.ByOp)
	if cp.ByOp == nil {
		cp.ByOp = []OpShare{}
	}
	return cp
}
