package graph

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/trace"
)

// General active target synchronisation (MPI_Win_post, MPI_Win_start,
// MPI_Win_complete, MPI_Win_wait and MPI_Win_test), with the wait states
// of Scalasca (Hermanns, Geimer, Mohr and Wolf, "Scalable detection of
// MPI-2 remote memory access inefficiency patterns", EuroPVM/MPI 2009;
// Scalasca's MPI_RMA patterns).
//
// A target's exposure epoch (MPI_Win_post with a group of origins, closed
// by MPI_Win_wait or by the MPI_Win_test that found it complete) and an
// origin's access epoch (MPI_Win_start with a group of targets, closed by
// MPI_Win_complete) match per window and pair of ranks, in order: the
// k-th exposure of target t to origin o matches o's k-th access epoch
// that includes t. A window is known across ranks by its creation (the
// communicator and the number of that collective on it).
//
// MPI defines two dependencies per matched pair:
//
//   - the origin's RMA accesses to t cannot happen before t's MPI_Win_post:
//     MPI_Win_start may block until then, or (Open MPI, MPICH) return at
//     once and leave the waiting to the first transfer to t that cannot
//     proceed, or to MPI_Win_complete. The dependency is on the first of
//     the epoch's MPI_Win_start, its transfers to t (in call order) and
//     its MPI_Win_complete that ended after the post started: the call
//     that was in MPI when the post came, or, when the post came while
//     the origin computed, the next one (which then did not wait). Its
//     wait is Late Post: from the call's start to the post's start.
//   - the target's MPI_Win_wait (or the MPI_Win_test that ended the
//     epoch) cannot return before every origin's MPI_Win_complete
//     started: Early Wait, from the wait's start (or its polls') to the
//     last complete's start. Late Complete is the part of it after the
//     last RMA transfer of the origins to t ended: from the later of that
//     end and the wait's start to the last complete's start, the time the
//     target waited only for the origins to close their epochs.
//
// Each dependency is an edge S(cause) → E(call) (EdgeRMA), weighted as a
// message's transfer.

// pscwLog is what one rank's log says about general active target
// synchronisation, local call numbers (in the rank).
type pscwLog struct {
	wins   []winRef  // by window number − 1: the window's creation
	expo   []pscwEnd // one per (MPI_Win_post, origin), in call order
	access []pscwEnd // one per (MPI_Win_start, target), in call order
	ops    []rmaOp   // RMA transfers made while their window had an access epoch open

	// While the log is read.
	count   map[pscwCount]int32 // epochs so far
	open    []openEpochs        // by window number − 1
	grpWin  int32               // the window of the MPI_Win_post/start whose members come next, 0 for none
	grpAcc  bool                // that call is MPI_Win_start
	grpCall int32               // its call
}

// winRef is a window's creation: the collective (communicator, sequence
// number) that made it, which every member of the window agrees on.
type winRef struct {
	comm uint32 // index in the rank's communicator table
	seq  uint32
	ok   bool
}

// pscwEnd is one side of an epoch towards one peer (a world rank): the
// k-th of the rank's epochs on window win with that peer, opened by call
// open and closed by call close (−1: never, in the log).
type pscwEnd struct {
	win, peer, k, open, close int32
}

// rmaOp is a transfer to target peer on window win.
type rmaOp struct{ win, peer, call int32 }

type pscwCount struct {
	win, peer int32
	access    bool
}

// openEpochs are a window's open epochs: its items [lo, hi) in expo and
// access (lo −1: none open).
type openEpochs struct{ expoLo, expoHi, accLo, accHi int32 }

// window returns the open epochs of window w, nil for a window the log
// did not see created.
func (l *pscwLog) window(w int32) *openEpochs {
	if w <= 0 || int(w) > len(l.wins) || !l.wins[w-1].ok {
		return nil
	}
	for int(w) > len(l.open) {
		l.open = append(l.open, openEpochs{-1, -1, -1, -1})
	}
	return &l.open[w-1]
}

// created takes a window creation record.
func (l *pscwLog) created(rec *trace.Record) {
	switch rec.Op {
	case trace.OpWinCreate, trace.OpWinAllocate, trace.OpWinAllocateShared, trace.OpWinCreateDynamic:
	default:
		return
	}
	// Every creation is logged (paused or not), so the rank's windows
	// are numbered 1, 2, … here in order; a number out of that order is
	// a damaged record.
	if w := rec.Tag; w > 0 && int(w) <= len(l.wins)+1 {
		for int(w) > len(l.wins) {
			l.wins = append(l.wins, winRef{})
		}
		l.wins[w-1] = winRef{rec.Comm, rec.Seq, true}
	}
}

// group takes MPI_Win_post or MPI_Win_start (call c): its members follow.
func (l *pscwLog) group(rec *trace.Record, c int32) {
	l.grpWin, l.grpAcc, l.grpCall = 0, rec.Op == trace.OpWinStart, c
	o := l.window(rec.Tag)
	if o == nil || rec.Flags&trace.FlagError != 0 {
		return
	}
	l.grpWin = rec.Tag
	if l.grpAcc {
		o.accLo, o.accHi = int32(len(l.access)), int32(len(l.access))
	} else {
		o.expoLo, o.expoHi = int32(len(l.expo)), int32(len(l.expo))
	}
}

// member takes a member of the group of the last MPI_Win_post/start.
func (l *pscwLog) member(peer int32) {
	if l.grpWin == 0 {
		return
	}
	if l.count == nil {
		l.count = map[pscwCount]int32{}
	}
	key := pscwCount{l.grpWin, peer, l.grpAcc}
	l.count[key]++
	e := pscwEnd{l.grpWin, peer, l.count[key], l.grpCall, -1}
	o := l.window(l.grpWin)
	if l.grpAcc {
		l.access = append(l.access, e)
		o.accHi++
	} else {
		l.expo = append(l.expo, e)
		o.expoHi++
	}
}

// call takes any other one-sided call c (classes rma and rma_request).
func (l *pscwLog) call(rec *trace.Record, c int32) {
	l.grpWin = 0
	o := l.window(rec.Tag)
	if o == nil {
		return
	}
	switch rec.Op {
	case trace.OpWinComplete:
		if o.accLo >= 0 {
			for i := o.accLo; i < o.accHi; i++ {
				l.access[i].close = c
			}
			o.accLo, o.accHi = -1, -1
		}
	case trace.OpWinTest:
		if rec.Unproductive() {
			return
		}
		fallthrough
	case trace.OpWinWait:
		if o.expoLo >= 0 {
			for i := o.expoLo; i < o.expoHi; i++ {
				l.expo[i].close = c
			}
			o.expoLo, o.expoHi = -1, -1
		}
	default:
		if rec.Op.IsRMATransfer() && o.accLo >= 0 && rec.Peer >= 0 {
			l.ops = append(l.ops, rmaOp{rec.Tag, rec.Peer, c})
		}
	}
}

// CallNs is a time of one call.
type CallNs struct {
	Call int32
	Ns   int64
}

// EpochPair is a matched pair of epochs (global call numbers): the
// target's MPI_Win_post and the call that closed its exposure epoch
// (MPI_Win_wait or MPI_Win_test; −1 if none in the log), the origin's
// MPI_Win_start and MPI_Win_complete (−1 if none), and the origin's call
// that depends on the post (its Late Post, if it waited).
type EpochPair struct {
	Post, Wait, Start, Complete, Waited int32
}

// pscwKey is what matches the two sides of an epoch pair.
type pscwKey struct {
	Comm              int32  // the window's creation: its communicator (the run's)
	Seq               uint32 // and sequence number
	Origin, Target, K int32
}

func cmpKey(a, b pscwKey) int {
	return cmp.Or(cmp.Compare(a.Comm, b.Comm), cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Origin, b.Origin),
		cmp.Compare(a.Target, b.Target), cmp.Compare(a.K, b.K))
}

// wirePSCW is one side of an epoch pair shipped to the owner of the other
// side's rank: the target's post and wait (Side 0, to the origin's
// owner), or the origin's complete and its last transfer to the target
// (Side 1, to the target's owner). Calls are global, −1 for none.
type wirePSCW struct {
	pscwKey
	Side        int32
	Open, Close int32 // MPI_Win_post and its wait; MPI_Win_complete and the last transfer
	Start       int64 // when Open started
}

// pscwItem is an owned rank's side of an epoch pair: rank index i, item k.
type pscwItem struct {
	pscwKey
	i, k int32
}

// lateOp is an owned MPI_Win_wait/test (local) and an origin's last
// transfer to its rank in a matched epoch (global).
type lateOp struct{ wait, op int32 }

// pscwDeps matches the epochs of the owned ranks with their peers' (each
// side shipped to the owner of the other) and adds their dependencies:
// Late Post at the origins, Early Wait at the targets.
func (b *builder) pscwDeps() error {
	p := b.p
	ep := b.pscwEpochs()
	got, err := mpix.Ship(b.c, ep.out)
	if err != nil {
		return err
	}
	in, err := mpix.Concat[wirePSCW](got)
	if err != nil {
		return err
	}
	var posts, dones []wirePSCW // for the owned origins, for the owned targets
	for _, w := range in {
		if w.Side == 0 {
			posts = append(posts, w)
		} else {
			dones = append(dones, w)
		}
	}
	byKey := func(x, y pscwItem) int { return cmpKey(x.pscwKey, y.pscwKey) }
	wireKey := func(x, y wirePSCW) int { return cmpKey(x.pscwKey, y.pscwKey) }
	slices.SortFunc(ep.acc, byKey)
	slices.SortFunc(ep.expo, byKey)
	slices.SortFunc(posts, wireKey)
	slices.SortFunc(dones, wireKey)
	matched, unmatched := b.latePosts(&ep, posts)
	b.earlyWaits(ep.expo, dones)
	for _, d := range b.rankLogs {
		d.pscw = pscwLog{}
	}
	slices.SortFunc(p.Epochs, func(x, y EpochPair) int { return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(x.Post, y.Post)) })
	counts := []int64{int64(matched), int64(unmatched)}
	if err := b.c.Allreduce(counts, mpix.Sum); err != nil {
		return err
	}
	p.EpochPairs = int(counts[0])
	if counts[1] > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d general active target epochs (MPI_Win_post or MPI_Win_start, per group member) have no partner in the logs", counts[1]))
	}
	return nil
}

// opRange is a range of a rank's one-sided transfers.
type opRange struct{ lo, hi int32 }

// pscwEpochs is the owned ranks' epochs, each side for its peer's owner.
type pscwEpochs struct {
	out       [][]wirePSCW // by the analyzer rank that owns the peer
	acc, expo []pscwItem   // the owned access and exposure epochs
	accOps    [][]opRange  // by owned rank and access epoch: its transfers to its target
	bad       int          // epochs of a window the log did not see created, or with a peer outside the run
}

// pscwEpochs collects the owned ranks' epochs: each access epoch with its
// transfers to its target (a range of the rank's transfers, sorted by
// window, target and call), and each exposure epoch.
func (b *builder) pscwEpochs() pscwEpochs {
	p := b.p
	ep := pscwEpochs{out: make([][]wirePSCW, b.c.Size()), accOps: make([][]opRange, len(b.rankLogs))}
	for i, d := range b.rankLogs {
		l := &d.pscw
		r := int32(p.RankLo + i)
		base := p.RankStart[r]
		slices.SortFunc(l.ops, cmpOp)
		ep.accOps[i] = make([]opRange, len(l.access))
		for k := range l.access {
			e := &l.access[k]
			key, ok := b.pscwKeyOf(i, l, e, r, e.peer)
			if !ok {
				ep.bad++
				continue
			}
			lo, _ := slices.BinarySearchFunc(l.ops, rmaOp{e.win, e.peer, e.open}, cmpOp)
			end := e.close
			if end < 0 {
				end = int32(len(b.lg.Op)) // never completed: to the log's end
			}
			hi, _ := slices.BinarySearchFunc(l.ops, rmaOp{e.win, e.peer, end}, cmpOp)
			ep.accOps[i][k] = opRange{int32(lo), int32(hi)}
			w := wirePSCW{pscwKey: key, Side: 1, Open: -1, Close: -1}
			if e.close >= 0 {
				w.Open, w.Start = e.close+base, p.Start[e.close+base-p.CallLo]
			}
			if hi > lo {
				w.Close = l.ops[hi-1].call + base
			}
			q := p.ownerOfRank(int(e.peer))
			ep.out[q] = append(ep.out[q], w)
			ep.acc = append(ep.acc, pscwItem{key, int32(i), int32(k)})
		}
		for k := range l.expo {
			e := &l.expo[k]
			key, ok := b.pscwKeyOf(i, l, e, e.peer, r)
			if !ok {
				ep.bad++
				continue
			}
			w := wirePSCW{pscwKey: key, Open: e.open + base, Close: -1, Start: p.Start[e.open+base-p.CallLo]}
			if e.close >= 0 {
				w.Close = e.close + base
			}
			q := p.ownerOfRank(int(e.peer))
			ep.out[q] = append(ep.out[q], w)
			ep.expo = append(ep.expo, pscwItem{key, int32(i), int32(k)})
		}
	}
	return ep
}

// pscwKeyOf is the window of epoch end e of owned rank i, as the run
// knows it; ok false for a window the log did not see created or a peer
// outside the run.
func (b *builder) pscwKeyOf(i int, l *pscwLog, e *pscwEnd, origin, target int32) (pscwKey, bool) {
	if e.win <= 0 || int(e.win) > len(l.wins) || !l.wins[e.win-1].ok || e.peer < 0 || int(e.peer) >= b.p.Ranks {
		return pscwKey{}, false
	}
	w := l.wins[e.win-1]
	comm := gid(b.gids[i], w.comm)
	return pscwKey{comm, w.seq, origin, target, e.k}, comm >= 0
}

// latePosts adds, at the origins, the dependency of each access epoch's
// call that needed the target's post (sorted posts) on that post, and the
// epoch pairs; it counts the epochs matched and not.
func (b *builder) latePosts(ep *pscwEpochs, posts []wirePSCW) (matched, unmatched int) {
	p := b.p
	unmatched = ep.bad
	var cand []int32
	merge(ep.acc, posts, func(a *pscwItem, w *wirePSCW) {
		if a == nil || w == nil {
			unmatched++
			return
		}
		matched++
		l := &b.rankLogs[a.i].pscw
		base := p.RankStart[p.RankLo+int(a.i)]
		e := &l.access[a.k]
		cand = append(cand[:0], e.open+base)
		ops := ep.accOps[a.i][a.k]
		for _, o := range l.ops[ops.lo:ops.hi] {
			cand = append(cand, o.call+base)
		}
		complete := int32(-1)
		if e.close >= 0 {
			complete = e.close + base
			cand = append(cand, complete)
		}
		waited := cand[len(cand)-1]
		for _, x := range cand {
			if p.End[x-p.CallLo] >= w.Start {
				waited = x
				break
			}
		}
		b.deps = append(b.deps, dep{done: waited - p.CallLo, cause: w.Open, slot: b.addCause(w.Open, w.Start), kind: LatePost,
			comm: w.Comm})
		p.Epochs = append(p.Epochs, EpochPair{Post: w.Open, Wait: w.Close, Start: e.open + base, Complete: complete, Waited: waited})
	})
	return matched, unmatched
}

// earlyWaits adds, at the targets, the dependency of each exposure
// epoch's wait on its origin's complete (sorted dones).
func (b *builder) earlyWaits(expo []pscwItem, dones []wirePSCW) {
	p := b.p
	b.lateOps = b.lateOps[:0]
	merge(expo, dones, func(x *pscwItem, w *wirePSCW) {
		if x == nil || w == nil {
			return // counted at the origin's owner
		}
		e := &b.rankLogs[x.i].pscw.expo[x.k]
		if e.close < 0 || w.Open < 0 {
			return
		}
		wait := e.close + p.RankStart[p.RankLo+int(x.i)] - p.CallLo
		b.deps = append(b.deps, dep{done: wait, cause: w.Open, slot: b.addCause(w.Open, w.Start), kind: EarlyWait,
			comm: w.Comm})
		if w.Close >= 0 {
			b.lateOps = append(b.lateOps, lateOp{wait, w.Close})
		}
	})
}

// merge walks two lists sorted by key, calling f with each matched pair
// and with each item without a partner (the other nil).
func merge(own []pscwItem, in []wirePSCW, f func(*pscwItem, *wirePSCW)) {
	i, j := 0, 0
	for i < len(own) || j < len(in) {
		switch k := 0; {
		case i == len(own):
			f(nil, &in[j])
			j++
		case j == len(in):
			f(&own[i], nil)
			i++
		default:
			if k = cmpKey(own[i].pscwKey, in[j].pscwKey); k == 0 {
				f(&own[i], &in[j])
				i++
				j++
			} else if k < 0 {
				f(&own[i], nil)
				i++
			} else {
				f(nil, &in[j])
				j++
			}
		}
	}
}

// lateComplete computes, once the times are final and the waits known,
// the Late Complete part of the owned Early Waits: from the later of the
// wait's start and the end of the origins' last transfer to the rank in
// the epoch to the last complete's start (where the wait ended, at most).
func (b *builder) lateComplete() error {
	p := b.p
	ids := make([]int32, 0, len(b.lateOps))
	for _, x := range b.lateOps {
		ids = append(ids, x.op)
	}
	calls, err := p.FetchCalls(b.c, ids)
	if err != nil {
		return err
	}
	slices.SortFunc(b.lateOps, func(x, y lateOp) int { return cmp.Compare(x.wait, y.wait) })
	for _, w := range p.Waits {
		if w.Kind != EarlyWait {
			continue
		}
		c := w.Call - p.CallLo
		last := int64(-1 << 62)
		k, _ := slices.BinarySearchFunc(b.lateOps, c, func(x lateOp, c int32) int { return cmp.Compare(x.wait, c) })
		for ; k < len(b.lateOps) && b.lateOps[k].wait == c; k++ {
			last = max(last, calls.At(b.lateOps[k].op).End)
		}
		if ns := w.From + w.Ns - max(last, w.From); ns > 0 {
			p.LateComplete = append(p.LateComplete, CallNs{w.Call, ns})
		}
	}
	b.lateOps = nil
	return nil
}

func cmpOp(x, y rmaOp) int {
	return cmp.Or(cmp.Compare(x.win, y.win), cmp.Compare(x.peer, y.peer), cmp.Compare(x.call, y.call))
}
