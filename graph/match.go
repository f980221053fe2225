package graph

// Matching: the sends and receives of every key paired in posting order,
// per thread where MPI orders them (threadmatch.go), and the dependencies
// a message puts between its ends (Late Sender, Late Receiver).

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/par"
	"github.com/cpath/cpath/trace"
)

// defaultEagerLimit is the eager limit of a run whose logs record none
// (a foreign trace, an MPI without them): Open MPI's TCP limit, MPICH's
// is about twice it.
const defaultEagerLimit = 64 << 10

// runEagerLimit sets b.eagerLimit, the same on every rank: the largest
// of the logs' eager limits, since a send below it may have gone eagerly
// on some transport, or defaultEagerLimit.
func (b *builder) runEagerLimit() error {
	x := int64(-1)
	for _, d := range b.rankLogs {
		for _, v := range d.hdr.EagerLimits {
			x = max(x, v.Value)
		}
	}
	x, err := mpix.AllreduceOne(b.c, x, mpix.Max)
	if err != nil {
		return err
	}
	if x < 0 {
		x = defaultEagerLimit
	}
	b.eagerLimit = uint64(x)
	return nil
}

// partMsg is a matched message into an owned rank (40 bytes: 8 M of them
// on the 16 M-call halo log).
type partMsg struct {
	sendPost, sendDone, recvPost, recvDone int32
	comm                                   int32
	slot                                   int32 // sendPost's start: index in cache if another rank owns it, else -1
	// heldBy is the receiver's call the send was held until, by the
	// progress rule (heldBy), -1 for none.
	heldBy int32
	sync   bool // a synchronous send: it waited for the receive's post
	// partitioned: a partitioned transfer (MPI_Psend_init/MPI_Precv_init),
	// matched by order of initialisation; its partitions' dependencies
	// follow the messages' in deps (partitionDeps).
	partitioned bool
	// rendezvous: a standard send (not partitioned) above the run's
	// eager limit whose receive was posted after it started, and which
	// completed after that post: it waited for the post, as a synchronous
	// send does (a Late Receiver by RuleSynchronous, which the POP ideal
	// run keeps).
	rendezvous bool
	// drained: a buffered (or ready) send above the eager limit whose
	// receive was posted after it started: the rank's next
	// MPI_Buffer_detach, which returns once the buffered messages are
	// delivered, waited for that post (a Late Receiver by
	// RuleSynchronous).
	drained bool
	bytes   uint64 // what the send logged
}

// waitsForPost says whether the send waited for its receive's post: a
// Late Receiver dependency on it.
func (m *partMsg) waitsForPost() bool { return m.sync || m.rendezvous }

// heldApart says whether the send was held until a receiver's call other
// than the one a synchronous send waits for anyway (match clears heldBy
// then): a Late Receiver dependency of its own.
func (m *partMsg) heldApart() bool { return m.heldBy >= 0 }

// dep is a dependency of an owned call (done, local id) on a call of any
// rank (cause, global id): done cannot complete before cause started.
//
// It is 24 bytes: a 16 M-call log has 12 M of them.
type dep struct {
	done  int32 // local
	cause int32 // global
	slot  int32 // cache index of cause's start if another rank owns it, else -1
	comm  int32
	// part marks partitioned transfers: -1 a transfer as a whole (its Late
	// Sender on the send's start, its Late Receiver), j+1 receive
	// partition j's completion on one MPI_Pready* it needed; 0 others.
	part    int32
	kind    WaitKind
	rule    WaitRule // of a Late Receiver: why the send waited for its receiver
	dropped bool     // still violated after the correction: a contradiction, left out
	dup     bool     // the same cause and completion as an earlier partition's: no edge of its own
}

// overlapsPrev in wireEnd.Mode marks a send whose post call started
// before the previous send of its key (in posting order) had ended its
// own: on another thread, so that MPI may have queued either first, and
// which receive took which is a guess where nothing else says (planPairs).
const overlapsPrev = 1 << 29

// wireEnd is a send shipped to its receiver's owner for matching.
type wireEnd struct {
	Comm, Src, Dst, Tag int32
	Post, Done          int32
	Mode                int32  // the send's mode bits (sendMode)
	Init                int32  // partitioned: msgKey.init, 0 for others
	Start               int64  // when the post call started
	DoneEnd             int64  // when the completing call ended
	Bytes               uint64 // a send's bytes
}

func (b *builder) local(c int32) bool { return c >= b.p.CallLo && c < b.p.CallHi }

// sendOrder orders two sends of one rank by when they were posted: as
// postOrder does, by their starts where the rank's threads called MPI at
// once.
func (b *builder) sendOrder(s, t *wireEnd) int {
	if b.threads[s.Src] {
		if c := cmp.Compare(s.Start, t.Start); c != 0 {
			return c
		}
	}
	return cmp.Compare(s.Post, t.Post)
}

// addCause gives a cause another rank owns a slot in the cache of cause
// starts (an owned cause's start is read from the calls: -1).
func (b *builder) addCause(cause int32, start int64) int32 {
	if b.local(cause) {
		return -1
	}
	b.cache = append(b.cache, start)
	return int32(len(b.cache) - 1)
}

// match pairs the sends into the owned ranks (shipped here by their
// owners) with the owned receives, as Build's match does, and makes the
// dependencies the messages put between their ends: a Late Sender on each
// receive, here, and the Late Receivers, at the senders' owners.
func (b *builder) match() error {
	if err := b.runEagerLimit(); err != nil {
		return err
	}
	b.rmaTraffic()
	pl := b.endPlaces()
	g, err := b.gatherEnds(pl)
	if err != nil {
		return err
	}
	sends, sendRuns, err := b.shipSends(g.out, pl.nsend)
	if err != nil {
		return err
	}
	g.out = nil
	tasks, unpaired, guesses := b.planPairs(sends, sendRuns, g.recvs, g.recvRuns)
	violations, lrOf := b.pairMessages(tasks, sends, g.recvs)
	sends, g.recvs = nil, nil // freed before the Late Receivers are shipped
	gotLR, err := b.shipLateReceivers(tasks, lrOf)
	if err != nil {
		return err
	}
	b.lateSenderDeps(tasks, wireCount[wireDep](gotLR))
	if err := b.partitionDeps(); err != nil {
		return err
	}
	if err := b.addDeps(gotLR); err != nil {
		return err
	}
	var polls int64
	for _, d := range b.rankLogs {
		polls += d.polls
	}
	p := b.p
	counts := []int64{int64(len(b.msgs)), int64(g.unmatched + unpaired), int64(violations), polls, int64(guesses)}
	if err := b.c.Allreduce(counts, mpix.Sum); err != nil {
		return err
	}
	p.Messages, p.Unmatched, p.ClockViolations, p.CoalescedPolls = int(counts[0]), int(counts[1]), int(counts[2]), counts[3]
	p.GuessedPairs = int(counts[4])
	if p.Unmatched > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d sends or receives have no partner in the logs", p.Unmatched))
	}
	if p.GuessedPairs > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d messages between threads that called MPI at the same time were paired by a guess: "+
			"nothing in the logs says which of two sends MPI queued first, or which of two receives took which "+
			"(paired in posting order; a wrong guess swaps the partners, and the waits, of two messages)", p.GuessedPairs))
	}
	return nil
}

// rmaTraffic collects the owned ranks' one-sided traffic by origin and
// target.
func (b *builder) rmaTraffic() {
	p := b.p
	p.RMATraffic = nil
	for i, d := range b.rankLogs {
		for target, t := range d.rmaTo {
			t.Origin, t.Target = int32(p.RankLo+i), target
			p.RMATraffic = append(p.RMATraffic, t)
		}
	}
	slices.SortFunc(p.RMATraffic, func(a, b RMAPair) int {
		return cmp.Or(cmp.Compare(a.Origin, b.Origin), cmp.Compare(a.Target, b.Target))
	})
}

// endPlaces says where gatherEnds puts the owned ranks' message ends,
// each owned rank's at places of its own so that the ranks' ends are
// gathered in parallel.
type endPlaces struct {
	nsend  []int   // the sends to each analyzer rank's ranks
	from   []int   // where each analyzer rank's sends start in the sends shipped
	recvAt []int   // where owned rank i's receives start (and end, at i+1)
	sendAt [][]int // where owned rank i's sends to analyzer rank q's ranks start
}

// endPlaces counts the owned ranks' matchable ends: its receives, and for
// each analyzer rank q its sends to q's ranks, after the owned ranks'
// before it.
func (b *builder) endPlaces() endPlaces {
	p := b.p
	P, own := b.c.Size(), len(b.rankLogs)
	pl := endPlaces{nsend: make([]int, P), from: make([]int, P+1), recvAt: make([]int, own+1), sendAt: make([][]int, own)}
	for i, d := range b.rankLogs {
		pl.sendAt[i] = make([]int, P)
		pl.recvAt[i+1] = pl.recvAt[i]
		for k := range d.keys {
			l := &d.keys[k]
			if gid(b.gids[i], l.comm) < 0 {
				continue // unmatched
			}
			if l.recv {
				pl.recvAt[i+1] += int(l.n)
			} else if l.peer >= 0 && int(l.peer) < p.Ranks {
				pl.sendAt[i][p.ownerOfRank(int(l.peer))] += int(l.n)
			}
		}
	}
	for q := 0; q < P; q++ {
		for i := range pl.sendAt {
			pl.nsend[q] += pl.sendAt[i][q]
		}
		pl.from[q+1] = pl.from[q] + pl.nsend[q]
	}
	for q := 0; q < P; q++ { // counts to places
		at := pl.from[q]
		for i := range pl.sendAt {
			at, pl.sendAt[i][q] = at+pl.sendAt[i][q], at
		}
	}
	return pl
}

// sendLimit is where owned rank i's sends to analyzer rank q's ranks end.
func (pl *endPlaces) sendLimit(i, q int) int {
	if i+1 < len(pl.sendAt) {
		return pl.sendAt[i+1][q]
	}
	return pl.from[q+1]
}

// gathered is what gatherEnds collects of the owned ranks' message ends.
type gathered struct {
	out       []wireEnd // the sends, by the analyzer rank their receiver's owner is
	recvs     []recvEnd // the receives, which stay here
	recvRuns  []endRun  // the receives as runs of one key each, in posting order
	unmatched int       // ends that cannot be matched: an unknown communicator or peer
}

// gatherEnds collects the owned ranks' message ends from their keys, in
// parallel, and frees the keys.
func (b *builder) gatherEnds(pl endPlaces) (gathered, error) {
	own := len(b.rankLogs)
	g := gathered{out: make([]wireEnd, pl.from[len(pl.from)-1]), recvs: make([]recvEnd, pl.recvAt[own])}
	runsOf := make([][]endRun, own)
	unmatchedOf := make([]int, own)
	miscount := make([]bool, own)
	par.Do(own, func(i int) {
		runsOf[i], unmatchedOf[i], miscount[i] = b.rankEnds(i, &pl, &g)
	})
	var bad error
	for i := range b.rankLogs {
		g.unmatched += unmatchedOf[i]
		g.recvRuns = append(g.recvRuns, runsOf[i]...)
		if miscount[i] && bad == nil { // the keys' counts and lists disagree: a bug, not a bad log
			bad = fmt.Errorf("graph: the message ends of rank %d do not add up to their keys' counts", b.p.RankLo+i)
		}
	}
	return g, mpix.Agree(b.c, bad)
}

// rankEnds writes owned rank i's ends at its places in g: its receives
// (returned as runs of one key each) and its sends. It says how many ends
// cannot be matched, and whether the keys' lists and counts disagreed.
func (b *builder) rankEnds(i int, pl *endPlaces, g *gathered) (runs []endRun, unmatched int, miscount bool) {
	p, d := b.p, b.rankLogs[i]
	r := p.RankLo + i
	base := p.RankStart[r]
	at, rat, rend := slices.Clone(pl.sendAt[i]), pl.recvAt[i], pl.recvAt[i+1]
	var ends []msgEnd
	for k := range d.keys {
		l := &d.keys[k]
		comm := gid(b.gids[i], l.comm)
		if comm < 0 {
			unmatched += int(l.n)
			continue
		}
		// A key's ends in posting order: its list as it is, or, when the
		// ends were not added in that order, sorted in a copy (copying
		// every key's cost 0.4 GB of allocation on the 16 M-call halo
		// log).
		each := func(f func(x *msgEnd)) {
			for e := l.head; e >= 0; {
				x := d.ends.at(e)
				e = x.next
				f(x)
			}
		}
		if l.unsorted {
			ends = ends[:0]
			each(func(x *msgEnd) { ends = append(ends, *x) })
			st := p.Start[base-p.CallLo:]
			slices.SortStableFunc(ends, func(a, b msgEnd) int { return postOrder(d.hdr.Threads, st, a.post, b.post) })
			each = func(f func(x *msgEnd)) {
				for k := range ends {
					f(&ends[k])
				}
			}
		}
		if l.recv {
			if rat+int(l.n) > rend {
				miscount = true
				continue
			}
			run := endRun{comm: comm, src: l.peer, dst: int32(r), tag: l.tag, init: l.init, lo: int32(rat)}
			each(func(x *msgEnd) {
				if rat < rend { // a list longer than its count is reported below
					g.recvs[rat] = recvEnd{post: x.post + base, done: x.done&^modeMask + base}
				}
				rat++
			})
			run.hi = int32(rat)
			runs = append(runs, run)
			continue
		}
		if l.peer < 0 || int(l.peer) >= p.Ranks {
			unmatched += int(l.n)
			continue
		}
		q := p.ownerOfRank(int(l.peer))
		if at[q]+int(l.n) > pl.sendLimit(i, q) {
			miscount = true
			continue
		}
		prevPostEnd := int64(-1 << 62) // the key's previous send's post call's end
		each(func(x *msgEnd) {
			w := wireEnd{Comm: comm, Src: int32(r), Dst: l.peer, Tag: l.tag, Init: l.init, Post: x.post + base,
				Done: x.done&^modeMask + base, Mode: x.done & modeMask, Bytes: x.bytes}
			w.Start, w.DoneEnd = p.Start[w.Post-p.CallLo], p.End[w.Done-p.CallLo]
			if d.hdr.Threads {
				if w.Start < prevPostEnd {
					w.Mode |= overlapsPrev
				}
				prevPostEnd = p.End[w.Post-p.CallLo]
			}
			if at[q] < pl.sendLimit(i, q) { // as the receives'
				g.out[at[q]] = w
			}
			at[q]++
		})
	}
	miscount = miscount || rat != rend
	for q := range at {
		miscount = miscount || at[q] != pl.sendLimit(i, q)
	}
	d.keys, d.ends = nil, endStore{}
	return runs, unmatched, miscount
}

// shipSends sends each send to its receiver's owner and returns the sends
// shipped here, with their runs of one key each (each owner appended a
// key's ends together, in posting order).
func (b *builder) shipSends(out []wireEnd, nsend []int) ([]wireEnd, []endRun, error) {
	sends, _, err := mpix.ShipFlat(b.c, out, nsend)
	if err != nil {
		return nil, nil, err
	}
	var runs []endRun
	for i := 0; i < len(sends); {
		j := i + 1
		for j < len(sends) && sameKeyEnds(&sends[j-1], &sends[j]) && b.sendOrder(&sends[j-1], &sends[j]) < 0 {
			j++
		}
		s := &sends[i]
		runs = append(runs, endRun{comm: s.Comm, src: s.Src, dst: s.Dst, tag: s.Tag, init: s.Init, lo: int32(i), hi: int32(j)})
		i = j
	}
	return sends, runs, nil
}

// pairTask is a chunk of one key's pairs, for pairMessages' workers.
type pairTask struct {
	sends, recvs []int32 // a key's ends in posting order; nil: one run's, from lo on
	slo, rlo     int32
	m0, m1       int // the key's pairs [m0, m1) go to msgs[at:]
	at           int
	remote       bool // the sender's rank is another analyzer rank's: its starts go to cache
	slot         int  // remote: the cache slot of pair m0's send start
}

// pairChunk is the most pairs of one pairTask: long keys are cut for the
// workers.
const pairChunk = 1 << 16

// planPairs pairs the keys' runs in key order (the order of the messages
// in the PAG), and within a key the sends and receives in posting order,
// or in the order the times say they matched where threads posted them
// (byMatch): sorting the few runs, not the many ends. It returns the
// pairing as tasks, with the message places and cache slots they fill,
// the number of ends left without a partner, and the pairings that were
// guesses (byMatch, overlapGuesses).
func (b *builder) planPairs(sends []wireEnd, sendRuns []endRun, recvs []recvEnd, recvRuns []endRun) (tasks []pairTask, unpaired, guesses int) {
	p := b.p
	sendOrder := func(x, y int32) int { return b.sendOrder(&sends[x], &sends[y]) }
	recvOrder := func(x, y int32) int { // one rank's receives
		r := rankOf(p.RankStart, p.Ranks, recvs[x].post)
		return postOrder(b.threads[r], p.Start, recvs[x].post-p.CallLo, recvs[y].post-p.CallLo)
	}
	sortEndRuns(sendRuns, sendOrder)
	sortEndRuns(recvRuns, recvOrder)
	sendStart := func(e int32) int64 { return sends[e].Start }
	sendDoneEnd := func(e int32) int64 { return sends[e].DoneEnd }
	recvStart := func(e int32) int64 { return p.Start[recvs[e].post-p.CallLo] }
	i, j, nmsg, slot := 0, 0, 0, 0
	for i < len(sendRuns) || j < len(recvRuns) {
		var k int
		switch {
		case i >= len(sendRuns):
			k = 1
		case j >= len(recvRuns):
			k = -1
		default:
			k = sendRuns[i].cmpKey(&recvRuns[j])
		}
		i2, j2 := i, j
		var ns, nr int
		if k <= 0 {
			ns, i2 = keyRuns(sendRuns, i)
		}
		if k >= 0 {
			nr, j2 = keyRuns(recvRuns, j)
		}
		if k != 0 { // sends without receives, or receives without sends
			unpaired += ns + nr
			i, j = i2, j2
			continue
		}
		n := min(ns, nr)
		unpaired += ns + nr - 2*n
		t := pairTask{slo: sendRuns[i].lo, rlo: recvRuns[j].lo, remote: !b.local(sends[sendRuns[i].lo].Post)}
		if i2 > i+1 { // a key in several runs: its ends merged
			t.sends = keyEnds(sendRuns[i:i2], sendOrder)
		}
		if j2 > j+1 {
			t.recvs = keyEnds(recvRuns[j:j2], recvOrder)
		}
		// The sends' order from the receives' only where those are in
		// MPI's order: posted by one thread. A synchronous send's post
		// call is taken to last until it completed (blocking, it does):
		// a guess is never missed, only maybe counted where there was
		// none.
		var g int
		switch {
		case b.threads[sendRuns[i].src] && allSync(sends, endSeq(t.sends, t.slo, ns)) &&
			oneThread(p, recvs, endSeq(t.recvs, t.rlo, nr)):
			t.sends, g = byMatch(endSeq(t.recvs, t.rlo, nr), endSeq(t.sends, t.slo, ns), recvStart,
				sendStart, sendDoneEnd, sendDoneEnd)
			guesses += g
		case b.threads[sendRuns[i].src]:
			guesses += overlapGuesses(sends, endSeq(t.sends, t.slo, ns)[:n])
		}
		if b.threads[recvRuns[j].dst] {
			t.recvs, g = byMatch(endSeq(t.sends, t.slo, ns), endSeq(t.recvs, t.rlo, nr), sendStart, recvStart,
				func(e int32) int64 { return p.End[recvs[e].done-p.CallLo] }, func(e int32) int64 { return p.End[recvs[e].post-p.CallLo] })
			guesses += g
		}
		for m := 0; m < n; m += pairChunk {
			t.m0, t.m1, t.at, t.slot = m, min(n, m+pairChunk), nmsg+m, slot
			if t.remote {
				slot += t.m1 - t.m0
			}
			tasks = append(tasks, t)
		}
		nmsg += n
		i, j = i2, j2
	}
	return tasks, unpaired, guesses
}

// overlapGuesses counts the guesses in pairing a key's sends seq (in
// posting order) in that order: each send whose post call began before
// the one before it had ended (overlapsPrev) may have been queued first.
func overlapGuesses(sends []wireEnd, seq []int32) int {
	n := 0
	for _, e := range seq {
		if sends[e].Mode&overlapsPrev != 0 {
			n++
		}
	}
	return n
}

// message is the matched message of send s and receive rv, with the rules
// that decide its Late Receiver dependencies applied.
func (b *builder) message(s *wireEnd, rv recvEnd) partMsg {
	p := b.p
	r := wireEnd{Post: rv.post, Done: rv.done}
	pm := partMsg{sendPost: s.Post, sendDone: s.Done, recvPost: r.Post, recvDone: r.Done,
		comm: s.Comm, sync: s.Mode&syncBit != 0, slot: -1, heldBy: -1, bytes: s.Bytes,
		partitioned: s.Init > 0}
	if s.Mode&mayHold != 0 {
		pm.heldBy = b.heldBy(s, &r)
		post := p.Start[r.Post-p.CallLo]
		pm.rendezvous = !pm.sync && !pm.partitioned && s.Bytes > b.eagerLimit && post > s.Start && s.DoneEnd > post
		if pm.waitsForPost() && pm.heldBy == b.lateReceiverCause(pm.recvPost) {
			pm.heldBy = -1
		}
	} else if s.Mode&modeMask == 0 && !pm.partitioned && s.Bytes > b.eagerLimit {
		pm.drained = p.Start[r.Post-p.CallLo] > s.Start
	}
	return pm
}

// lateReceivers is the number of Late Receiver dependencies message m
// makes: each of them a dependency of m's sender.
func (m *partMsg) lateReceivers() int {
	n := 0
	for _, dep := range [...]bool{m.waitsForPost(), m.heldApart(), m.drained} {
		if dep {
			n++
		}
	}
	return n
}

// pairMessages makes the messages of the tasks' pairs, in parallel, into
// b.msgs and the PAG's message arrays, and the remote senders' starts into
// the cache. It returns the messages whose receive completed before their
// send started (clock violations), and lrOf: for each task and analyzer
// rank q, the task's Late Receiver dependencies of q's senders.
func (b *builder) pairMessages(tasks []pairTask, sends []wireEnd, recvs []recvEnd) (violations int, lrOf []int) {
	p, P := b.p, b.c.Size()
	nmsg, nremote := 0, 0
	if len(tasks) > 0 {
		t := &tasks[len(tasks)-1]
		nmsg, nremote = t.at+t.m1-t.m0, t.slot
		if t.remote {
			nremote += t.m1 - t.m0
		}
	}
	b.msgs = make([]partMsg, nmsg)
	b.cache = make([]int64, nremote, nremote+nremote/4+64) // room for the remote causes of other dependencies
	p.MsgSend, p.MsgRecv, p.MsgBytes = make([]int32, nmsg), make([]int32, nmsg), make([]uint64, nmsg)
	violationsOf := make([]int, len(tasks))
	lrOf = make([]int, len(tasks)*P)
	par.Do(len(tasks), func(k int) {
		t := &tasks[k]
		lrs := make([]int, P) // this worker's own: the tasks' counts share cache lines
		for m := t.m0; m < t.m1; m++ {
			se, re := t.slo+int32(m), t.rlo+int32(m)
			if t.sends != nil {
				se = t.sends[m]
			}
			if t.recvs != nil {
				re = t.recvs[m]
			}
			s := &sends[se]
			pm := b.message(s, recvs[re])
			if t.remote {
				pm.slot = int32(t.slot + m - t.m0)
				b.cache[pm.slot] = s.Start
			}
			if p.End[pm.recvDone-p.CallLo] < s.Start {
				violationsOf[k]++
			}
			if n := pm.lateReceivers(); n > 0 {
				lrs[p.Owner(pm.sendDone)] += n
			}
			x := t.at + m - t.m0
			b.msgs[x] = pm
			p.MsgSend[x], p.MsgRecv[x], p.MsgBytes[x] = pm.sendPost, pm.recvDone, pm.bytes
		}
		copy(lrOf[k*P:], lrs)
	})
	for _, v := range violationsOf {
		violations += v
	}
	return violations, lrOf
}

// shipLateReceivers sends the messages' Late Receiver dependencies
// (synchronous and rendezvous sends, sends held until the receiver
// entered MPI, buffered sends drained by a detach) to their senders'
// owners, each task's at its places (lrOf, counted by pairMessages), and
// returns those shipped here.
func (b *builder) shipLateReceivers(tasks []pairTask, lrOf []int) ([][]byte, error) {
	p, P := b.p, b.c.Size()
	lr := make([][]wireDep, P)
	nlr := make([]int, P) // counts to places: each task's in each owner's array
	for k := range tasks {
		for q := 0; q < P; q++ {
			nlr[q], lrOf[k*P+q] = nlr[q]+lrOf[k*P+q], nlr[q]
		}
	}
	for q := range lr {
		lr[q] = make([]wireDep, nlr[q])
	}
	par.Do(len(tasks), func(k int) {
		t := &tasks[k]
		at := slices.Clone(lrOf[k*P : (k+1)*P])
		for x := t.at; x < t.at+t.m1-t.m0; x++ {
			m := &b.msgs[x]
			if m.lateReceivers() == 0 {
				continue
			}
			kind := wireKind(LateReceiver, RuleSynchronous)
			if m.partitioned {
				kind |= wirePartitioned
			}
			q := p.Owner(m.sendDone)
			if m.waitsForPost() {
				cause := b.lateReceiverCause(m.recvPost)
				lr[q][at[q]] = wireDep{Done: m.sendDone, Cause: cause, Kind: kind, Comm: m.comm,
					Start: p.Start[cause-p.CallLo]}
				at[q]++
			}
			if m.heldApart() {
				lr[q][at[q]] = wireDep{Done: m.sendDone, Cause: m.heldBy, Kind: wireKind(LateReceiver, RuleProgress), Comm: m.comm,
					Start: p.Start[m.heldBy-p.CallLo]}
				at[q]++
			}
			if m.drained { // its Done the send's post: the owner finds the detach after it
				cause := b.lateReceiverCause(m.recvPost)
				lr[q][at[q]] = wireDep{Done: m.sendPost, Cause: cause, Kind: kind | wireDrained, Comm: m.comm,
					Start: p.Start[cause-p.CallLo]}
				at[q]++
			}
		}
	})
	return mpix.Ship(b.c, lr)
}

// lateSenderDeps allocates the dependencies once, at their final size but
// for the few of partitioned and PSCW transfers: the messages' Late
// Senders (made here, in parallel), the nlr Late Receivers shipped here,
// and at most one per owned collective call (collectives).
func (b *builder) lateSenderDeps(tasks []pairTask, nlr int) {
	p := b.p
	ncoll := 0
	for _, d := range b.rankLogs {
		ncoll += len(d.colls)
	}
	n := len(b.msgs) + nlr + ncoll
	b.deps = make([]dep, len(b.msgs), n+n/64+64)
	par.Do(len(tasks), func(k int) {
		t := &tasks[k]
		for x := t.at; x < t.at+t.m1-t.m0; x++ {
			m := &b.msgs[x]
			d := dep{done: m.recvDone - p.CallLo, cause: m.sendPost, slot: m.slot, kind: LateSender, comm: m.comm}
			if m.partitioned {
				d.part = -1
			}
			b.deps[x] = d
		}
	})
}

// recvEnd is an owned receive: the call that posted it and the one that
// completed it (global ids).
type recvEnd struct{ post, done int32 }

// endRun is a run of message ends with one key, ends [lo, hi) of one
// side's array, in posting order.
type endRun struct {
	comm, src, dst, tag, init int32
	lo, hi                    int32
}

// cmpKey orders runs by key: communicator, source, destination, tag,
// partitioned initialisation.
func (a *endRun) cmpKey(b *endRun) int {
	return cmp.Or(cmp.Compare(a.comm, b.comm), cmp.Compare(a.src, b.src), cmp.Compare(a.dst, b.dst),
		cmp.Compare(a.tag, b.tag), cmp.Compare(a.init, b.init))
}

// sortEndRuns orders runs by key, and runs of one key (not what the
// extractor makes, but handled) by their first ends' posting order
// (order compares two ends).
func sortEndRuns(runs []endRun, order func(a, b int32) int) {
	slices.SortFunc(runs, func(a, b endRun) int {
		return cmp.Or(a.cmpKey(&b), order(a.lo, b.lo))
	})
}

// keyEnds returns the ends of one key's runs (sorted by sortEndRuns), in
// posting order: the runs merged, ties kept in run order.
func keyEnds(runs []endRun, order func(a, b int32) int) []int32 {
	var seq []int32
	for _, r := range runs {
		for e := r.lo; e < r.hi; e++ {
			seq = append(seq, e)
		}
	}
	slices.SortStableFunc(seq, order)
	return seq
}

// endSeq is a key's ends in posting order: seq, or when it is nil (the
// key is one run) the n ends from lo on.
func endSeq(seq []int32, lo int32, n int) []int32 {
	if seq != nil {
		return seq
	}
	seq = make([]int32, n)
	for k := range seq {
		seq[k] = lo + int32(k)
	}
	return seq
}

// allSync says whether the sends seq of sends are all synchronous: their
// completions say when they were matched (byMatch).
func allSync(sends []wireEnd, seq []int32) bool {
	for _, e := range seq {
		if sends[e].Mode&syncBit == 0 {
			return false
		}
	}
	return true
}

// oneThread says whether the receives seq of recvs were all posted by
// one thread of their rank.
func oneThread(p *PAG, recvs []recvEnd, seq []int32) bool {
	for _, e := range seq {
		if p.Thread[recvs[e].post-p.CallLo] != p.Thread[recvs[seq[0]].post-p.CallLo] {
			return false
		}
	}
	return true
}

// keyRuns returns the number of ends of the key of runs[i] and the index
// of the next key's first run.
func keyRuns(runs []endRun, i int) (n, next int) {
	j := i
	for ; j < len(runs) && runs[j].cmpKey(&runs[i]) == 0; j++ {
		n += int(runs[j].hi - runs[j].lo)
	}
	return n, j
}

func sameKeyEnds(a, b *wireEnd) bool {
	return a.Comm == b.Comm && a.Src == b.Src && a.Dst == b.Dst && a.Tag == b.Tag && a.Init == b.Init
}

// wireDep is a dependency shipped to the owner of its done call.
type wireDep struct {
	Done, Cause int32
	Kind, Comm  int32 // Kind: wireKind
	Start       int64 // when the cause started
}

// wireKind packs a dependency's wait kind and rule into wireDep.Kind.
func wireKind(k WaitKind, r WaitRule) int32 { return int32(k) | int32(r)<<8 }

// wirePartitioned in wireDep.Kind marks a partitioned transfer's (dep.part -1).
const wirePartitioned = 1 << 16

// wireDrained in wireDep.Kind marks a buffered send's Late Receiver
// (partMsg.drained): its Done is the send's post, and the dependency is
// the next MPI_Buffer_detach's of the send's rank (none: dropped).
const wireDrained = 1 << 17

// shipDeps sends dependencies to the owners of their done calls, which
// add them (and those sent to themselves) to their own.
func (b *builder) shipDeps(out [][]wireDep) error {
	got, err := mpix.Ship(b.c, out)
	if err != nil {
		return err
	}
	return b.addDeps(got)
}

// wireCount is the number of T in shipped buffers.
func wireCount[T any](got [][]byte) int {
	n := 0
	for _, bs := range got {
		n += len(bs) / sizeOf[T]()
	}
	return n
}

// addDeps adds shipped dependencies to the owned ones.
func (b *builder) addDeps(got [][]byte) error {
	// Grown at most once (match sizes them): appending dependency by
	// dependency to arrays of millions copied them over and over, a fifth
	// of the build's time on a 16 M-call log.
	n := wireCount[wireDep](got)
	b.deps = slices.Grow(b.deps, n)
	for _, bs := range got {
		ws, err := mpix.FromBytes[wireDep](bs)
		if err != nil {
			return err
		}
		for _, w := range ws {
			if w.Kind&wireDrained != 0 {
				if w.Done = b.detachAfter(w.Done); w.Done < 0 {
					continue
				}
			}
			d := dep{done: w.Done - b.p.CallLo, cause: w.Cause, slot: b.addCause(w.Cause, w.Start),
				kind: WaitKind(w.Kind & 0xff), rule: WaitRule(w.Kind >> 8 & 0xff), comm: w.Comm}
			if w.Kind&wirePartitioned != 0 {
				d.part = -1
			}
			b.deps = append(b.deps, d)
		}
	}
	return nil
}

// detachAfter is the first MPI_Buffer_detach of owned call c's rank after
// c, -1 if none.
func (b *builder) detachAfter(c int32) int32 {
	p := b.p
	if b.detaches == nil {
		b.detaches = []int32{}
		for k, op := range p.Op {
			if op == trace.OpBufferDetach {
				b.detaches = append(b.detaches, p.CallLo+int32(k))
			}
		}
	}
	i, _ := slices.BinarySearch(b.detaches, c+1)
	if i == len(b.detaches) || b.detaches[i] >= p.RankStart[p.Rank(c)+1] {
		return -1
	}
	return b.detaches[i]
}

// progressSlack is how much later than its receiver's entry into MPI,
// beyond the message's transfer, a send may complete and still count as
// held until that entry: the acknowledgement's latency and clock error, or
// a tenth of how long it was held (a sender that was descheduled when the
// receiver let it go still was held; a send that just happened to complete
// then would have to do so within a tenth of its wait, by chance).
const (
	progressSlack = 50_000 // ns
	progressShare = 10
)

// heldBy applies the progress rule to a send s matched with a receive r of
// an owned rank. MPI moves a message only inside MPI calls of both ranks,
// so a standard send (any size: eager limits and buffer space decide, not a
// size the analyzer could know) can be held until its receiver enters MPI.
// The evidence is the timing: the receiver's last MPI call that started
// before the send completed (strictly) started after both the send and
// the receive were posted, and the send completed within the message's
// transfer (as the receiver saw it) of that call's start. The call need not still run
// when the send completes: a sender descheduled when the receiver let it
// go sees its completion late. It returns the hold's cause, that call or
// the first of the polls that led to it (lateReceiverCause), or -1 when the
// send completed before the receive was posted or the timing shows no
// hold.
func (b *builder) heldBy(s, r *wireEnd) int32 {
	p, lg := b.p, b.lg
	post := r.Post - p.CallLo
	sendEnd := s.DoneEnd
	if sendEnd <= p.Start[post] {
		return -1
	}
	// The receiver's last call on the receive's thread, from the post on,
	// that started before the send completed: strictly, as the hold's
	// evidence is kept (clock correction), so that a call beginning as
	// the send ended, to the ns, is not taken for what let it go and the
	// hold then dropped (heldsend.c: its MPI_Barrier after the MPI_Wait).
	i := p.Rank(r.Post) - p.RankLo
	hi := lg.rankStart[i+1]
	x := int32(-1)
	if lg.ordered[i] && !lg.multi[i] {
		k := sort.Search(int(hi-post), func(j int) bool { return p.Start[post+int32(j)] >= sendEnd })
		x = post + int32(k) - 1
	} else {
		th := p.Thread[post]
		for c := post; c < hi; c++ {
			if p.Thread[c] != th {
				continue
			}
			if p.Start[c] >= sendEnd {
				break
			}
			x = c
		}
	}
	if x < post {
		return -1
	}
	sx := p.Start[x]
	if sx < s.Start {
		// The receiver did not enter MPI after the send was posted: it was
		// in MPI all along, or computing when the send completed.
		return -1
	}
	done := r.Done - p.CallLo
	transfer := max(0, p.End[done]-max(s.Start, p.Start[done]))
	held := sx - max(s.Start, p.Start[post])
	if sendEnd-sx > transfer+max(progressSlack, held/progressShare) {
		return -1
	}
	return b.lateReceiverCause(x + p.CallLo)
}

// lateReceiverCause is the call that a Late Receiver dependency on
// receiver call x (global, an owned rank's) names as its cause: x, or,
// when x ends or lies in a run of unproductive polls on its thread, the
// first of them. The receiver entered MPI there and was in it again and
// again until x; a later call may lie inside a stretch in which its rank
// itself waits (the polls' time is waiting: edges.go), and a cause there
// would lose that stretch from every path through it, so that the
// critical path fell short of the run (HPCC: RandomAccess polls for the
// other ranks' updates while it sends its own; HPL probes before it
// receives). A receiver polling already when the send was posted so
// causes no wait: the cause started before the sender began to wait.
func (b *builder) lateReceiverCause(x int32) int32 {
	p, lg := b.p, b.lg
	first := lg.rankStart[p.Rank(x)-p.RankLo]
	c := x - p.CallLo
	th := lg.Thread[c]
	for k := c - 1; k >= first; k-- {
		if lg.Thread[k] != th {
			continue
		}
		if !lg.unproductive.has(int(k)) {
			break
		}
		c = k
	}
	return c + p.CallLo
}
