package report

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// csvTable is one table of the report as a CSV file: its name (the file is
// name.csv), its header row and its rows, which rows hands to row one at a
// time (a table may hold every segment of the critical path).
type csvTable struct {
	name   string
	header []string
	rows   func(r *Report, row func(cells ...string))
}

// csvTables are the report's tables, in the order WriteCSV writes them. A
// new output adds its tables here.
var csvTables = []csvTable{
	{"by_rank", []string{"rank", "launch_ns", "compute_ns", "mpi_ns", "transfer_ns", "share", "io_ns"}, func(r *Report, row func(...string)) {
		for _, b := range r.CriticalPath.ByRank {
			row(itoa(b.Rank), i64(b.LaunchNs), i64(b.ComputeNs), i64(b.MPINs), i64(b.TransferNs), f64(b.Share), i64(b.IONs))
		}
	}},
	{"by_op", []string{"op", "ns", "count", "share"}, func(r *Report, row func(...string)) {
		for _, o := range r.CriticalPath.ByOp {
			row(o.Op, i64(o.Ns), itoa(o.Count), f64(o.Share))
		}
	}},
	{"by_callsite", []string{"rank", "callsite", "function", "ops", "ns", "stretches", "share", "via", "depth_reached"}, func(r *Report, row func(...string)) {
		for _, c := range r.CriticalPath.ByCallsite {
			row(itoa(c.Rank), c.Callsite, c.Function, strings.Join(c.Ops, " "), i64(c.Ns), itoa(c.Stretches), f64(c.Share),
				strings.Join(c.Via, " > "), strconv.FormatBool(c.DepthReached))
		}
	}},
	{"segments", []string{"rank", "kind", "op", "start_ns", "end_ns", "callsite", "function"}, func(r *Report, row func(...string)) {
		for _, s := range r.CriticalPath.Segments {
			row(itoa(s.Rank), s.Kind, s.Op, i64(s.StartNs), i64(s.EndNs), s.Callsite, s.Function)
		}
	}},
	{"processes", []string{"rank", "program_time_ns", "graph_time_ns", "total_time_ns", "total_execution_time_ns",
		"total_wait_time_ns", "imbalance", "bounded_imbalance", "num_calls", "num_nodes", "num_edges"}, func(r *Report, row func(...string)) {
		for _, p := range r.Processes {
			row(itoa(p.Rank), i64(p.ProgramTimeNs), i64(p.GraphTimeNs), i64(p.TotalTimeNs), i64(p.TotalExecutionNs),
				i64(p.TotalWaitNs), f64(p.Imbalance), f64(p.BoundedImbalance), itoa(p.NumCalls), itoa(p.NumNodes), itoa(p.NumEdges))
		}
		t := r.Totals
		row("total", i64(t.ProgramTimeNs), i64(t.GraphTimeNs), i64(t.TotalTimeNs), i64(t.TotalExecutionNs),
			i64(t.TotalWaitNs), f64(t.Imbalance), f64(t.BoundedImbalance), itoa(t.NumCalls), itoa(t.NumNodes), itoa(t.NumEdges))
	}},
	{"calls", []string{"op", "comm", "seq", "members", "wait_before_ns", "wait_after_ns", "execution_ns", "imbalance",
		"synchronising", "bounded_imbalance", "last_rank"},
		func(r *Report, row func(...string)) {
			for _, c := range r.Calls {
				row(c.Op, c.Comm, itoa(c.Seq), itoa(c.Members), i64(c.WaitBeforeNs), i64(c.WaitAfterNs), i64(c.ExecutionNs),
					f64(c.Imbalance), strconv.FormatBool(c.Synchronising), f64(c.BoundedImbalance), itoa(c.LastRank))
			}
		}},
	waitTable("waitstates_by_rank", "rank", func(r *Report) []WaitBreakdown { return r.Waitstates.ByRank }),
	waitTable("waitstates_by_op", "op", func(r *Report) []WaitBreakdown { return r.Waitstates.ByOp }),
	waitTable("waitstates_by_comm", "comm", func(r *Report) []WaitBreakdown { return r.Waitstates.ByComm }),
	{"comm_matrix", []string{"kind", "src", "dst", "count", "bytes"}, func(r *Report, row func(...string)) {
		for _, p := range r.CommMatrix.P2P {
			row("p2p", itoa(p.Src), itoa(p.Dst), i64(p.Count), i64(p.Bytes))
		}
		for _, p := range r.CommMatrix.Collective {
			row("collective", itoa(p.Src), itoa(p.Dst), i64(p.Count), i64(p.Bytes))
		}
		for _, p := range r.CommMatrix.OneSided {
			row("one-sided", itoa(p.Src), itoa(p.Dst), i64(p.Count), i64(p.Bytes))
		}
	}},
	{"communicators", []string{"name", "size", "members", "calls", "time_ns"}, func(r *Report, row func(...string)) {
		for _, c := range r.Communicators {
			ms := make([]string, len(c.Members))
			for i, m := range c.Members {
				ms[i] = strconv.Itoa(int(m))
			}
			row(c.Name, itoa(c.Size), strings.Join(ms, " "), i64(c.Calls), i64(c.TimeNs))
		}
	}},
	{"message_sizes", []string{"kind", "lo", "hi", "count"}, func(r *Report, row func(...string)) {
		for _, b := range r.MessageSizes.P2P {
			row("p2p", u64(b.Lo), u64(b.Hi), i64(b.Count))
		}
		for _, b := range r.MessageSizes.Collective {
			row("collective", u64(b.Lo), u64(b.Hi), i64(b.Count))
		}
	}},
	// The POP factors: the whole run ("run"), then each phase by index,
	// then the --from/--to window ("window").
	{"pop", []string{"phase", "level", "load_balance", "communication_efficiency", "serialisation_efficiency",
		"transfer_efficiency", "parallel_efficiency", "from_ns", "to_ns", "ideal_runtime_ns"}, func(r *Report, row func(...string)) {
		if r.POP == nil {
			return
		}
		f := func(phase, level string, x *POPFactors) {
			row(phase, level, f64(x.LoadBalance), f64(x.CommunicationEfficiency), f64(x.SerialisationEfficiency),
				f64(x.TransferEfficiency), f64(x.ParallelEfficiency), i64(x.WindowNs[0]), i64(x.WindowNs[1]), i64(x.IdealRuntimeNs))
		}
		f("run", "", &r.POP.POPFactors)
		for i := range r.POP.Phases {
			ph := &r.POP.Phases[i]
			level := ""
			if ph.Level != nil {
				level = i64(int64(*ph.Level))
			}
			f(itoa(ph.Phase), level, &ph.POPFactors)
		}
		if r.POP.Window != nil {
			f("window", "", r.POP.Window)
		}
	}},
	{"what_if", []string{"scenario", "description", "runtime_ns", "gain_ns", "gain", "default"}, func(r *Report, row func(...string)) {
		for _, w := range r.WhatIf {
			row(w.Scenario, w.Description, i64(w.RuntimeNs), i64(w.GainNs), f64(w.Gain), strconv.FormatBool(w.Default))
		}
	}},
}

// waitTable is a wait-state breakdown as a table keyed by key.
func waitTable(name, key string, rows func(r *Report) []WaitBreakdown) csvTable {
	return csvTable{name, []string{key, "late_sender_ns", "late_receiver_ns", "wrong_order_ns", "late_receiver_synchronous_ns",
		"late_receiver_progress_ns", "wait_at_barrier_ns", "wait_at_nxn_ns", "late_broadcast_ns", "early_reduce_ns", "wait_at_fence_ns",
		"partitioned_late_sender_ns", "partitioned_late_receiver_ns", "late_post_ns", "early_wait_ns", "late_complete_ns", "rma_flush_ns"}, func(r *Report, row func(...string)) {
		for _, b := range rows(r) {
			row(b.Key, i64(b.LateSenderNs), i64(b.LateReceiverNs), i64(b.WrongOrderNs), i64(b.LateReceiverSynchronousNs),
				i64(b.LateReceiverProgressNs), i64(b.WaitAtBarrierNs), i64(b.WaitAtNxNNs), i64(b.LateBroadcastNs), i64(b.EarlyReduceNs), i64(b.WaitAtFenceNs),
				i64(b.PartitionedLateSenderNs), i64(b.PartitionedLateReceiverNs), i64(b.LatePostNs), i64(b.EarlyWaitNs), i64(b.LateCompleteNs),
				i64(b.RMAFlushNs))
		}
	}}
}

// CSVFiles are the names of the files WriteCSV writes.
func CSVFiles() []string {
	names := make([]string, len(csvTables))
	for i, t := range csvTables {
		names[i] = t.name + ".csv"
	}
	return names
}

// WriteCSV writes every table of the report into dir, one CSV file each
// with a header row (see CSVFiles), creating dir if it is missing.
func WriteCSV(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return pathErr(err)
	}
	for _, t := range csvTables {
		if err := writeCSVFile(filepath.Join(dir, t.name+".csv"), t, r); err != nil {
			return err
		}
	}
	return nil
}

func writeCSVFile(name string, t csvTable, r *Report) error {
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("%s: %v", filepath.Base(name), pathErr(err))
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	w := csv.NewWriter(bw)
	w.Write(t.header)
	t.rows(r, func(cells ...string) { w.Write(cells) })
	w.Flush()
	err = w.Error()
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %v", filepath.Base(name), pathErr(err))
	}
	return nil
}

// pathErr drops the path from a file system error (the caller names the
// file): "not a directory" rather than "mkdir a/b: not a directory".
func pathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

func itoa(v int) string    { return strconv.Itoa(v) }
func i64(v int64) string   { return strconv.FormatInt(v, 10) }
func u64(v uint64) string  { return strconv.FormatUint(v, 10) }
func f64(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
