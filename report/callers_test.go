package report

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/cpath/cpath/graph"
)

// chain is a call site and its call path, as the functions their return
// addresses are in; fakeSites turns chains into one rank's SiteTable whose
// return addresses name each function once per position of a chain (the
// same function at the same place in two chains has one address, as one
// line of code does).
type chain []string

func fakeSites(chains ...chain) (graph.SiteTable, func(int, uint64) (string, string)) {
	fn := map[uint64]string{}
	addr := map[string]uint64{}
	at := func(i int, c chain) uint64 {
		// A return address is where a function calls the next one in:
		// keyed by the function and its callee.
		key := c[i] + "→"
		if i > 0 {
			key += c[i-1]
		}
		a, ok := addr[key]
		if !ok {
			a = uint64(0x1000 + 0x10*len(addr))
			addr[key], fn[a] = a, c[i]
		}
		return a
	}
	t := graph.SiteTable{FrameStart: []uint32{0}}
	for _, c := range chains {
		t.Sites = append(t.Sites, at(0, c))
		for i := 1; i < len(c); i++ {
			t.Frames = append(t.Frames, at(i, c))
		}
		t.FrameStart = append(t.FrameStart, uint32(len(t.Frames)))
	}
	return t, func(_ int, pc uint64) (string, string) {
		if fn[pc] == "?" {
			return fmt.Sprintf("0x%x", pc), ""
		}
		return fmt.Sprintf("%s+0x%x", fn[pc], pc), fn[pc]
	}
}

// TestWrapperLayer: the layer found from call paths is the functions
// that make one call towards MPI and are called from several places, or
// only from the layer; a two-level layer is found whole, a routine with
// two MPI calls or one caller is not in it.
func TestWrapperLayer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chains []chain
		want   []string
	}{
		{"two levels", []chain{
			{"layer_sum", "app_sum", "solve_heavy", "main"},
			{"layer_sum", "app_sum", "solve_light", "main"},
			{"layer_barrier", "app_barrier", "setup", "main"},
			{"layer_barrier", "app_barrier", "main", "__libc_start_call_main"},
		}, []string{"app_barrier", "app_sum", "layer_barrier", "layer_sum"}},
		{"one caller", []chain{
			{"layer_sum", "app_sum", "solve", "main"},
		}, nil},
		{"a routine called from two places looks like one", []chain{
			{"exchange", "step", "main"},
			{"exchange", "init", "main"},
			{"exchange", "step", "main"}, // one line of it: a call of MPI
		}, []string{"exchange"}},
		{"an unknown frame ends what is known", []chain{
			{"layer_sum", "?", "solve_heavy"},
			{"layer_sum", "?", "solve_light"},
		}, nil},
		{"depth ends in the layer", []chain{
			{"layer_sum", "app_sum"},
			{"layer_sum", "app_sum", "solve_heavy"},
			{"layer_sum", "app_sum", "solve_light"},
		}, []string{"app_sum", "layer_sum"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, name := fakeSites(tc.chains...)
			layer := wrapperLayer([]graph.SiteTable{st}, name)
			var got []string
			for fn := range layer {
				got = append(got, fn)
			}
			slices.Sort(got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("layer %q, want %q", got, tc.want)
			}
		})
	}
	// Two return addresses in one function: not a wrapper.
	st, name := fakeSites(chain{"exchange", "step", "main"}, chain{"exchange", "init", "main"})
	st.Sites = append(st.Sites, 0x9990) // exchange's second call of MPI
	st.Frames = append(st.Frames, st.Frames[0], st.Frames[1])
	st.FrameStart = append(st.FrameStart, uint32(len(st.Frames)))
	named := func(r int, pc uint64) (string, string) {
		if pc == 0x9990 {
			return "exchange+0x9990", "exchange"
		}
		return name(r, pc)
	}
	if layer := wrapperLayer([]graph.SiteTable{st}, named); len(layer) != 0 {
		t.Errorf("a function with two calls of MPI in the layer: %v", layer)
	}
}

// TestCallers: each site names the first caller outside the layer, with
// the layer's functions it went through, outermost first; a site outside
// the layer names none; where the recorded path ends in the layer, its
// outermost frame, said so. A regular expression sets the layer instead.
func TestCallers(t *testing.T) {
	st, name := fakeSites(
		chain{"layer_sum", "app_sum", "solve_heavy", "main"},
		chain{"layer_sum", "app_sum", "solve_light", "main"},
		chain{"layer_sum", "app_sum"},
		chain{"direct", "main"},
	)
	sites := []graph.SiteTable{st}
	for _, tc := range []struct {
		name  string
		match *regexp.Regexp
		want  []*caller // by site
	}{
		{"auto", nil, []*caller{
			{function: "solve_heavy", via: []string{"app_sum", "layer_sum"}},
			{function: "solve_light", via: []string{"app_sum", "layer_sum"}},
			{function: "app_sum", via: []string{"layer_sum"}, depth: true},
			nil,
		}},
		{"match", regexp.MustCompile("^layer_"), []*caller{
			{function: "app_sum", via: []string{"layer_sum"}},
			{function: "app_sum", via: []string{"layer_sum"}},
			{function: "app_sum", via: []string{"layer_sum"}},
			nil,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cn := newCallers(sites, tc.match, name)
			for k, want := range tc.want {
				i := cn.of(0, uint32(k))
				if want == nil {
					if i >= 0 {
						t.Errorf("site %d: caller %+v, want none", k, cn.list[i])
					}
					continue
				}
				if i < 0 {
					t.Errorf("site %d: no caller, want %+v", k, *want)
					continue
				}
				got := cn.list[i]
				got.site = ""
				if !reflect.DeepEqual(got, *want) {
					t.Errorf("site %d: caller %+v, want %+v", k, got, *want)
				}
				if j := cn.of(0, uint32(k)); j != i {
					t.Errorf("site %d named twice: %d, then %d", k, i, j)
				}
			}
		})
	}
	if cn := newCallers(sites, nil, name); cn.of(1, 0) != -1 || cn.of(0, 99) != -1 {
		t.Errorf("a rank or site beyond the tables has a caller")
	}
}
