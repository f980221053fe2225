// Package traffic says who talks to whom in a run: the count and bytes of
// point-to-point messages and of collective data per (source, destination)
// world rank, the communicators with their calls and time (mpisee's view),
// and the message sizes in log2 buckets. Like package imbalance, it works
// on one analyzer rank's part of the PAG (Analyze) and the parts are summed
// on rank 0 (Merge), so the answer is the same at any number of analyzer
// ranks.
//
// Point-to-point: every matched message counts once for its (sender,
// receiver) pair, with the bytes the send logged (count × type size).
//
// Collectives carry no messages of their own in the logs (which algorithm
// MPI ran is not recorded), so an instance is counted by its data flow,
// once per pair of members that it moves data between, with the bytes
// each member's call logged (b_m):
//
//   - one to all (Bcast, Scatter, Scatterv): root → each other member m,
//     b_m (what m received);
//   - all to one (Reduce, Gather, Gatherv): each other member m → root, b_m
//     (what m contributed);
//   - all to all (Allreduce, Allgather, Allgatherv): each ordered pair
//     (i, j), i ≠ j, b_i (everyone's contribution reaches everyone);
//   - personalised all to all (Alltoall, Alltoallv, Alltoallw,
//     Reduce_scatter, Reduce_scatter_block): each ordered pair (i, j),
//     b_i / n for n members (the logged total spread evenly: exact for
//     Alltoall and Reduce_scatter_block, an average for the v/w forms);
//   - prefix (Scan, Exscan): (i, j) for each i before j in the
//     communicator's order, b_i;
//   - neighbourhood (Neighbor_allgather(v), Neighbor_alltoall(v,w) and
//     their I-forms): member i → each of its out-neighbours in the
//     communicator's topology (MPI_PROC_NULL slots left out), b_i / d for
//     d such neighbours (exact for allgather(v) and alltoall, an average
//     for the v/w forms).
//
// One-sided transfers (Put, Get, the accumulates, Fetch_and_op,
// Compare_and_swap and their request forms) count by (origin, target),
// with the bytes their calls logged, whichever way the data went.
//
// Barriers and communicator constructors move no data: they count on their
// communicator, not in the matrix or the sizes. Collectives on
// intercommunicators count in the sizes and on their communicator, not in
// the matrix. The non-blocking forms count as the blocking ones.
package traffic

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/trace"
)

// Pairs is a sparse matrix of (source, destination) world ranks: the pairs
// that exchanged anything, ascending by (Src, Dst), as parallel arrays.
type Pairs struct {
	Src, Dst []int32
	Count    []int64 // messages, or collective instances
	Bytes    []int64
}

// Len is the number of pairs.
func (m *Pairs) Len() int { return len(m.Src) }

// Histogram counts sizes in log2 buckets: bucket 0 holds size 0, bucket k
// > 0 sizes [2^(k-1), 2^k - 1] (bits.Len64 of the size).
type Histogram [65]int64

// Add counts one size.
func (h *Histogram) Add(size uint64) { h[bits.Len64(size)]++ }

// Bucket is one bucket of a histogram: Count sizes in [Lo, Hi].
type Bucket struct {
	Lo, Hi uint64
	Count  int64
}

// BucketRange returns bucket k's bounds.
func BucketRange(k int) (lo, hi uint64) {
	if k == 0 {
		return 0, 0
	}
	return 1 << (k - 1), 1<<(k-1) + (1<<(k-1) - 1)
}

// Buckets returns the buckets from the first non-empty one to the last,
// empty ones between included (none if the histogram is empty).
func (h *Histogram) Buckets() []Bucket {
	lo, hi := -1, -1
	for k, n := range h {
		if n > 0 {
			if lo < 0 {
				lo = k
			}
			hi = k
		}
	}
	out := []Bucket{}
	for k := lo; lo >= 0 && k <= hi; k++ {
		a, b := BucketRange(k)
		out = append(out, Bucket{a, b, h[k]})
	}
	return out
}

// Comm is what the run did on one communicator (by index in the PAG's
// Comms): the calls made on it and their time, summed over its members.
// Those are the calls whose log record names it: every call with a
// communicator argument, and MPI_Start and MPI_Request_free of a request
// made on it. Completions (Wait, Test…) name none; MPI_Init, MPI_Finalize,
// MPI_Abort and MPI_Pcontrol, which the logger records on MPI_COMM_WORLD,
// act on the process and count on none either.
type Comm struct {
	Calls  int64
	TimeNs int64
}

// Result is the traffic of a run, or of one analyzer rank's part of it.
type Result struct {
	P2P       Pairs
	Coll      Pairs
	RMA       Pairs     // one-sided transfers, by (origin, target): how many, and the bytes their calls logged
	P2PSizes  Histogram // one per matched message, by its bytes
	CollSizes Histogram // one per member call of a collective instance that moves data, by its bytes
	Comms     []Comm    // by index in the PAG's Comms
}

// movesData reports whether collectives of flow f move the program's data:
// not barriers, fences and constructors. What each member sends to whom
// follows from f: the root's bytes to every member (FlowFromRoot), every
// member's to the root (FlowToRoot), b_i to every other member (FlowAll),
// b_i / n to every other member (FlowSpread), b_i to every later member
// (Scan and Exscan), b_i / d to each of i's d out-neighbours
// (FlowNeighbor).
func movesData(f trace.Flow) bool {
	switch f {
	case trace.FlowNone, trace.FlowBarrier, trace.FlowFence:
		return false
	}
	return true
}

// onComm says which operations count on the communicator their record
// names (see Comm).
var onComm = func() (t [256]bool) {
	for o := range t {
		t[o] = trace.Op(o).Class() != trace.ClassOther
	}
	return t
}()

// Analyze computes one analyzer rank's share of the run's traffic: the
// messages into its ranks, the collective instances it coordinated and
// its calls. Merge the shares of all ranks with Merge.
func Analyze(p *graph.PAG) *Result {
	res := &Result{Comms: make([]Comm, len(p.Comms))}
	rank := rankFinder{start: p.RankStart, ranks: p.Ranks}

	// Point-to-point: the messages come grouped by (communicator, source,
	// destination, tag), so consecutive ones mostly share their pair.
	p2p := newPairTable(len(p.MsgSend) / 8)
	for k, send := range p.MsgSend {
		b := p.MsgBytes[k]
		p2p.add(int32(rank.of(send)), int32(rank.of(p.MsgRecv[k])), 1, int64(b))
		res.P2PSizes.Add(b)
	}
	res.P2P = p2p.pairs()

	res.Coll = collectives(p, &res.CollSizes)

	rma := newPairTable(len(p.RMATraffic))
	for _, t := range p.RMATraffic {
		rma.add(t.Origin, t.Target, t.Count, t.Bytes)
	}
	res.RMA = rma.pairs()

	for l, comm := range p.Comm {
		if comm >= 0 && onComm[p.Op[l]] {
			c := &res.Comms[comm]
			c.Calls++
			c.TimeNs += p.End[l] - p.Start[l]
		}
	}
	return res
}

// collectives attributes the coordinated collective instances to pairs
// (see the package comment) and counts their members' sizes. An instance
// of all its communicator's members goes into one accumulator per
// communicator and flow, expanded to pairs once at the end, so that an
// instance costs O(members), not O(members²); one that lacks members (a
// rank ended early) is expanded on its own.
func collectives(p *graph.PAG, sizes *Histogram) Pairs {
	t := newPairTable(64)
	accs := map[[2]int32]*flowAcc{}
	var order []*flowAcc // accs in first-use order, for a deterministic expansion
	var ranks []int32
	local := map[int32]map[int32]int{} // by topology communicator: each world rank's local rank
	for k := range p.Colls {
		c := &p.Colls[k]
		f := c.Op.Flow()
		if !movesData(f) {
			continue
		}
		members := c.First + c.N
		for m := c.First; m < members; m++ {
			sizes.Add(p.PostBytes[m])
		}
		info := &p.Comms[c.Comm]
		if info.Inter {
			continue
		}
		ranks = ranks[:0]
		for m := c.First; m < members; m++ {
			ranks = append(ranks, int32(p.Rank(p.CollPost[m])))
		}
		bytes := p.PostBytes[c.First:members]
		switch f {
		case trace.FlowNeighbor:
			if info.Dests == nil {
				continue
			}
			pos := local[c.Comm]
			if pos == nil {
				pos = make(map[int32]int, len(info.Members))
				for l, w := range info.Members {
					pos[w] = l
				}
				local[c.Comm] = pos
			}
			for i, r := range ranks {
				l, ok := pos[r]
				if !ok {
					continue
				}
				n := 0
				for _, d := range info.Dests[l] {
					if d >= 0 {
						n++
					}
				}
				for _, d := range info.Dests[l] {
					if d >= 0 {
						t.add(r, d, 1, int64(bytes[i])/int64(n))
					}
				}
			}
			continue
		case trace.FlowFromRoot, trace.FlowToRoot:
			for i, r := range ranks {
				if r == c.Root || c.Root < 0 {
					continue
				}
				if f == trace.FlowFromRoot {
					t.add(c.Root, r, 1, int64(bytes[i]))
				} else {
					t.add(r, c.Root, 1, int64(bytes[i]))
				}
			}
			continue
		}
		if int(c.N) != len(info.Members) {
			a := newFlowAcc(f, ranks, info.Members)
			a.addInstance(bytes)
			a.expand(t)
			continue
		}
		// Members come in call order, that is in world rank order: the
		// same member order at every instance of the communicator.
		key := [2]int32{c.Comm, int32(f)}
		a := accs[key]
		if a == nil {
			a = newFlowAcc(f, ranks, info.Members)
			accs[key] = a
			order = append(order, a)
		}
		a.addInstance(bytes)
	}
	for _, a := range order {
		a.expand(t)
	}
	return t.pairs()
}

// flowAcc sums the instances of one flow on one set of members.
type flowAcc struct {
	flow  trace.Flow
	ranks []int32 // world ranks of the members, ascending
	pos   []int32 // by member: its place in the communicator's order (Scan, Exscan)
	count int64   // instances
	bytes []int64 // by member: Σ over instances of what it sends each receiving member
}

func newFlowAcc(f trace.Flow, ranks []int32, commMembers []int32) *flowAcc {
	a := &flowAcc{flow: f, ranks: slices.Clone(ranks), bytes: make([]int64, len(ranks))}
	if f.Prefix() {
		a.pos = make([]int32, len(ranks))
		for local, w := range commMembers {
			if i, ok := slices.BinarySearch(a.ranks, w); ok {
				a.pos[i] = int32(local)
			}
		}
	}
	return a
}

// addInstance adds an instance whose members logged bytes (in member
// order).
func (a *flowAcc) addInstance(bytes []uint64) {
	a.count++
	n := uint64(len(bytes))
	for i, b := range bytes {
		if a.flow == trace.FlowSpread {
			b /= n
		}
		a.bytes[i] += int64(b)
	}
}

// expand adds the accumulated instances to t, pair by pair.
func (a *flowAcc) expand(t *pairTable) {
	for i, src := range a.ranks {
		for j, dst := range a.ranks {
			if i == j || a.flow.Prefix() && a.pos[i] >= a.pos[j] {
				continue
			}
			t.add(src, dst, a.count, a.bytes[i])
		}
	}
}

// Merge sums the shares of the analyzer ranks into the run's traffic.
func Merge(shares []*Result) *Result {
	res := &Result{}
	var p2p, coll, rma []*Pairs
	for _, s := range shares {
		p2p, coll, rma = append(p2p, &s.P2P), append(coll, &s.Coll), append(rma, &s.RMA)
		for k := range s.P2PSizes {
			res.P2PSizes[k] += s.P2PSizes[k]
			res.CollSizes[k] += s.CollSizes[k]
		}
		if res.Comms == nil {
			res.Comms = make([]Comm, len(s.Comms))
		}
		for i, c := range s.Comms {
			res.Comms[i].Calls += c.Calls
			res.Comms[i].TimeNs += c.TimeNs
		}
	}
	res.P2P, res.Coll, res.RMA = mergePairs(p2p), mergePairs(coll), mergePairs(rma)
	return res
}

// mergePairs sums sparse matrices.
func mergePairs(ms []*Pairs) Pairs {
	type cell struct {
		key          uint64
		count, bytes int64
	}
	var cells []cell
	for _, m := range ms {
		for i := range m.Src {
			cells = append(cells, cell{pairKey(m.Src[i], m.Dst[i]), m.Count[i], m.Bytes[i]})
		}
	}
	slices.SortFunc(cells, func(a, b cell) int { return cmp.Compare(a.key, b.key) })
	var out Pairs
	for i := 0; i < len(cells); {
		c := cells[i]
		for i++; i < len(cells) && cells[i].key == c.key; i++ {
			c.count += cells[i].count
			c.bytes += cells[i].bytes
		}
		out.Src = append(out.Src, int32(c.key>>32))
		out.Dst = append(out.Dst, int32(uint32(c.key)))
		out.Count = append(out.Count, c.count)
		out.Bytes = append(out.Bytes, c.bytes)
	}
	return out
}

func pairKey(src, dst int32) uint64 { return uint64(uint32(src))<<32 | uint64(uint32(dst)) }

// pairTable sums counts and bytes by (source, destination): open
// addressing over flat arrays, with the last pair remembered (messages
// come in runs of one pair).
type pairTable struct {
	keys         []uint64 // empty slots hold emptyKey
	count, bytes []int64
	n            int
	last         int
}

const emptyKey = ^uint64(0)

func newPairTable(hint int) *pairTable {
	size := 16
	for size < 2*hint {
		size *= 2
	}
	t := &pairTable{keys: make([]uint64, size), count: make([]int64, size), bytes: make([]int64, size), last: -1}
	for i := range t.keys {
		t.keys[i] = emptyKey
	}
	return t
}

func (t *pairTable) add(src, dst int32, count, bytes int64) {
	k := pairKey(src, dst)
	if t.last >= 0 && t.keys[t.last] == k {
		t.count[t.last] += count
		t.bytes[t.last] += bytes
		return
	}
	mask := uint64(len(t.keys) - 1)
	i := (k * 0x9E3779B97F4A7C15) >> 20 & mask
	for t.keys[i] != k {
		if t.keys[i] == emptyKey {
			t.keys[i] = k
			t.n++
			if 2*t.n > len(t.keys) {
				t.grow()
				t.add(src, dst, count, bytes)
				return
			}
			break
		}
		i = (i + 1) & mask
	}
	t.count[i] += count
	t.bytes[i] += bytes
	t.last = int(i)
}

func (t *pairTable) grow() {
	old := *t
	*t = *newPairTable(len(old.keys))
	for i, k := range old.keys {
		if k != emptyKey {
			t.add(int32(k>>32), int32(uint32(k)), old.count[i], old.bytes[i])
		}
	}
	t.last = -1
}

// pairs returns the table's pairs in (source, destination) order.
func (t *pairTable) pairs() Pairs {
	idx := make([]int, 0, t.n)
	for i, k := range t.keys {
		if k != emptyKey {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(t.keys[a], t.keys[b]) })
	m := Pairs{Src: make([]int32, len(idx)), Dst: make([]int32, len(idx)), Count: make([]int64, len(idx)), Bytes: make([]int64, len(idx))}
	for o, i := range idx {
		m.Src[o], m.Dst[o], m.Count[o], m.Bytes[o] = int32(t.keys[i]>>32), int32(uint32(t.keys[i])), t.count[i], t.bytes[i]
	}
	return m
}

// rankFinder finds the rank of calls that mostly come in runs of one rank.
type rankFinder struct {
	start []int32
	ranks int
	r     int
}

func (f *rankFinder) of(c int32) int {
	if c < f.start[f.r] || c >= f.start[f.r+1] {
		lo, hi := 0, f.ranks
		for lo < hi { // the first rank whose calls end after c
			m := int(uint(lo+hi) >> 1)
			if f.start[m+1] > c {
				hi = m
			} else {
				lo = m + 1
			}
		}
		f.r = lo
	}
	return f.r
}
