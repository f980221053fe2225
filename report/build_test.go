package report

import (
	"reflect"
	"testing"
)

// TestByCallsite: the path's computation summed by rank and call site,
// the ops made there sorted, other kinds left out, longest first (ties by
// rank, then site).
func TestByCallsite(t *testing.T) {
	seg := func(rank int, kind, op string, from, to int64, site string) Segment {
		return Segment{Rank: rank, Kind: kind, Op: op, StartNs: from, EndNs: to, Callsite: site, Function: "f"}
	}
	for _, tc := range []struct {
		name string
		segs []Segment
		want []CallsiteShare
	}{
		{"none", nil, []CallsiteShare{}},
		{"only MPI", []Segment{seg(0, "mpi", "MPI_Send", 0, 5, "a.c:1")}, []CallsiteShare{}},
		{"summed", []Segment{
			seg(0, "compute", "MPI_Send", 0, 10, "a.c:1"),
			seg(0, "mpi", "MPI_Send", 10, 15, "a.c:1"),
			seg(1, "compute", "MPI_Recv", 15, 25, "a.c:2"),
			seg(0, "compute", "MPI_Isend", 25, 30, "a.c:1"), // the same site, through a pointer
			seg(1, "launch", "MPI_Init", 30, 40, ""),
			seg(0, "compute", "MPI_Send", 40, 50, "a.c:3"),
		}, []CallsiteShare{
			{Rank: 0, Callsite: "a.c:1", Function: "f", Ops: []string{"MPI_Isend", "MPI_Send"}, Ns: 15, Stretches: 2, Share: 0.3},
			{Rank: 0, Callsite: "a.c:3", Function: "f", Ops: []string{"MPI_Send"}, Ns: 10, Stretches: 1, Share: 0.2},
			{Rank: 1, Callsite: "a.c:2", Function: "f", Ops: []string{"MPI_Recv"}, Ns: 10, Stretches: 1, Share: 0.2},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := byCallsite(tc.segs, 50, nil); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("byCallsite:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
