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
// in which completed first. recvsByMatch uses both.

// recvsByMatch orders one key's receives (recvs, in posting order) for
// pairing with its sends (sends, in posting order), receive m with send m,
// where the receiver's threads called MPI at once. Each send in turn
// takes, of the unpaired receives posted by its start, the earliest
// posted (MPI's rule), unless one of them completed before the next send
// started: that one can have received no later message, so it takes this
// one (of several such, the first to complete). Posting order alone
// paired 1-10 % of the messages of threadmatch.c under MPICH wrongly, and
// the wrong pairs ran backwards by up to 10 ms; completion order alone
// paired 10-70 % wrongly under either MPI, as blocked threads wake up in
// no particular order. sendStart, recvStart and recvEnd give the ends'
// times by their index.
func recvsByMatch(sends, recvs []int32, sendStart, recvStart, recvEnd func(int32) int64) []int32 {
	const window = 256 // receives looked at for each send: bounds the work where many are posted ahead
	n := min(len(sends), len(recvs))
	out := make([]int32, 0, n)
	used := make([]bool, len(recvs))
	first := 0 // the first unpaired receive
	for m := 0; m < n; m++ {
		for used[first] {
			first++
		}
		next := int64(1<<63 - 1) // when the next send started
		if m+1 < len(sends) {
			next = sendStart(sends[m+1])
		}
		posted := max(sendStart(sends[m]), recvStart(recvs[first]))
		pick, pickEnd := first, recvEnd(recvs[first])
		for q, seen := first+1, 0; q < len(recvs) && seen < window && recvStart(recvs[q]) <= posted; q++ {
			if used[q] {
				continue
			}
			seen++
			if e := recvEnd(recvs[q]); e < pickEnd {
				pick, pickEnd = q, e
			}
		}
		if pickEnd >= next {
			pick = first
		}
		used[pick] = true
		out = append(out, recvs[pick])
	}
	return out
}
