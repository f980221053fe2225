package replay

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/cpath/cpath/bench/gen"
	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/internal/mpix/mpixtest"
)

// reference is the replay's solves by the plainest sequential means, the
// oracle of the distributed sweeps: one process's whole graph, its
// vertices in a topological order (cpath.TopoOrder), a solve one pass
// over them by vertex id, the walk back along the first edge of each
// row, by source id, that gives the vertex its distance.
type reference struct {
	p     *graph.PAG
	order []int32
	attrs []cattr // by call
}

func newReference(t *testing.T, p *graph.PAG) *reference {
	g := &cpath.Graph{N: p.NumVertices(), InStart: p.InStart, InSrc: p.InSrc, InWeight: p.InWeight}
	ref := &reference{p: p}
	if err := cpath.TopoOrder(g, nil, func(v int32) { ref.order = append(ref.order, v) }); err != nil {
		t.Fatal(err)
	}
	return ref
}

// drops says whether edge e is no dependency under r: a send held by its
// receiver's progress, in the POP ideal run.
func (ref *reference) drops(r *rule, e int32) bool {
	return r.dropHeld && ref.p.InKind[e] == graph.EdgeHeldSend
}

// weight is edge e's (into v) under r.
func (ref *reference) weight(r *rule, v, e int32) int64 {
	modes, tab := r.modes(), r.mul
	var a cattr
	if int(v) < 2*ref.p.NumCalls() {
		a = ref.attrs[v>>1]
	}
	m, mode := rowRule(r, &modes, r.perCall(), int32(ref.p.NumCalls()), v, a, &tab)
	switch mode {
	case plainRow:
		return ref.p.InWeight.At(e)
	case zeroRow:
		return 0
	}
	return scale(ref.p.InWeight.At(e), m[ref.p.InKind[e]])
}

func (ref *reference) solve(r *rule) (dist []int64, length int64, end int32) {
	p := ref.p
	dist = make([]int64, p.NumVertices())
	for _, v := range ref.order {
		for e := p.InStart[v]; e < p.InStart[v+1]; e++ {
			if !ref.drops(r, e) {
				dist[v] = max(dist[v], dist[p.InSrc[e]]+ref.weight(r, v, e))
			}
		}
	}
	end = -1
	for v, d := range dist {
		if end < 0 || d > length {
			length, end = d, int32(v)
		}
	}
	return dist, length, end
}

// profile is where the path runs, by rank and by operation (as
// sweeper.profile sums them before taking the top ones).
func (ref *reference) profile(r *rule, dist []int64, end int32) ([]RankNs, []OpNs) {
	p := ref.p
	calls := int32(p.NumCalls())
	byRank := make([]int64, p.Ranks)
	var byOp [258]int64
	for v := end; p.InStart[v] < p.InStart[v+1]; {
		pick := int32(-1)
		for e := p.InStart[v]; e < p.InStart[v+1]; e++ {
			if u := p.InSrc[e]; !ref.drops(r, e) && dist[u]+ref.weight(r, v, e) == dist[v] && (pick < 0 || u < p.InSrc[pick]) {
				pick = e
			}
		}
		u := p.InSrc[pick]
		if ns := dist[v] - dist[u]; v < 2*calls && ns != 0 {
			c := v >> 1
			byRank[p.Rank(c)] += ns
			switch p.InKind[pick] {
			case graph.EdgeProgram:
				byOp[256] += ns
			case graph.EdgeLaunch:
				byOp[257] += ns
			default:
				byOp[p.Op[c]] += ns
			}
		}
		v = u
	}
	return topRanks(byRank), topOps(byOp[:])
}

// TestSweepAgainstReference: on generated runs of every pattern, each
// scenario's solve and walk, and the window's ideal run, at 1-4 analyzer
// ranks, give the reference's answers.
func TestSweepAgainstReference(t *testing.T) {
	var redistributed atomic.Int64 // runs on rows redistributed by frame
	defer func() {
		if redistributed.Load() == 0 {
			t.Error("no run's frames balanced: the rows redistributed by frame were not tried")
		}
	}()
	for i, pat := range []gen.Pattern{gen.Halo, gen.Collectives, gen.RandomP2P, gen.Imbalanced} {
		dir := t.TempDir()
		if err := gen.Write(gen.Spec{Dir: dir, Ranks: 3 + i, CallsPerRank: 300, Pattern: pat, Seed: int64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		run, err := graph.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := graph.Build(&mpix.Single{}, run)
		if err != nil {
			t.Fatal(err)
		}
		ref := newReference(t, whole)
		infos := rankInfos(whole, false, 0, 0)
		scen := []planned{{Scenario: Scenario{Kind: Transfers, Factor: 0}}, {Scenario: Scenario{Kind: RankScale, Rank: 1, Factor: 3}},
			{Scenario: Scenario{Kind: Balance, Rank: 0, Factor: 0.25}}, {Scenario: Scenario{Kind: Callsite, Factor: 0.5}, Set: 0}}
		set := []site{{Rank: 0, PC: whole.Calls.CallSite(whole.RankStart[0] + 3)}, {Rank: 2, PC: whole.Calls.CallSite(whole.RankStart[2] + 4)}}
		wj, err := newJobs(whole, infos, [][]site{set}, false, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		ref.attrs = wj.attrs
		type answer struct {
			Length int64
			Ranks  []RankNs
			Ops    []OpNs
		}
		var want []answer
		for _, r := range append([]*rule{identity(), wj.ideal()}, func() (rs []*rule) {
			for k := range scen {
				rs = append(rs, wj.ruleOf(&scen[k]))
			}
			return rs
		}()...) {
			dist, length, end := ref.solve(r)
			ranks, ops := ref.profile(r, dist, end)
			want = append(want, answer{length, ranks, ops})
		}
		for P := 1; P <= 4; P++ {
			for _, frames := range []bool{false, true} {
				if frames && P == 1 {
					continue
				}
				got := make([][]answer, P)
				errs := make([]error, P)
				mpixtest.Run(P, func(c mpix.Comm) {
					errs[c.Rank()] = func() error {
						p, err := graph.Build(c, run)
						if err != nil {
							return err
						}
						_, sched, rows, err := pathIn(c, p, frames)
						if err != nil {
							return err
						}
						if rows != nil && c.Rank() == 0 {
							redistributed.Add(1)
						}
						infos := rankInfos(p, false, 0, 0)
						j, err := newJobs(p, infos, [][]site{set}, false, 0, 0)
						if err != nil {
							return err
						}
						p.Release() // as the analyzer lets go of the PAG
						w, err := newSweeper(c, p, sched, rows, true)
						if err != nil {
							return err
						}
						if p.InSrc != nil || p.InStart != nil || p.Start != nil {
							return fmt.Errorf("rank %d kept the PAG's edges or calls", c.Rank())
						}
						j.w = w
						if err := w.setAttrs(j.attrs); err != nil {
							return err
						}
						for _, r := range append([]*rule{identity(), j.ideal()}, func() (rs []*rule) {
							for k := range scen {
								rs = append(rs, j.ruleOf(&scen[k]))
							}
							return rs
						}()...) {
							length, end, at, err := w.solve(r)
							if err != nil {
								return err
							}
							ranks, ops, err := w.profile(r, end, at)
							if err != nil {
								return err
							}
							got[c.Rank()] = append(got[c.Rank()], answer{length, ranks, ops})
						}
						return nil
					}()
				})
				for q := range P {
					if errs[q] != nil {
						t.Fatalf("%s P=%d frames=%v rank %d: %v", pat, P, frames, q, errs[q])
					}
					if !reflect.DeepEqual(got[q], want) {
						t.Fatalf("%s P=%d frames=%v rank %d:\n%v\nthe reference's\n%v", pat, P, frames, q, fmt.Sprint(got[q]), fmt.Sprint(want))
					}
				}
			}
		}
	}
}
