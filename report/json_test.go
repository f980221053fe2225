package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cpath/cpath/graph"
)

// TestWriteJSON: the streamed report decodes to what encoding/json makes
// of it, every key of every struct included, with strings that need
// escaping, with and without the optional keys.
func TestWriteJSON(t *testing.T) {
	a := 0.25
	level := int32(2)
	full := &Report{RuntimeNs: 1234,
		CriticalPath: CriticalPath{Algo: "split/par-par", LengthNs: 1200, DiffNs: -34,
			Segments: []Segment{
				{Rank: 1, Kind: "launch", Op: "MPI_Init", StartNs: 0, EndNs: 5, Callsite: "a.c:1", Function: "main"},
				{Rank: 2, Kind: "compute", Op: "MPI_Send", StartNs: 5, EndNs: 900, Callsite: "dir \"q\"\\x<y>&é\x01.c:42",
					Function: "ns::f<int>::operator()"},
				{Rank: 0, Kind: "mpi", Op: "MPI_Recv", StartNs: 900, EndNs: 1200, Callsite: "liblammps.so.0+0x1f2e"},
			},
			Stretches: []PathStretch{{Rank: 1, EndNs: 5, Segments: 1, LaunchNs: 5}, {Rank: 2, StartNs: 5, EndNs: 1200, Segments: 2,
				ComputeNs: 895, MPINs: 300, IONs: 1, TransferNs: 2}},
			ByRank: []RankShare{{Rank: 1, LaunchNs: 5, ComputeNs: 7, MPINs: 8, TransferNs: 9, Share: 0.5}},
			ByOp:   []OpShare{{Op: "computation", Ns: 3, Count: 2, Share: 0.1}}, Agreement: &a, WindowNs: []int64{5, 1000},
			ByCallsite: []CallsiteShare{{Rank: 1, Callsite: "a.c:4", Function: "f", Ops: []string{"MPI_Send"}, Ns: 4, Stretches: 1, Share: 0.5}},
			Analyzer: &AnalyzerStats{Ranks: 2, Rounds: 3, BytesSent: 4, RawBytes: 5, BuildBytes: 6, Splits: 7,
				ExactAlgo: "dag", Relaxations: 8, Edges: 9, RelaxationsPerEdge: 0.9},
			UnclassifiedNs: 11, UnclassifiedByOp: []OpShare{{Op: "MPI_Init", Ns: 11, Count: 1, Share: 0.01}}, UnwrappedBoundNs: 12},
		Processes: []Process{{Rank: 0, ProgramTimeNs: 1, GraphTimeNs: 2, TotalTimeNs: 3, TotalExecutionNs: 4, TotalWaitNs: 5,
			Imbalance: 0.5, NumCalls: 6, NumNodes: 7, NumEdges: 8, BoundedImbalance: 0.25}},
		Totals: Totals{ProgramTimeNs: 1, NumEdges: 9, Imbalance: 1e-9, BoundedImbalance: 1},
		Calls: []Collective{{Op: "MPI_Allreduce", Comm: "W0.0", Seq: 3, Members: 4, WaitBeforeNs: 5, WaitAfterNs: 6,
			ExecutionNs: 7, Imbalance: 1.0 / 3, LastRank: 2, Synchronising: true, BoundedImbalance: 11.0 / 39},
			{Op: "MPI_Bcast", Comm: "W0.0", Seq: 4, Members: 4, BoundedImbalance: 1}},
		POP: &POP{POPFactors: POPFactors{LoadBalance: 0.75, CommunicationEfficiency: 0.5, SerialisationEfficiency: 0.625,
			TransferEfficiency: 0.8, ParallelEfficiency: 0.375, WindowNs: [2]int64{100, 5625}, RuntimeNs: 5525,
			IdealRuntimeNs: 5500, UsefulNs: []int64{2300, 4600}, AvgUsefulNs: 3450, MaxUsefulNs: 4600},
			Phases: []POPPhase{{Phase: 0, POPFactors: POPFactors{LoadBalance: 1}}, {Phase: 1, Level: &level, POPFactors: POPFactors{LoadBalance: 0.5}}}},
		WhatIf: []WhatIf{{Scenario: "balance:1", Description: "rank 1's \"computation\"", RuntimeNs: 4530, GainNs: 1100, Gain: 0.2,
			Default: true, PathRanks: []RankNs{{1, 4000}}, PathOps: []OpNs{{"computation", 3000}}},
			{Scenario: "callsite:a.c:3=0.5", Fix: true, OnPathNs: 7, PathRanks: []RankNs{}, PathOps: []OpNs{}}},
		Waitstates: Waitstates{WaitTimes: WaitTimes{LateSenderNs: 1}, ByRank: []WaitBreakdown{{Key: "0", WaitTimes: WaitTimes{LateSenderNs: 1}}}, ByOp: []WaitBreakdown{}, ByComm: []WaitBreakdown{},
			ByPartition: []PartitionWaits{{Partition: 1, Transfers: 2, Parrived: 1, LateSenderNs: 5}}},
		Run: RunInfo{LogDir: "/tmp/x", RunID: "r", Ranks: 2, Calls: 10, Messages: 3, Skipped: []string{"note"},
			UnwrappedCalls: []graph.UnwrappedCalls{{Name: "MPI_Buffer_detach", Calls: 3, Ns: 40, Ranks: []int{0, 2}, RankCalls: []uint64{1, 2}, RankNs: []int64{10, 30}}}},
		CommMatrix: CommMatrix{P2P: []Pair{{Src: 0, Dst: 1, Count: 3, Bytes: 1 << 40}, {Src: 1, Dst: 0, Count: 1, Bytes: 0}},
			Collective: []Pair{{Src: 1, Dst: 0, Count: 2, Bytes: 16}}},
		Communicators: []Communicator{{Name: "W0.0", Size: 2, Members: []int32{0, 1}, Calls: 7, TimeNs: 99},
			{Name: "S1.1", Size: 1, Members: []int32{1}, Calls: 1, TimeNs: 5}},
		MessageSizes: MessageSizes{P2P: []SizeBucket{{Lo: 0, Hi: 0, Count: 1}, {Lo: 1, Hi: 1, Count: 0}, {Lo: 2, Hi: 3, Count: 2}},
			Collective: []SizeBucket{{Lo: 1 << 63, Hi: 1<<64 - 1, Count: 1}}},
	}
	bare := &Report{RuntimeNs: 1}
	noSegs := *full
	noSegs.CriticalPath.Segments = nil
	for _, tc := range []struct {
		name  string
		r, as *Report // written, and what it must decode as
		full  bool
	}{{"full", full, full, true}, {"bare", bare, bare, true}, {"default", full, &noSegs, false}} {
		name, r := tc.name, tc.r
		var b bytes.Buffer
		if err := WriteJSON(&b, r, tc.full); err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(tc.as)
		if err != nil {
			t.Fatal(err)
		}
		var got, exp any
		if err := json.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatalf("%s: WriteJSON wrote invalid JSON: %v\n%s", name, err, b.String())
		}
		if err := json.Unmarshal(want, &exp); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, exp) {
			t.Fatalf("%s: WriteJSON\n%s\nencoding/json\n%s", name, b.String(), want)
		}
	}
}
