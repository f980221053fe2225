package graph

// Matching on a rank whose threads call MPI at once (MPI_THREAD_MULTIPLE).
//
// MPI matches the messages of one key in the order they were sent against
// the receives in the order they were posted. On one thread at a time
// both orders are the log's. With threads they are the order in which
// the calls entered MPI, which the log shows only by the calls' starts
// (postOrder): exactly where the calls are far apart, not where several
// threads posted within the time it takes to enter MPI. Receives posted
// together by several threads are the common case (a pool of receiver
// threads blocked in MPI_Recv): which got the first message shows only
// in which completed first. byMatch uses both, and so for synchronous sends
// posted together by several threads.

// byMatch orders one key's ends of one side (others, in posting order)
// for pairing with the ends of the other side (ones, in posting order),
// one m with other m, where the threads of others' rank called MPI at
// once. For receives (others) against sends (ones): each send in turn
// takes, of the unpaired receives posted by its start, the earliest
// posted (MPI's rule), unless one of them completed before the next send
// started: that one can have received no later message, so it takes this
// one (of several such, the first to complete). Posting order alone
// paired 1-10 % of the messages of threadmatch.c under MPICH wrongly, and
// the wrong pairs ran backwards by up to 10 ms; completion order alone
// paired 10-70 % wrongly under either MPI, as blocked threads wake up in
// no particular order. For synchronous sends (others) against receives
// (ones) the same holds the other way round: a synchronous send that
// completed before the next receive was posted was matched by no later
// one (a send of another mode may complete before it is matched: its
// completion says nothing). oneStart, otherStart and otherEnd give the
// ends' times by their index, otherPostEnd when the call that posted an
// other ended.
//
// It also counts its guesses: the ones paired with the earliest posted
// other although no completion said so and another other, posted by then,
// was being posted at the same time (its post call started before the
// earliest's ended, so on another thread): MPI may have queued either
// first. A wrong guess swaps the partners of two messages.
func byMatch(ones, others []int32, oneStart, otherStart, otherEnd, otherPostEnd func(int32) int64) (order []int32, guesses int) {
	const window = 256 // ends looked at for each one: bounds the work where many are posted ahead
	n := min(len(ones), len(others))
	out := make([]int32, 0, n)
	used := make([]bool, len(others))
	first := 0 // the first unpaired other
	for m := 0; m < n; m++ {
		for used[first] {
			first++
		}
		next := int64(1<<63 - 1) // when the next one started
		if m+1 < len(ones) {
			next = oneStart(ones[m+1])
		}
		posted := max(oneStart(ones[m]), otherStart(others[first]))
		pick, pickEnd := first, otherEnd(others[first])
		for q, seen := first+1, 0; q < len(others) && seen < window && otherStart(others[q]) <= posted; q++ {
			if used[q] {
				continue
			}
			seen++
			if e := otherEnd(others[q]); e < pickEnd {
				pick, pickEnd = q, e
			}
		}
		if pickEnd >= next {
			pick = first
			for q, seen := first+1, 0; q < len(others) && seen < window && otherStart(others[q]) <= posted; q++ {
				if used[q] {
					continue
				}
				seen++
				if otherStart(others[q]) < otherPostEnd(others[first]) {
					guesses++
					break
				}
			}
		}
		used[pick] = true
		out = append(out, others[pick])
	}
	return out, guesses
}
