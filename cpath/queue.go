package cpath

// entry is a queued vertex with the Dist it had when queued; it is stale
// once Dist[v] has grown past d (each (v, d) is queued at most once, since
// only a strict increase queues a vertex).
type entry struct {
	d int64
	v int32
	h int32 // the distributed searches: edges of the walk that gave d (a cycle bound); 0 elsewhere
}

// queue is a binary max-heap on d: with negated weights, the paper's
// minimum tentative distance is the maximum Dist. Equal d pop smallest v
// first, which only makes Stats reproducible; results do not depend on it.
type queue []entry

func above(a, b entry) bool { return a.d > b.d || (a.d == b.d && a.v < b.v) }

func (q *queue) push(e entry) {
	h := append(*q, e)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !above(e, h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
	*q = h
}

func (q *queue) pop() entry {
	h := *q
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	if n > 0 {
		i := 0
		for {
			c := 2*i + 1
			if c >= n {
				break
			}
			if r := c + 1; r < n && above(h[r], h[c]) {
				c = r
			}
			if !above(h[c], last) {
				break
			}
			h[i] = h[c]
			i = c
		}
		h[i] = last
	}
	*q = h
	return top
}

// tentry is a queued vertex of the time-ordered searches: a vertex is
// queued at most once at a time (a flag marks it), under its time t, and
// processed with the Dist it has then, so no entry is ever stale.
type tentry struct {
	t int64
	v int32
}

// tqueue is a binary max-heap on the vertices' times, the paper's "start
// the search from the vertex with the largest timestamp": latest first,
// the larger id first among equal times.
type tqueue []tentry

func tabove(a, b tentry) bool { return a.t > b.t || (a.t == b.t && a.v > b.v) }

func (q *tqueue) push(e tentry) {
	h := append(*q, e)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !tabove(e, h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
	*q = h
}

func (q *tqueue) pop() tentry {
	h := *q
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	if n > 0 {
		i := 0
		for {
			c := 2*i + 1
			if c >= n {
				break
			}
			if r := c + 1; r < n && tabove(h[r], h[c]) {
				c = r
			}
			if !tabove(h[c], last) {
				break
			}
			h[i] = h[c]
			i = c
		}
		h[i] = last
	}
	*q = h
	return top
}
