package graph

import (
	"iter"
	"math"
)

// Weights are the edges' weights in ns, 4 bytes an edge: a weight in
// [0, 2^31) is stored as itself, any other (a stretch of 2.1 s or more; a
// negative one, which the checks refuse) as -1-k, its value in Big[k]. A
// PAG's edges are the stretches between consecutive events, nearly all
// short: 8 bytes an edge were 300 MB of the 16 M-call halo log's graph.
type Weights struct {
	W   []int32
	Big []int64
}

// MakeWeights makes n weights of 0.
func MakeWeights(n int) Weights { return Weights{W: make([]int32, n)} }

// WeightsOf stores xs.
func WeightsOf(xs []int64) Weights {
	w := Weights{W: make([]int32, 0, len(xs))}
	for _, x := range xs {
		w.Append(x)
	}
	return w
}

// Len is the number of weights.
func (w *Weights) Len() int { return len(w.W) }

// At is weight j.
func (w *Weights) At(j int32) int64 {
	if x := w.W[j]; x >= 0 {
		return int64(x)
	}
	return w.Big[-1-int(w.W[j])]
}

// code is how x is stored in W, adding it to Big if it does not fit.
func (w *Weights) code(x int64) int32 {
	if x >= 0 && x <= math.MaxInt32 {
		return int32(x)
	}
	w.Big = append(w.Big, x)
	return int32(-len(w.Big))
}

// Set makes weight j x.
func (w *Weights) Set(j int32, x int64) { w.W[j] = w.code(x) }

// SetSmall makes weight j x if x is stored in W itself, and says whether
// it was; it does not touch Big, so goroutines may call it at once on
// different j (a weight it refuses goes in by Set afterwards).
func (w *Weights) SetSmall(j int32, x int64) bool {
	if x < 0 || x > math.MaxInt32 {
		return false
	}
	w.W[j] = int32(x)
	return true
}

// Append adds weight x at the end.
func (w *Weights) Append(x int64) { w.W = append(w.W, w.code(x)) }

// Slice is weights [a, b), sharing w's storage.
func (w *Weights) Slice(a, b int32) Weights { return Weights{W: w.W[a:b], Big: w.Big} }

// All yields the weights in order.
func (w *Weights) All() iter.Seq[int64] {
	return func(yield func(int64) bool) {
		for j := range w.W {
			if !yield(w.At(int32(j))) {
				return
			}
		}
	}
}

// Int64s is the weights as a plain slice.
func (w *Weights) Int64s() []int64 {
	out := make([]int64, 0, len(w.W))
	for x := range w.All() {
		out = append(out, x)
	}
	return out
}
