package graph

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/par"
	"github.com/cpath/cpath/trace"
)

// globalComms builds the run's communicator table from the ranks' tables,
// by name, and returns each rank's local-index → global-index map.
func globalComms(rankLogs []*rankData) ([]CommInfo, [][]int32) {
	var comms []CommInfo
	byName := map[string]int32{}
	gids := make([][]int32, len(rankLogs))
	for r, d := range rankLogs {
		gids[r] = make([]int32, len(d.comms))
		for i, c := range d.comms {
			if c.Name == "" {
				gids[r][i] = -1 // made by a call the logger does not wrap
				continue
			}
			id, ok := byName[c.Name]
			if !ok {
				id = int32(len(comms))
				byName[c.Name] = id
				comms = append(comms, CommInfo{Name: c.Name, Members: c.Members, Inter: len(c.Remote) > 0})
			}
			gids[r][i] = id
			if c.Sources != nil || c.Dests != nil {
				// Each member's log has its own neighbours.
				ci := &comms[id]
				if l := slices.Index(ci.Members, int32(r)); l >= 0 {
					if ci.Sources == nil {
						ci.Sources, ci.Dests = make([][]int32, len(ci.Members)), make([][]int32, len(ci.Members))
					}
					ci.Sources[l], ci.Dests[l] = c.Sources, c.Dests
				}
			}
		}
		d.comms = nil
	}
	return comms, gids
}

func gid(gids []int32, local uint32) int32 {
	if int(local) < len(gids) {
		return gids[local]
	}
	return -1
}

// waits decides for every owned completion whether it waited and for
// what: the latest-starting of what it needed, if that started after the
// completion call did (ties: the smaller call, then the dependency order).
// These are the wait states; the edges keep every dependency (edges).
// It also finds the run's first and last events.
func (b *builder) waits() error {
	p, lg := b.p, b.lg
	n := int32(len(lg.Op))
	b.pollRuns()
	b.partitionWaits()
	// The messages received out of their send order are found beside the
	// waits (both only read the messages and dependencies).
	wrongDone := make(chan bitset, 1)
	go func() { wrongDone <- b.wrongOrder() }()
	best := make([]int32, n)
	for i := range best {
		best[i] = -1
	}
	for i := range b.deps {
		d := &b.deps[i]
		s := b.causeStart(d)
		if d.dropped || s <= b.waitFrom(d.done) {
			continue
		}
		if j := best[d.done]; j >= 0 {
			e := &b.deps[j]
			t := b.causeStart(e)
			// Equal causes: the Late Sender first (the partner's send half
			// of a Sendrecv is what its receive needed), then the first.
			// (One call's dependencies on one cause of one kind share
			// both calls' ranks: only a partitioned transfer's can be
			// several, on one Pready.)
			if s < t || s == t && (d.cause > e.cause || d.cause == e.cause && d.kind >= e.kind) {
				continue
			}
		}
		best[d.done] = int32(i)
	}
	// The waits in call order, and the run's first start, last end and
	// the call of that end (the first among equals), by ranges of calls
	// on every core: each range's waits go after the ranges' before.
	wrong := <-wrongDone
	ranges := par.Bounds(n, 4*runtime.GOMAXPROCS(0))
	parts := len(ranges) - 1
	at := make([]int, parts+1) // where each range's waits go
	par.Do(parts, func(k int) {
		for _, i := range best[ranges[k]:ranges[k+1]] {
			if i >= 0 {
				at[k+1]++
			}
		}
	})
	for k := range parts {
		at[k+1] += at[k]
	}
	p.Waits = make([]Wait, at[parts])
	type span struct {
		t0, t1, lastEnd int64
		last            int32
	}
	spans := make([]span, parts)
	par.Do(parts, func(k int) {
		sp := span{t0: 1 << 62, t1: -1 << 62, lastEnd: -1 << 62, last: -1}
		j := at[k]
		for c := ranges[k]; c < ranges[k+1]; c++ {
			s, en := lg.Start[c], lg.End[c]
			if i := best[c]; i >= 0 {
				d := &b.deps[i]
				from := b.waitFrom(c)
				w := Wait{Call: c + p.CallLo, Cause: d.cause, Ns: min(b.causeStart(d), en) - from, From: from, Kind: d.kind, Rule: d.rule, Comm: lg.Comm[c]}
				if w.Comm < 0 {
					w.Comm = d.comm
				}
				// Dependency k < len(msgs) is message k's Late Sender.
				w.WrongOrder = d.kind == LateSender && wrong != nil && int(i) < len(b.msgs) && wrong.has(int(i))
				if d.part != 0 {
					w.Partitioned, w.Partition = true, max(d.part-1, -1)
				}
				p.Waits[j] = w
				j++
			}
			sp.t0, sp.t1 = min(sp.t0, s), max(sp.t1, en)
			if en > sp.lastEnd {
				sp.last, sp.lastEnd = c+p.CallLo, en
			}
		}
		spans[k] = sp
	})
	var t0, t1 int64 = 1 << 62, -1 << 62
	last, lastEnd := int32(-1), int64(-1<<62)
	for _, sp := range spans {
		t0, t1 = min(t0, sp.t0), max(t1, sp.t1)
		if sp.lastEnd > lastEnd {
			last, lastEnd = sp.last, sp.lastEnd
		}
	}
	// The matched messages were needed up to here (their order and
	// wrong-order marks); the PAG keeps what it reports of them
	// (MsgSend, MsgRecv, MsgBytes). Dropped, and collected, before the
	// graph's edges are made, where the build's memory peaks (on the
	// 16 M-call log, 300 MB that the edges' list then reuses).
	b.msgs = nil
	runtime.GC()
	x := []int64{t0, -t1}
	if err := b.c.Allreduce(x, mpix.Min); err != nil {
		return err
	}
	p.T0, p.T1 = x[0], -x[1]
	// The last event's call: the smallest among equals.
	cand := int64(1 << 62)
	if last >= 0 && lastEnd == p.T1 {
		cand = int64(last)
	}
	cand, err := mpix.AllreduceOne(b.c, cand, mpix.Min)
	if err != nil {
		return err
	}
	b.lastCall = int32(cand)
	return nil
}

// pollRuns finds the runs of unproductive polls (records of MPI_Test… or
// MPI_Iprobe calls that completed nothing) that lead, on their thread, to
// the call that completes what they polled for: such a call waits from
// the start of the run, not from its own start, and the polls' time is
// waiting, not work.
func (b *builder) pollRuns() {
	lg := b.lg
	b.runStart, b.runOf = map[int32]int64{}, map[int32]int32{}
	if !slices.ContainsFunc(lg.unproductive, func(w uint64) bool { return w != 0 }) {
		return // no polls: a look at each call took 0.07 s of the 16 M-call log's
	}
	type run struct {
		start int64
		polls []int32
	}
	var runs []run // by thread
	rank := -1
	for c := int32(0); c < int32(len(lg.Op)); c++ {
		if r := lg.rank(c); r != rank {
			rank, runs = r, runs[:0]
		}
		t := int(lg.Thread[c])
		for len(runs) <= t {
			runs = append(runs, run{})
		}
		ru := &runs[t]
		if lg.unproductive.has(int(c)) {
			if len(ru.polls) == 0 {
				ru.start = lg.Start[c]
			}
			ru.polls = append(ru.polls, c)
			continue
		}
		if len(ru.polls) > 0 {
			if completesPolled(trace.Op(lg.Op[c])) {
				b.runStart[c] = ru.start
				for _, q := range ru.polls {
					b.runOf[q] = c
				}
			}
			ru.polls = ru.polls[:0]
		}
	}
}

// completesPolled reports whether a call of op that follows a run of
// unproductive polls may complete what they polled for, and so waited
// from the run's start: a Wait or Test, a productive poll, a receive
// (of the message an MPI_Iprobe probed for), a probe, MPI_Win_wait (after
// MPI_Win_test). Any other call (a send, a collective, a computation's
// MPI_Irecv) ends the run without: the polls waited for something it does
// not complete, and its waiting, if any, begins when it does (HPCC's
// blocking sends after a run of probes had been charged with the probes'
// time as waiting for their receiver, from before they were posted).
func completesPolled(op trace.Op) bool {
	switch op.Class() {
	case trace.ClassComplete, trace.ClassRecv, trace.ClassSendRecv, trace.ClassProbe, trace.ClassMprobe, trace.ClassMrecv:
		return true
	}
	return op.IsPoll() || op == trace.OpWinWait
}

// waitFrom is when call c (local) began to wait for what it completes:
// its start, or that of the polls that led to it.
func (b *builder) waitFrom(c int32) int64 {
	if len(b.runStart) > 0 {
		if t, ok := b.runStart[c]; ok {
			return t
		}
	}
	return b.lg.Start[c]
}

// hubsOf is how many hub vertices a collective instance needs: one for
// those where everyone needs everyone, a chain of one per member (one per
// prefix of the members in rank order) for Scan and Exscan, none for
// rooted ones (their edges run from or to the root) and for those that
// moved no data (NoData: no edges).
func hubsOf(col *Collective) int32 {
	switch f := col.Op.Flow(); {
	case col.NoData:
		return 0
	case f.Prefix():
		return col.N
	case f.Synchronising():
		return 1
	}
	return 0
}

// hubCount is an instance's hubs, as its coordinator tells every rank.
type hubCount struct {
	Comm int32
	Seq  uint32
	Hubs int64
}

// hubTime is when a hub's members have all started, as the hub's owner
// is told.
type hubTime struct {
	T   int64
	Hub int32
	_   int32
}

// layout numbers the hubs, the same way at any number of analyzer ranks:
// every rank learns which instances the others coordinate and how many
// hubs each has, and the hubs are numbered by communicator and sequence
// number after the calls' vertices, the start vertex last. The last
// analyzer rank owns them (and the hubs' times, sent to it).
func (b *builder) layout() error {
	p, c := b.p, b.c
	size := c.Size()
	var mine []hubCount // the coordinated instances that have hubs
	for k := range p.Colls {
		col := &p.Colls[k]
		if h := hubsOf(col); h > 0 {
			mine = append(mine, hubCount{Comm: col.Comm, Seq: col.Seq, Hubs: int64(h)})
		}
	}
	all, err := c.Allgatherv(mpix.Bytes(mine))
	if err != nil {
		return err
	}
	insts, err := mpix.Concat[hubCount](all)
	if err != nil {
		return fmt.Errorf("graph: hub exchange: %v", err)
	}
	byInstance := func(x, y hubCount) int { return cmp.Or(cmp.Compare(x.Comm, y.Comm), cmp.Compare(x.Seq, y.Seq)) }
	slices.SortFunc(insts, byInstance)
	first := make([]int64, len(insts)+1) // first hub of each instance, in that order
	for k, x := range insts {
		first[k+1] = first[k] + x.Hubs
	}
	N := int64(2 * p.NumCalls())
	if N+first[len(insts)]+1 >= 1<<31-1 {
		return fmt.Errorf("graph: the graph has more than 2^31 vertices: too large for the analyzer")
	}
	p.Hubs = int32(first[len(insts)])
	p.Bounds = make([]int32, size+1)
	for q := 0; q < size; q++ {
		p.Bounds[q] = 2 * p.RankStart[p.PartRanks[q]]
	}
	p.StartVertex = int32(N) + p.Hubs
	p.Bounds[size] = p.StartVertex + 1
	p.Target = p.E(b.lastCall)

	// Each coordinated instance's first hub, and when each hub's members
	// (those it waits for) have all started: kept here for the edges, and
	// sent to the hubs' owner.
	b.collHub = make([]int32, len(p.Colls))
	b.hubTime = map[int32]int64{}
	var times []hubTime
	for k := range p.Colls {
		col := &p.Colls[k]
		b.collHub[k] = -1
		if hubsOf(col) == 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(insts, hubCount{Comm: col.Comm, Seq: col.Seq}, byInstance)
		h := int32(first[i])
		b.collHub[k] = h
		t := int64(-1 << 62)
		if col.Op.Flow().Synchronising() {
			for m := col.First; m < col.First+col.N; m++ {
				t = max(t, p.PostStart[m])
			}
			b.hubTime[h] = t
			times = append(times, hubTime{T: t, Hub: h})
			continue
		}
		for i, m := range b.scanOrder(col) {
			t = max(t, p.PostStart[m])
			b.hubTime[h+int32(i)] = t
			times = append(times, hubTime{T: t, Hub: h + int32(i)})
		}
	}
	send := make([][]byte, size)
	send[size-1] = mpix.Bytes(times)
	got, err := c.Alltoallv(send)
	if err != nil {
		return err
	}
	if p.Part == size-1 {
		p.HubTime = make([]int64, p.Hubs)
		for _, bs := range got {
			xs, err := mpix.FromBytes[hubTime](bs)
			if err != nil {
				return fmt.Errorf("graph: hub time exchange: %v", err)
			}
			for _, x := range xs {
				if x.Hub < 0 || x.Hub >= p.Hubs {
					return fmt.Errorf("graph: hub time exchange: hub %d of %d", x.Hub, p.Hubs)
				}
				p.HubTime[x.Hub] = x.T
			}
		}
	}
	return nil
}

// scanOrder returns the members of a Scan or Exscan instance (indices into
// CollPost) in the communicator's rank order: the order data flows in.
func (b *builder) scanOrder(col *Collective) []int32 {
	p := b.p
	pos := make(map[int32]int, len(p.Comms[col.Comm].Members))
	for i, w := range p.Comms[col.Comm].Members {
		pos[w] = i
	}
	ms := make([]int32, 0, col.N)
	for m := col.First; m < col.First+col.N; m++ {
		ms = append(ms, m)
	}
	slices.SortStableFunc(ms, func(x, y int32) int {
		return cmp.Compare(pos[int32(p.Rank(p.CollPost[x]))], pos[int32(p.Rank(p.CollPost[y]))])
	})
	return ms
}

// wireEdge is an edge shipped to the owner of its destination vertex.
type wireEdge struct {
	Dst, Src int32 // global vertex ids
	W        int64
	Kind     EdgeKind
	Replaces bool // the hub edge of a blocking member: its call edge is left out
	_        [6]byte
}

// depEdge is the kind of the edge dependency d makes, EdgeNone for none:
// a dependency dropped or duplicated, or a collective member's (the
// collectives' edges are made per instance, through hubs).
func depEdge(d *dep) EdgeKind {
	if d.dropped || d.dup {
		return EdgeNone
	}
	switch d.kind {
	case LateSender:
		return EdgeLateSender
	case LateReceiver:
		if d.rule == RuleProgress {
			return EdgeHeldSend
		}
		return EdgeLateReceiver
	case LatePost, EarlyWait:
		return EdgeRMA
	}
	return EdgeNone
}

// edge is an edge into an owned vertex, before the rows are built.
type edge struct {
	dst, src int32 // dst local, src global
	w        int64
	kind     EdgeKind
}

// edges builds the edges into the owned vertices (see the package
// comment): the coordinators make the collectives' edges and hubs and
// ship the edges to the owners of the completions; every rank adds its
// threads' program, launch and call edges and its messages'.
func (b *builder) edges() error {
	p, lg := b.p, b.lg
	n := int32(len(lg.Op))
	// The edges besides each call's program (or launch) and call edges:
	// the messages' (counted: half the dependencies make none) and the
	// collectives' (about two a member; more grow the array).
	dc := b.countDepEdges()
	es := edgeShipper{b: b, me: p.Part, out: make([][]wireEdge, b.c.Size()),
		extra: make([]edge, 0, dc.n()+2*len(p.CollPost)+64)}
	b.hubbed = newBitset(int(n))
	b.collectiveEdges(&es)
	if err := es.receive(); err != nil {
		return err
	}
	waitIdx := b.waitIndex()
	extra := b.messageEdges(es.extra, dc, waitIdx)
	// The dependencies were the build's largest arrays after the calls:
	// collect them now, so that the rows take their pages instead of
	// fresh ones (under GOGC 10 the rows alone would not start a cycle
	// first; on the 16 M-call halo log the heap peaked at 2010 MB, 1560
	// with this).
	b.deps, b.cache = nil, nil
	runtime.GC()
	b.rows(extra, b.waited(waitIdx))
	b.hubbed = nil
	return nil
}

// depChunks are the dependencies cut for the workers that count and
// make their edges, each chunk's edges at places of their own.
type depChunks struct {
	bounds []int // chunk k is dependencies [bounds[k], bounds[k+1])
	at     []int // where chunk k's edges go, from the first's; at[len-1] all of them
}

// n is the number of edges the dependencies make.
func (dc *depChunks) n() int { return dc.at[len(dc.at)-1] }

// countDepEdges counts, in parallel, the edges the dependencies make.
func (b *builder) countDepEdges() depChunks {
	dc := depChunks{bounds: par.Bounds(len(b.deps), 4*runtime.GOMAXPROCS(0))}
	dc.at = make([]int, len(dc.bounds))
	par.Do(len(dc.bounds)-1, func(k int) {
		for i := dc.bounds[k]; i < dc.bounds[k+1]; i++ {
			if depEdge(&b.deps[i]) != EdgeNone {
				dc.at[k+1]++
			}
		}
	})
	for k := 1; k < len(dc.at); k++ {
		dc.at[k] += dc.at[k-1]
	}
	return dc
}

// edgeShipper collects the edges a coordinator makes: those into owned
// vertices in extra, the others for their owners.
type edgeShipper struct {
	b     *builder
	me    int
	extra []edge
	out   [][]wireEdge
}

func (es *edgeShipper) ship(e wireEdge) {
	p := es.b.p
	if q := p.vertexOwner(e.Dst); q == es.me {
		es.extra = append(es.extra, edge{e.Dst - p.Bounds[es.me], e.Src, e.W, e.Kind})
		if e.Replaces {
			es.b.hubbed.set(int(e.Dst-p.Bounds[es.me]) >> 1)
		}
	} else {
		es.out[q] = append(es.out[q], e)
	}
}

// receive ships the edges to their owners and adds those shipped here to
// extra, checking that each goes into an owned call's end or hub.
func (es *edgeShipper) receive() error {
	p := es.b.p
	got, err := mpix.Ship(es.b.c, es.out)
	if err != nil {
		return err
	}
	es.out = nil
	lo := p.Bounds[es.me]
	nloc, hubBase := p.Bounds[es.me+1]-lo, 2*int32(len(es.b.lg.Op))
	for _, bs := range got {
		ws, err := mpix.FromBytes[wireEdge](bs)
		if err != nil {
			return err
		}
		for _, e := range ws {
			l := e.Dst - lo
			if l < 0 || l >= nloc || (l < hubBase && l&1 == 0) {
				return fmt.Errorf("graph: edge exchange: vertex %d is not an owned call's end or hub", e.Dst)
			}
			es.extra = append(es.extra, edge{l, e.Src, e.W, e.Kind})
			if e.Replaces {
				es.b.hubbed.set(int(l >> 1))
			}
		}
	}
	return nil
}

// collMembers is one collective instance's members: their posting and
// completing calls, when the posts started, the completions ended and
// began to wait.
type collMembers struct {
	post, done []int32
	ps, de, ds []int64
}

// collectiveEdges makes the edges of the instances this rank coordinates.
func (b *builder) collectiveEdges(es *edgeShipper) {
	p := b.p
	var nb neighborEdges
	for k := range p.Colls {
		col := &p.Colls[k]
		if col.NoData {
			continue // no order: the members' calls keep their own edges
		}
		lo, hi := col.First, col.First+col.N
		m := collMembers{post: p.CollPost[lo:hi], done: p.CollDone[lo:hi],
			ps: p.PostStart[lo:hi], de: p.DoneEnd[lo:hi], ds: b.doneStart[lo:hi]}
		switch flow := col.Op.Flow(); flow {
		default: // everyone needs everyone: through one hub
			h := b.collHub[k]
			ht := b.hubTime[h]
			for i := range m.post {
				es.ship(wireEdge{Dst: p.Hub(h), Src: p.S(m.post[i]), Kind: EdgeHubIn})
				if w := m.de[i] - max(ht, m.ds[i]); m.de[i] >= ht {
					es.ship(wireEdge{Dst: p.E(m.done[i]), Src: p.Hub(h), W: w, Kind: EdgeHubOut, Replaces: m.post[i] == m.done[i]})
				}
			}
		case trace.FlowScan, trace.FlowExscan:
			b.scanEdges(es, k, flow == trace.FlowExscan)
		case trace.FlowNeighbor:
			nb.add(es, col, &m)
		case trace.FlowFromRoot, trace.FlowToRoot:
			b.rootEdges(es, col, &m, flow == trace.FlowFromRoot)
		}
	}
}

// scanEdges makes the edges of prefix instance k: a chain of hubs in
// rank order, each member's completion after the hub of its prefix.
func (b *builder) scanEdges(es *edgeShipper, k int, exscan bool) {
	p := b.p
	h0 := b.collHub[k]
	for i, m := range b.scanOrder(&p.Colls[k]) {
		h := h0 + int32(i)
		es.ship(wireEdge{Dst: p.Hub(h), Src: p.S(p.CollPost[m]), Kind: EdgeHubIn})
		if i > 0 {
			es.ship(wireEdge{Dst: p.Hub(h), Src: p.Hub(h - 1), Kind: EdgeHubIn})
		}
		from := h // Scan: the prefix up to the member itself
		if exscan {
			from = h - 1 // Exscan: the ranks before it
		}
		if from < h0 {
			continue
		}
		if ht := b.hubTime[from]; p.DoneEnd[m] >= ht {
			w := p.DoneEnd[m] - max(ht, b.doneStart[m])
			es.ship(wireEdge{Dst: p.E(p.CollDone[m]), Src: p.Hub(from), W: w, Kind: EdgeHubOut})
		}
	}
}

// neighborEdges makes the edges of neighbourhood collectives, with
// scratch space kept from one instance to the next.
type neighborEdges struct {
	nb     *InNeighbors
	rk     []int32
	latest []int64
}

// add makes instance col's edges: each member's completion needs each
// in-neighbour's post; the transfer ends the member's call after its last
// in-neighbour arrived, so every edge weighs what follows the latest.
func (ne *neighborEdges) add(es *edgeShipper, col *Collective, m *collMembers) {
	p := es.b.p
	if ne.nb == nil {
		ne.nb = NewInNeighbors(p.Ranks, p.Comms)
	}
	ne.rk = ne.rk[:0]
	for i := range m.post {
		ne.rk = append(ne.rk, int32(p.Rank(m.post[i])))
	}
	ne.latest = append(ne.latest[:0], make([]int64, len(m.post))...)
	for i := range ne.latest {
		ne.latest[i] = -1 << 62
	}
	ne.nb.Each(col.Comm, ne.rk, func(i, j int) { ne.latest[i] = max(ne.latest[i], m.ps[j]) })
	ne.nb.Each(col.Comm, ne.rk, func(i, j int) {
		if m.de[i] >= m.ps[j] {
			es.ship(wireEdge{Dst: p.E(m.done[i]), Src: p.S(m.post[j]), W: m.de[i] - max(m.ps[j], m.ds[i], ne.latest[i]), Kind: EdgeCollective})
		}
	})
}

// rootEdges makes a rooted instance's edges: the root's post to every
// member's completion (fromRoot), or every member's post to the root's
// completion, the last one's transfer ending there.
func (b *builder) rootEdges(es *edgeShipper, col *Collective, m *collMembers, fromRoot bool) {
	p := b.p
	root := -1
	for i := range m.post {
		if int32(p.Rank(m.post[i])) == col.Root {
			root = i
		}
	}
	if root < 0 {
		return
	}
	pb := p.PostBytes[col.First : col.First+col.N]
	latest := int64(-1 << 62) // of the members a reduction's root waits for
	for i := range m.post {
		if i != root && PassesToRoot(pb[i]) {
			latest = max(latest, m.ps[i])
		}
	}
	for i := range m.post {
		if i == root || !PassesToRoot(pb[i]) {
			continue
		}
		if fromRoot {
			if w := m.de[i] - max(m.ps[root], m.ds[i]); m.de[i] >= m.ps[root] {
				es.ship(wireEdge{Dst: p.E(m.done[i]), Src: p.S(m.post[root]), W: w, Kind: EdgeCollective})
			}
		} else if w := m.de[root] - max(m.ps[i], m.ds[root], latest); m.de[root] >= m.ps[i] {
			es.ship(wireEdge{Dst: p.E(m.done[root]), Src: p.S(m.post[i]), W: w, Kind: EdgeCollective})
		}
	}
}

// waitIndex returns each owned call's wait (index in p.Waits, which holds
// at most one a call, in call order), -1 for none.
func (b *builder) waitIndex() func(c int32) int32 {
	p := b.p
	calls := make([]int32, len(p.Waits))
	for i, w := range p.Waits {
		calls[i] = w.Call - p.CallLo
	}
	return newSparseIndex(len(b.lg.Op), calls).at
}

// messageEdges appends the dependencies' edges to extra, in parallel:
// S(send) → E(receive completion) at the receiver, S(receive) → E(send
// completion) for sends that wait for their receiver, weighted by the
// transfer; general active target synchronisation likewise
// (graph/pscw.go).
func (b *builder) messageEdges(extra []edge, dc depChunks, waitIdx func(int32) int32) []edge {
	p, lg := b.p, b.lg
	first := len(extra)
	extra = slices.Grow(extra, dc.n())[:first+dc.n()]
	par.Do(len(dc.bounds)-1, func(k int) {
		j := first + dc.at[k]
		for i := dc.bounds[k]; i < dc.bounds[k+1]; i++ {
			d := &b.deps[i]
			kind := depEdge(d)
			if kind == EdgeNone {
				continue
			}
			// The transfer runs from the later of the cause's start and
			// when the completing call began to wait, and never from
			// before the last-arriving cause of a call that completed
			// several messages: an earlier message's transfer does not
			// include the wait for a later one.
			from := max(b.causeStart(d), b.waitFrom(d.done))
			if w := waitIdx(d.done); w >= 0 {
				from = max(from, b.waitFrom(d.done)+p.Waits[w].Ns)
			}
			extra[j] = edge{2*d.done + 1, p.S(d.cause), max(0, lg.End[d.done]-from), kind}
			j++
		}
	})
	return extra
}

// waited returns the time each owned call waited: the part of its span
// inside the waiting of the completion it belongs to (itself, or the call
// its run of unproductive polls led to), from that wait's start to its
// cause's.
func (b *builder) waited(waitIdx func(int32) int32) func(c int32) int64 {
	p, lg := b.p, b.lg
	interval := func(c int32) (from, to int64, ok bool) {
		if k := waitIdx(c); k >= 0 {
			from = b.waitFrom(c)
			return from, from + p.Waits[k].Ns, true
		}
		return 0, 0, false
	}
	waitOfRun := map[int32][2]int64{} // by call that ends a run of polls, its waiting
	for _, w := range p.Waits {
		if c := w.Call - p.CallLo; len(b.runStart) > 0 {
			if from, ok := b.runStart[c]; ok {
				waitOfRun[c] = [2]int64{from, from + w.Ns}
			}
		}
	}
	return func(c int32) int64 {
		from, to, ok := interval(c)
		if !ok && lg.unproductive.has(int(c)) {
			var iv [2]int64
			iv, ok = waitOfRun[b.runOf[c]]
			from, to = iv[0], iv[1]
		}
		if !ok {
			return 0
		}
		return max(0, min(lg.End[c], to)-max(lg.Start[c], from))
	}
}

// bigWeight is an edge weight too large for Weights' small form, set
// afterwards in rank order (Set appends to Big).
type bigWeight struct {
	i int32
	w int64
}

// rows builds the owned vertices' rows: every call's program or launch
// edge and call edge (its span less what it waited), and extra's edges.
func (b *builder) rows(extra []edge, waited func(int32) int64) {
	p, lg := b.p, b.lg
	ranges := b.countRows(extra)
	nloc := p.Bounds[p.Part+1] - p.Bounds[p.Part]
	ne := p.InStart[nloc]
	p.InSrc, p.InWeight, p.InKind = make([]int32, ne), MakeWeights(int(ne)), make([]EdgeKind, ne)
	// Each row's start serves as its fill cursor, which leaves it at the
	// row's end, the next row's start: shifted back by one row after.
	// Each owned rank's program (or launch) and call edges, in parallel:
	// a call's two rows are its rank's alone.
	base := p.Bounds[p.Part]
	bigs := make([][]bigWeight, max(lg.ranks, len(ranges)-1))
	par.Do(lg.ranks, func(r int) {
		walk := &threadWalk{g: lg, rank: r}
		own := func(dst, src int32, w int64, kind EdgeKind) {
			i := p.InStart[dst]
			p.InStart[dst]++
			p.InSrc[i], p.InKind[i] = src, kind
			if !p.InWeight.SetSmall(i, w) {
				bigs[r] = append(bigs[r], bigWeight{i, w})
			}
		}
		for cl := lg.rankStart[r]; cl < lg.rankStart[r+1]; cl++ {
			s, en := lg.Start[cl], lg.End[cl]
			if pr := walk.prev(cl); pr >= 0 {
				own(2*cl, base+2*pr+1, max(0, s-lg.End[pr]), EdgeProgram)
			} else {
				own(2*cl, p.StartVertex, max(0, s-p.T0), EdgeLaunch)
			}
			if !b.hubbed.has(int(cl)) {
				own(2*cl+1, base+2*cl, max(0, en-s-waited(cl)), EdgeCall)
			}
		}
	})
	setBigs := func() {
		for k, bs := range bigs {
			for _, x := range bs {
				p.InWeight.Set(x.i, x.w)
			}
			bigs[k] = bs[:0]
		}
	}
	setBigs()
	par.Do(len(ranges)-1, func(k int) {
		lo, hi := ranges[k], ranges[k+1]
		for _, e := range extra {
			if e.dst >= lo && e.dst < hi {
				i := p.InStart[e.dst]
				p.InStart[e.dst]++
				p.InSrc[i], p.InKind[i] = e.src, e.kind
				if !p.InWeight.SetSmall(i, e.w) {
					bigs[k] = append(bigs[k], bigWeight{i, e.w})
				}
			}
		}
	})
	setBigs()
	copy(p.InStart[1:], p.InStart[:nloc])
	p.InStart[0] = 0
}

// countRows sets p.InStart to the rows' starts, counted, and extra's
// edges placed, in parallel by ranges of vertices (returned): each worker
// reads all of extra but takes only the edges into its rows, so that no
// two write the same row and every row keeps extra's order.
func (b *builder) countRows(extra []edge) []int32 {
	p := b.p
	n := int32(len(b.lg.Op))
	nloc := p.Bounds[p.Part+1] - p.Bounds[p.Part]
	p.InStart = make([]int32, nloc+1)
	ranges := par.Bounds(nloc, runtime.GOMAXPROCS(0))
	rowSums := make([]int32, len(ranges)-1)
	par.Do(len(rowSums), func(k int) {
		lo, hi := ranges[k], ranges[k+1]
		for _, e := range extra {
			if e.dst >= lo && e.dst < hi {
				p.InStart[e.dst+1]++
			}
		}
		for v := lo; v < min(hi, 2*n); v++ {
			if v&1 == 0 || !b.hubbed.has(int(v>>1)) { // program or launch edge; call edge
				p.InStart[v+1]++
			}
		}
		var sum int32
		for v := lo; v < hi; v++ {
			sum += p.InStart[v+1]
			p.InStart[v+1] = sum
		}
		rowSums[k] = sum
	})
	par.Do(len(rowSums), func(k int) {
		var before int32
		for _, s := range rowSums[:k] {
			before += s
		}
		for v := ranges[k]; v < ranges[k+1] && before > 0; v++ {
			p.InStart[v+1] += before
		}
	})
	return ranges
}

// syncHead is a synchronisation point as syncPoints ships it, its calls
// (one per logged rank) behind it.
type syncHead struct {
	T    int64 // when the last member started
	Comm int32
	Seq  uint32
	Hub  int32
	_    int32
}

// syncPoints keeps the candidates whose edges satisfy the clock condition
// (no member ended before the last one started: paper §4.4's "no negative
// time") and shares them with every rank, in time order, with their hubs.
func (b *builder) syncPoints() error {
	p := b.p
	type sp struct {
		t     int64 // when the last member started
		comm  int32
		seq   uint32
		hub   int32
		calls []int32
	}
	var mine []sp
	for _, k := range b.syncCand {
		col := &p.Colls[k]
		last := b.hubTime[b.collHub[k]]
		ok := true
		calls := make([]int32, p.Ranks)
		for m := col.First; m < col.First+col.N; m++ {
			ok = ok && p.DoneEnd[m] >= last
			calls[p.Rank(p.CollPost[m])] = p.CollPost[m]
		}
		if ok {
			mine = append(mine, sp{last, col.Comm, col.Seq, p.Hub(b.collHub[k]), calls})
		}
	}
	e := mpix.NewEncoder(nil)
	mpix.PutList(e, mine, func(e *mpix.Encoder, s *sp) {
		mpix.PutRecord(e, syncHead{T: s.t, Comm: s.comm, Seq: s.seq, Hub: s.hub})
		mpix.PutRecords(e, s.calls)
	})
	all, err := b.c.Allgatherv(e.Bytes())
	if err != nil {
		return err
	}
	var sps []sp
	for q, bs := range all {
		d := mpix.NewDecoder(bs)
		theirs := mpix.ReadList(d, func(d *mpix.Decoder, s *sp) {
			h := mpix.ReadRecord[syncHead](d)
			*s = sp{t: h.T, comm: h.Comm, seq: h.Seq, hub: h.Hub, calls: mpix.ReadRecords[int32](d)}
		})
		err := d.Done()
		for _, s := range theirs {
			if err == nil && len(s.calls) != p.Ranks {
				err = fmt.Errorf("a point has %d calls for %d ranks", len(s.calls), p.Ranks)
			}
		}
		if err != nil {
			return fmt.Errorf("graph: analyzer rank %d's synchronisation points: %v", q, err)
		}
		sps = append(sps, theirs...)
	}
	// Every rank's calls in them must run in the same order, or they are
	// not one sequence of cuts: one that is out of order with the last kept
	// is left out.
	slices.SortFunc(sps, func(x, y sp) int {
		return cmp.Or(cmp.Compare(x.t, y.t), cmp.Compare(x.comm, y.comm), cmp.Compare(x.seq, y.seq))
	})
	for _, s := range sps {
		if n := len(p.Syncs); n > 0 {
			prev := p.Syncs[n-1]
			ok := true
			for r := range s.calls {
				ok = ok && s.calls[r] > prev[r]
			}
			if !ok {
				continue
			}
		}
		p.Syncs = append(p.Syncs, s.calls)
		p.SyncHub = append(p.SyncHub, s.hub)
	}
	return nil
}
