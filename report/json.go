package report

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"unicode/utf8"
)

// WriteJSON writes the report as one JSON object (the keys of Report's
// tags), streamed: the arrays that grow with the run, the critical
// path's stretches and segments, the collective instances and the
// communication matrix, are appended field by field straight into the
// output, everything else goes through encoding/json. The critical path's
// segments are written only when full is set: its stretches say where it
// runs at a tenth of the size or less. With full, the result decodes to
// what json.Marshal(r) does (TestWriteJSON), at a fraction of its time and
// memory; without, to that with no segments.
func WriteJSON(w io.Writer, r *Report, full bool) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	j := &jsonWriter{w: bw}
	cp := &r.CriticalPath
	j.raw(`{"runtime_ns":`)
	j.int(r.RuntimeNs)
	j.raw(`,"critical_path":{"algo":`)
	j.str(cp.Algo)
	j.raw(`,"length_ns":`)
	j.int(cp.LengthNs)
	j.raw(`,"diff_ns":`)
	j.int(cp.DiffNs)
	j.raw(`,"stretches":`)
	j.stretches(cp.Stretches)
	if full && len(cp.Segments) > 0 {
		j.raw(`,"segments":`)
		j.segments(cp.Segments)
	}
	j.raw(`,"by_rank":`)
	j.value(cp.ByRank)
	j.raw(`,"by_op":`)
	j.value(cp.ByOp)
	j.raw(`,"by_callsite":`)
	j.value(cp.ByCallsite)
	if cp.WindowNs != nil {
		j.raw(`,"window_ns":`)
		j.value(cp.WindowNs)
	}
	if cp.Agreement != nil {
		j.raw(`,"agreement":`)
		j.value(*cp.Agreement)
	}
	if cp.Analyzer != nil {
		j.raw(`,"analyzer":`)
		j.value(cp.Analyzer)
	}
	j.raw(`,"unclassified_ns":`)
	j.int(cp.UnclassifiedNs)
	j.raw(`,"unclassified_by_op":`)
	j.value(cp.UnclassifiedByOp)
	j.raw(`,"unwrapped_bound_ns":`)
	j.int(cp.UnwrappedBoundNs)
	j.raw(`},"processes":`)
	j.value(r.Processes)
	j.raw(`,"totals":`)
	j.value(r.Totals)
	j.raw(`,"calls":`)
	j.collectives(r.Calls)
	j.raw(`,"waitstates":`)
	j.value(r.Waitstates)
	j.raw(`,"run":`)
	j.value(r.Run)
	j.raw(`,"pop":`)
	j.value(r.POP)
	j.raw(`,"what_if":`)
	j.value(r.WhatIf)
	j.raw(`,"comm_matrix":{"p2p":`)
	j.pairs(r.CommMatrix.P2P)
	j.raw(`,"collective":`)
	j.pairs(r.CommMatrix.Collective)
	j.raw(`,"one_sided":`)
	j.pairs(r.CommMatrix.OneSided)
	j.raw(`},"communicators":`)
	j.value(r.Communicators)
	j.raw(`,"message_sizes":`)
	j.value(r.MessageSizes)
	j.raw("}\n")
	if j.err != nil {
		return j.err
	}
	return bw.Flush()
}

// stretches writes the critical path's stretches field by field.
func (j *jsonWriter) stretches(ss []PathStretch) {
	if ss == nil {
		j.raw("null")
	} else {
		j.raw("[")
	}
	for i := range ss {
		s := &ss[i]
		if i > 0 {
			j.raw(",")
		}
		j.raw(`{"rank":`)
		j.int(int64(s.Rank))
		for _, f := range [...]struct {
			key string
			v   int64
		}{{"start_ns", s.StartNs}, {"end_ns", s.EndNs}, {"segments", int64(s.Segments)}, {"launch_ns", s.LaunchNs},
			{"compute_ns", s.ComputeNs}, {"mpi_ns", s.MPINs}, {"io_ns", s.IONs}, {"transfer_ns", s.TransferNs}} {
			j.raw(`,"` + f.key + `":`)
			j.int(f.v)
		}
		j.raw("}")
	}
	if ss != nil {
		j.raw("]")
	}
}

// segments writes the critical path's segments field by field (a path
// has a million on a big run).
func (j *jsonWriter) segments(segs []Segment) {
	j.raw("[")
	for i := range segs {
		s := &segs[i]
		if i > 0 {
			j.raw(",")
		}
		j.raw(`{"rank":`)
		j.int(int64(s.Rank))
		j.raw(`,"kind":`)
		j.str(s.Kind)
		j.raw(`,"op":`)
		j.str(s.Op)
		j.raw(`,"start_ns":`)
		j.int(s.StartNs)
		j.raw(`,"end_ns":`)
		j.int(s.EndNs)
		j.raw(`,"callsite":`)
		j.str(s.Callsite)
		j.raw(`,"function":`)
		j.str(s.Function)
		j.raw("}")
	}
	j.raw("]")
}

// collectives writes the collective instances field by field.
func (j *jsonWriter) collectives(calls []Collective) {
	if calls == nil {
		j.raw("null")
	} else {
		j.raw("[")
		for i := range calls {
			c := &calls[i]
			if i > 0 {
				j.raw(",")
			}
			j.raw(`{"op":`)
			j.str(c.Op)
			j.raw(`,"comm":`)
			j.str(c.Comm)
			j.raw(`,"seq":`)
			j.int(int64(c.Seq))
			j.raw(`,"members":`)
			j.int(int64(c.Members))
			j.raw(`,"wait_before_ns":`)
			j.int(c.WaitBeforeNs)
			j.raw(`,"wait_after_ns":`)
			j.int(c.WaitAfterNs)
			j.raw(`,"execution_ns":`)
			j.int(c.ExecutionNs)
			j.raw(`,"imbalance":`)
			j.value(c.Imbalance)
			j.raw(`,"last_rank":`)
			j.int(int64(c.LastRank))
			j.raw(`,"synchronising":`)
			j.value(c.Synchronising)
			j.raw(`,"bounded_imbalance":`)
			j.value(c.BoundedImbalance)
			j.raw("}")
		}
		j.raw("]")
	}
}

// pairs writes a communication matrix's pairs (a dense collective matrix
// has ranks² of them) field by field.
func (j *jsonWriter) pairs(ps []Pair) {
	if ps == nil {
		j.raw("null")
		return
	}
	j.raw("[")
	for i := range ps {
		p := &ps[i]
		if i > 0 {
			j.raw(",")
		}
		j.raw(`{"src":`)
		j.int(int64(p.Src))
		j.raw(`,"dst":`)
		j.int(int64(p.Dst))
		j.raw(`,"count":`)
		j.int(p.Count)
		j.raw(`,"bytes":`)
		j.int(p.Bytes)
		j.raw("}")
	}
	j.raw("]")
}

// jsonWriter appends JSON to a buffered writer, keeping the first error.
type jsonWriter struct {
	w   *bufio.Writer
	buf []byte
	err error
}

func (j *jsonWriter) raw(s string) {
	if j.err == nil {
		_, j.err = j.w.WriteString(s)
	}
}

func (j *jsonWriter) int(v int64) {
	j.buf = strconv.AppendInt(j.buf[:0], v, 10)
	if j.err == nil {
		_, j.err = j.w.Write(j.buf)
	}
}

// str writes a JSON string: plain printable ASCII as it is, anything else
// as encoding/json escapes it.
func (j *jsonWriter) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf || c == '<' || c == '>' || c == '&' {
			j.value(s)
			return
		}
	}
	j.raw(`"`)
	j.raw(s)
	j.raw(`"`)
}

// value writes v through encoding/json.
func (j *jsonWriter) value(v any) {
	if j.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		j.err = err
		return
	}
	_, j.err = j.w.Write(b)
}
