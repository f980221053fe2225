package graph

import (
	"math/rand"
	"testing"
)

// TestReqTable checks the request table against a map under random
// inserts, lookups and deletes of nearby ids.
func TestReqTable(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var tab reqTable
	tab.init()
	ref := map[uint32]int32{}
	for i := 0; i < 200000; i++ {
		k := uint32(rng.Intn(3000))
		switch rng.Intn(3) {
		case 0:
			v := int32(rng.Intn(1 << 20))
			tab.put(k, v)
			ref[k] = v
		case 1:
			tab.del(k)
			delete(ref, k)
		}
		want, ok := ref[k]
		if !ok {
			want = -1
		}
		if got := tab.get(k); got != want {
			t.Fatalf("step %d: get(%d) = %d, want %d", i, k, got, want)
		}
	}
	n := 0
	tab.each(func(int32) { n++ })
	if n != len(ref) || tab.n != len(ref) {
		t.Fatalf("%d entries (n %d), want %d", n, tab.n, len(ref))
	}
}

// TestWrongOrder checks the wrong-order marks against their definition
// (a message to the same rank sent strictly earlier was received later),
// with runs whose sends are not in start order too.
func TestWrongOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for iter := 0; iter < 200; iter++ {
		P, n := 2+rng.Intn(4), 50
		g := randomCalls(rng, P, n, false)
		for c := range g.Start {
			if rng.Intn(3) == 0 {
				g.Start[c] = g.Start[c] / 10 * 10 // ties
			}
			if iter%2 == 1 && rng.Intn(5) == 0 {
				g.Start[c] -= 100 // runs out of start order
			}
		}
		var msgs []partMsg
		var deps []dep
		for k := 0; k < P*n/3; k++ {
			src, dst := rng.Intn(P), rng.Intn(P)
			if src == dst {
				continue
			}
			sp, rd := int32(src*n+rng.Intn(n)), int32(dst*n+rng.Intn(n))
			msgs = append(msgs, partMsg{sendPost: sp, sendDone: sp, recvPost: rd, recvDone: rd})
			deps = append(deps, dep{done: rd, cause: sp, kind: LateSender})
		}
		b := oneRankBuilder(g, deps)
		b.msgs = msgs
		got := b.wrongOrder()
		for i, m := range msgs {
			want := false
			for _, o := range msgs {
				if g.rank(o.recvDone) == g.rank(m.recvDone) && g.Start[o.sendPost] < g.Start[m.sendPost] && g.End[o.recvDone] > g.End[m.recvDone] {
					want = true
				}
			}
			if has := got != nil && got.has(i); has != want {
				t.Fatalf("iter %d: message %d wrong order %v, want %v", iter, i, has, want)
			}
		}
	}
}
