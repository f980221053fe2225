//go:build mpi

// Command partcheck is the MPI test driver of graph.BuildPart: every rank
// of the job builds its part of the run in LOGDIR with the others, then
// checks it against the whole PAG graph.Build makes (each rank builds that
// alone) and against a one-process BuildPart. It prints "ok" on rank 0, or
// one line per difference, and exits 1 on any.
package main

import (
	"fmt"
	"os"
	"slices"

	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/emer/empi/mpi"
)

func main() {
	mpi.LogErrors = false
	mpi.Init()
	c := mpix.World()
	bad := check(c, os.Args[1])
	for _, b := range bad {
		fmt.Printf("rank %d: %s\n", c.Rank(), b)
	}
	n, _ := mpix.AllreduceOne(c, int64(len(bad)), mpix.Sum)
	if c.Rank() == 0 && n == 0 {
		fmt.Println("ok")
	}
	mpi.Finalize()
	if n != 0 {
		os.Exit(1)
	}
}

func check(c mpix.Comm, dir string) (bad []string) {
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	run, err := graph.Load(dir)
	if err != nil {
		return []string{err.Error()}
	}
	p, err := graph.BuildPart(c, run)
	if err != nil {
		return []string{"BuildPart: " + err.Error()}
	}
	g, err := graph.Build(run)
	if err != nil {
		return []string{"Build: " + err.Error()}
	}
	one, err := graph.BuildPart(&mpix.Single{}, run)
	if err != nil {
		return []string{"BuildPart alone: " + err.Error()}
	}
	lo, hi := p.CallLo, p.CallHi
	if !slices.Equal(p.RankStart, g.RankStart) {
		fail("RankStart")
	}
	if !slices.Equal(p.Start, g.Start[lo:hi]) || !slices.Equal(p.End, g.End[lo:hi]) {
		fail("times")
	}
	e0, e1 := g.InStart[2*lo], g.InStart[2*hi]
	for v := range p.InStart {
		if p.InStart[v] != g.InStart[2*int(lo)+v]-e0 {
			fail("InStart[%d]", v)
			break
		}
	}
	for i := range p.InSrc {
		if i >= int(e1-e0) || p.InSrc[i] != g.InSrc[e0+int32(i)] || p.InWeight[i] != g.InWeight[e0+int32(i)] || p.InKind[i] != g.InKind[e0+int32(i)] {
			fail("edge %d (vertex range %d..%d): %d %d %v", i, 2*lo, 2*hi, p.InSrc[i], p.InWeight[i], p.InKind[i])
			break
		}
	}
	var ws []graph.Wait
	for _, w := range g.Waits {
		if w.Call >= lo && w.Call < hi {
			ws = append(ws, w)
		}
	}
	if !slices.Equal(ws, p.Waits) {
		fail("waits: %d, want %d", len(p.Waits), len(ws))
	}
	if p.Messages != g.Messages || p.Unmatched != g.Unmatched || p.ClockViolations != g.ClockViolations || p.Inconsistent != g.Inconsistent {
		fail("counts")
	}
	if p.Target != g.Target || p.T0 != g.T0 || p.T1 != g.T1 {
		fail("target %d %d %d, want %d %d %d", p.Target, p.T0, p.T1, g.Target, g.T0, g.T1)
	}
	if !slices.Equal(p.Notes, g.Notes) {
		fail("notes %q, want %q", p.Notes, g.Notes)
	}
	// Collective instances: each coordinated once, members and final
	// times as in the whole PAG.
	type key struct {
		comm int32
		seq  uint32
	}
	idx := map[key]int{}
	for k, col := range g.Colls {
		idx[key{col.Comm, col.Seq}] = k
	}
	for _, col := range p.Colls {
		k, ok := idx[key{col.Comm, col.Seq}]
		if !ok {
			fail("collective %d/%d not in Build's", col.Comm, col.Seq)
			continue
		}
		w := g.Colls[k]
		if w.N != col.N || w.Op != col.Op || w.Root != col.Root {
			fail("collective %d/%d differs", col.Comm, col.Seq)
			continue
		}
		for m := int32(0); m < col.N; m++ {
			post, done := g.CollPost[w.First+m], g.CollDone[w.First+m]
			if p.CollPost[col.First+m] != post || p.CollDone[col.First+m] != done ||
				p.PostStart[col.First+m] != g.Start[post] || p.DoneEnd[col.First+m] != g.End[done] {
				fail("collective %d/%d member %d differs", col.Comm, col.Seq, m)
				break
			}
		}
	}
	n, _ := mpix.AllreduceOne(c, int64(len(p.Colls)), mpix.Sum)
	if int(n) != len(g.Colls) {
		fail("%d collective instances in all parts, want %d", n, len(g.Colls))
	}
	if !slices.EqualFunc(p.Syncs, one.Syncs, func(a, b []int32) bool { return slices.Equal(a, b) }) {
		fail("%d synchronisation points, %d with one rank", len(p.Syncs), len(one.Syncs))
	}
	return bad
}
