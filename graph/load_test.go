package graph

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cpath/cpath/trace"
)

// TestOversubscribed: a note for each host whose ranks outnumber its CPUs,
// none where they do not or where the logs do not say.
func TestOversubscribed(t *testing.T) {
	h := func(host string, cpus int) trace.Header { return trace.Header{Host: host, HostCPUs: cpus, CPUs: 1} }
	for _, tc := range []struct {
		name  string
		hs    []trace.Header
		hosts []string // the notes' hosts, in order
	}{
		{"fits", []trace.Header{h("a", 2), h("a", 2)}, nil},
		{"four on two", []trace.Header{h("a", 2), h("a", 2), h("a", 2), h("a", 2)}, []string{"host a ran 4 ranks on 2 CPUs"}},
		{"two hosts", []trace.Header{h("b", 1), h("b", 1), h("a", 4), h("a", 4), h("c", 1), h("c", 1)},
			[]string{"host b ran 2 ranks on 1 CPUs", "host c ran 2 ranks on 1 CPUs"}},
		{"not recorded", []trace.Header{h("a", 0), h("a", 0), h("a", 0)}, nil},
	} {
		var got []string
		for _, n := range Oversubscribed(tc.hs) {
			head, _, _ := strings.Cut(n, ":")
			got = append(got, head)
		}
		if !reflect.DeepEqual(got, tc.hosts) {
			t.Errorf("%s: notes %q, want %q", tc.name, got, tc.hosts)
		}
	}
}
