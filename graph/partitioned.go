package graph

import (
	"cmp"
	"slices"

	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/trace"
)

// Partitioned point-to-point communication (MPI 4), modelled as in
// Thärigen, Hermanns and Geimer, "An Event Model for Trace-Based
// Performance Analysis of MPI Partitioned Point-to-Point Communication"
// (SC-W 2023): a transfer is one MPI_Start…completion cycle of a
// partitioned send matched with one of its receive (requests matched by
// order of initialisation, msgKey.init); receive partition j of r is
// complete at the first successful MPI_Parrived that saw it, else at the
// completion of the receive, and needs the send partitions
// I(j) = {⌊s·j/r⌋, …, ⌈s·(j+1)/r⌉−1} of s (the paper's §4.2.2): one Late
// Sender dependency (and edge) from each of their MPI_Pready* calls to
// that completion. The receive's completion thus waits for the last
// MPI_Pready it needed: the paper's partitioned Late Sender (§4.1.1). The
// send's completion needs the receive's MPI_Start: its Late Receiver.

// PartitionWait is the partitioned Late Sender time of one receive
// partition index, summed over the transfers whose receive has it. The
// analysis's shares ship it as its memory: 32 bytes, no padding.
type PartitionWait struct {
	Partition int32
	_         int32
	Transfers int64 // matched transfers with this receive partition
	// Parrived counts those whose partition a successful MPI_Parrived saw
	// (the others completed in the receive's Wait or Test).
	Parrived int64
	// LateSenderNs sums, over the transfers, the time from the start of
	// the call that completed the partition (the MPI_Parrived, or the
	// Wait or Test; from the start of the unproductive polls that led to
	// it) to the start of the last MPI_Pready* the partition needed, when
	// positive (at most to the call's end).
	LateSenderNs int64
}

// wireReady is a send partition made ready, shipped to the owner of the
// receiving rank.
type wireReady struct {
	Post, Call  int32 // the transfer's MPI_Start and the MPI_Pready* call, global
	Part, Parts int32
	Start       int64 // when the MPI_Pready* call started
}

// partitionDeps adds the dependencies of the partitions of the matched
// partitioned transfers into the owned ranks, after the messages' own.
func (b *builder) partitionDeps() error {
	p, c := b.p, b.c
	out := make([][]wireReady, c.Size())
	var arrived []partEvent // global ids
	for i, d := range b.rankLogs {
		base := p.RankStart[p.RankLo+i]
		for _, e := range d.ready {
			if e.peer < 0 || int(e.peer) >= p.Ranks {
				continue
			}
			q := p.ownerOfRank(int(e.peer))
			out[q] = append(out[q], wireReady{Post: e.post + base, Call: e.call + base, Part: e.part, Parts: e.parts,
				Start: p.Start[e.call+base-p.CallLo]})
		}
		for _, e := range d.arrived {
			arrived = append(arrived, partEvent{e.post + base, e.call + base, e.part, e.parts, e.peer})
		}
		d.ready, d.arrived = nil, nil
	}
	got, err := mpix.Ship(c, out)
	if err != nil {
		return err
	}
	ready, err := mpix.Concat[wireReady](got)
	if err != nil {
		return err
	}
	if len(ready) == 0 {
		return nil
	}
	slices.SortFunc(ready, func(x, y wireReady) int {
		return cmp.Or(cmp.Compare(x.Post, y.Post), cmp.Compare(x.Part, y.Part), cmp.Compare(x.Call, y.Call))
	})
	slices.SortFunc(arrived, func(x, y partEvent) int {
		return cmp.Or(cmp.Compare(x.post, y.post), cmp.Compare(x.part, y.part), cmp.Compare(x.call, y.call))
	})
	for k := range b.msgs {
		m := &b.msgs[k]
		if !m.partitioned {
			continue
		}
		rlo, _ := slices.BinarySearchFunc(ready, m.sendPost, func(x wireReady, t int32) int { return cmp.Compare(x.Post, t) })
		rhi := rlo
		for rhi < len(ready) && ready[rhi].Post == m.sendPost {
			rhi++
		}
		alo, _ := slices.BinarySearchFunc(arrived, m.recvPost, func(x partEvent, t int32) int { return cmp.Compare(x.post, t) })
		ahi := alo
		for ahi < len(arrived) && arrived[ahi].post == m.recvPost {
			ahi++
		}
		rs, as := ready[rlo:rhi], arrived[alo:ahi]
		if len(rs) == 0 || len(as) == 0 || as[0].part != -1 {
			continue // no MPI_Pready recorded, or no completion (it sorts first)
		}
		s, r := int64(rs[0].Parts), int64(as[0].parts)
		as = as[1:]
		lastAtDone := int64(-1) // the last send partition already tied to the receive's completion
		ri, ai := 0, 0
		for j := int64(0); j < r; j++ {
			comp := m.recvDone
			for ai < len(as) && int64(as[ai].part) < j {
				ai++
			}
			if ai < len(as) && int64(as[ai].part) == j {
				comp = as[ai].call // the first that saw it
			}
			lo, hi := s*j/r, (s*(j+1)+r-1)/r-1
			for i := lo; i <= hi; i++ {
				for ri < len(rs) && int64(rs[ri].Part) < i {
					ri++
				}
				if ri == len(rs) || int64(rs[ri].Part) != i {
					continue // never made ready in the log
				}
				e := &rs[ri]
				b.deps = append(b.deps, dep{done: comp - p.CallLo, cause: e.Call, slot: b.addCause(e.Call, e.Start), kind: LateSender,
					comm: m.comm, part: int32(j) + 1, dup: comp == m.recvDone && i <= lastAtDone})
			}
			if comp == m.recvDone {
				lastAtDone = max(lastAtDone, hi)
			}
			// ri stays at partition hi, which may begin the next range.
		}
	}
	return nil
}

// partitionWaits sums the partitioned Late Sender time by receive
// partition (PartitionWait), from the partitions' dependencies: each
// transfer's partition j is a run of consecutive dependencies with part
// j+1 and one completion.
func (b *builder) partitionWaits() {
	var acc []PartitionWait
	lg := b.lg
	for i := 0; i < len(b.deps); {
		d := &b.deps[i]
		if d.part <= 0 {
			i++
			continue
		}
		latest := int64(-1 << 62)
		k := i
		for ; k < len(b.deps) && b.deps[k].part == d.part && b.deps[k].done == d.done; k++ {
			if !b.deps[k].dropped {
				latest = max(latest, b.causeStart(&b.deps[k]))
			}
		}
		j := int(d.part - 1)
		for len(acc) <= j {
			acc = append(acc, PartitionWait{Partition: int32(len(acc))})
		}
		a := &acc[j]
		a.Transfers++
		if lg.Op[d.done] == trace.OpParrived {
			a.Parrived++
		}
		if from := b.waitFrom(d.done); latest > from {
			a.LateSenderNs += min(latest, lg.End[d.done]) - from
		}
		i = k
	}
	b.p.PartitionWaits = acc
}
