package graph

import "math/bits"

// sparseIndex numbers a sorted subset of 0..n-1 in order: a bit per
// element and a running count per 64, so that finding an element's number
// is two reads, in n/8 + n/16 bytes (a map of a million elements takes
// hundreds of MB; an int32 per element, 4n bytes).
type sparseIndex struct {
	has   bitset  // i is in the subset
	below []int32 // by word of has: the elements before it
}

// newSparseIndex indexes the sorted, distinct ids among 0..n-1.
func newSparseIndex(n int, ids []int32) sparseIndex {
	x := sparseIndex{has: newBitset(n)}
	for _, i := range ids {
		x.has.set(int(i))
	}
	x.below = make([]int32, len(x.has))
	k := int32(0)
	for w, word := range x.has {
		x.below[w] = k
		k += int32(bits.OnesCount64(word))
	}
	return x
}

// at is i's number in the subset, -1 if it is not in it.
func (x sparseIndex) at(i int32) int32 {
	if i < 0 || int(i) >= 64*len(x.has) || !x.has.has(int(i)) {
		return -1
	}
	w := i >> 6
	return x.below[w] + int32(bits.OnesCount64(x.has[w]&(1<<(i&63)-1)))
}
