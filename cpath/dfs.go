package cpath

import "fmt"

// depthFirst is the one depth-first search over incoming edges that the
// sequential searches share, and, through its searchFrom, the replay's
// renumbering (TopoOrder): iterative (a path can be millions of vertices
// deep), with the colours in two bits a vertex so that they stay in
// cache. It starts at root, and with all then at every vertex not reached
// yet, in id order; it calls finish(v) once
// all of v's predecessors are finished (so in a topological order, every
// vertex after its predecessors, while they are still in cache), and
// returns how many vertices it finished. A cycle among the vertices it
// reaches is an error naming a vertex on it (ErrCycle).
func (s *Solver) depthFirst(g *Graph, root int32, all bool, finish func(v int32)) (int, error) {
	n := g.N
	if cap(s.stack) < n {
		s.stack = make([]int32, n)
		s.cursor = make([]int32, n)
	}
	words := (n + 31) / 32
	if cap(s.colour) < words {
		s.colour = make([]uint64, words)
	}
	clear(s.colour[:words])
	finished, err := s.searchFrom(g, root, finish)
	for r := int32(0); all && err == nil && int(r) < n; r++ {
		var k int
		k, err = s.searchFrom(g, r, finish)
		finished += k
	}
	return finished, err
}

// searchFrom is depthFirst from root, unless it was reached before.
func (s *Solver) searchFrom(g *Graph, root int32, finish func(v int32)) (int, error) {
	// The stack holds the vertices in progress and, at the same depth,
	// the next of their edges to follow.
	stack, cursor, colour := s.stack, s.cursor, s.colour // colour: bits 2(v%32) (seen) and 2(v%32)+1 (finished)
	if colour[root/32]>>(2*(root%32))&3 != 0 {
		return 0, nil
	}
	finished, top := 0, 0
	stack[0], cursor[0] = root, g.InStart[root]
	colour[root/32] |= 1 << (2 * (root % 32))
outer:
	for top >= 0 {
		v := stack[top]
		for c, end := cursor[top], g.InStart[v+1]; c < end; c++ {
			u := g.InSrc[c]
			switch colour[u/32] >> (2 * (u % 32)) & 3 {
			case 0:
				cursor[top] = c + 1
				top++
				stack[top], cursor[top] = u, g.InStart[u]
				colour[u/32] |= 1 << (2 * (u % 32))
				continue outer
			case 1:
				return finished, cycleError(u)
			}
		}
		colour[v/32] |= 2 << (2 * (v % 32))
		top--
		finish(v)
		finished++
	}
	return finished, nil
}

// TopoOrder calls finish with every vertex of g that is not in first, in
// a topological order (each after all its predecessors) that may follow
// first: first must be a topological order of a set of vertices that
// holds every predecessor of its members, such as the ancestors of the
// target that DAGPath searched (Solver.Finished), or empty. The order is
// the search from each vertex not reached yet, in id order. A cycle among
// them is an error naming a vertex on it.
func TopoOrder(g *Graph, first []int32, finish func(v int32)) error {
	if g == nil || g.N == 0 {
		return nil
	}
	if err := g.check(0); err != nil {
		return err
	}
	s := &Solver{colour: make([]uint64, (g.N+31)/32)}
	for _, v := range first {
		if v < 0 || int(v) >= g.N || s.colour[v/32]>>(2*(v%32))&3 != 0 {
			return fmt.Errorf("cpath: the order given has vertex %d twice or outside the graph (%d vertices)", v, g.N)
		}
		s.colour[v/32] |= 3 << (2 * (v % 32)) // finished
	}
	// The search's stack holds only vertices not finished yet.
	rest := g.N - len(first)
	s.stack, s.cursor = make([]int32, rest+1), make([]int32, rest+1)
	for w, colours := range s.colour {
		if colours == ^uint64(0) {
			continue // 32 vertices of first
		}
		for r := int32(32 * w); r < int32(min(32*w+32, g.N)); r++ {
			if _, err := s.searchFrom(g, r, finish); err != nil {
				return err
			}
		}
	}
	return nil
}
