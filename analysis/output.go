package analysis

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cpath/cpath/cpath"
	"github.com/cpath/cpath/graph"
	"github.com/cpath/cpath/internal/mpix"
	"github.com/cpath/cpath/report"
)

// drawing gathers the PAG's edges on rank 0 for the DOT graph: vertex by
// vertex for runs up to report.FullDOTCalls calls, else condensed to one
// node per rank and call site (the calls' own edges left out), each rank
// summing the edges into its vertices and asking the owners of remote
// sources for their call sites. Rank 0 marks the edges the path runs along.
func drawing(c mpix.Comm, p *graph.PAG, path cpath.Path, pathCalls graph.CallTable) ([]report.DOTEdge, error) {
	full := p.NumCalls() <= report.FullDOTCalls
	var remote []int32
	for _, u := range p.InSrc {
		if x, kind := p.Vertex(u); kind <= graph.VertexEnd && (x < p.CallLo || x >= p.CallHi) {
			remote = append(remote, x)
		}
	}
	info, err := p.FetchCalls(c, remote)
	if err = mpix.Agree(c, err); err != nil {
		return nil, err
	}
	call := func(x int32) graph.CallInfo {
		if x >= p.CallLo && x < p.CallHi {
			return p.CallInfo(x)
		}
		return info.At(x)
	}
	node := dotNode(p, full, call)
	m := map[[2]report.DOTNode]*report.DOTEdge{}
	base := p.Bounds[p.Part]
	for l := int32(0); l+1 < int32(len(p.InStart)); l++ {
		v := base + l
		for e := p.InStart[l]; e < p.InStart[l+1]; e++ {
			if !full && p.InKind[e] == graph.EdgeCall {
				continue
			}
			report.AddDOTEdge(m, node(p.InSrc[e]), node(v), p.InWeight.At(e), 1)
		}
	}
	mine := make([]report.DOTEdge, 0, len(m))
	for _, e := range m {
		mine = append(mine, *e)
	}
	all, err := mpix.Gather(c, func(e *mpix.Encoder) { report.PutDOTEdges(e, mine) }, report.ReadDOTEdges)
	if err = mpix.Agree(c, err); err != nil || c.Rank() != 0 {
		return nil, err
	}
	merged := map[[2]report.DOTNode]*report.DOTEdge{}
	for _, es := range all {
		for _, e := range es {
			report.AddDOTEdge(merged, e.From, e.To, e.Ns, e.N)
		}
	}
	onPath := map[[2]report.DOTNode]bool{}
	pathNode := dotNode(p, full, func(x int32) graph.CallInfo { return pathCalls.At(x) })
	vs := path.Vertices
	for i := 1; i < len(vs); i++ {
		onPath[[2]report.DOTNode{pathNode(vs[i-1]), pathNode(vs[i])}] = true
	}
	out := make([]report.DOTEdge, 0, len(merged))
	for k, e := range merged {
		e.OnPath = onPath[k]
		out = append(out, *e)
	}
	return out, nil
}

// dotNode returns the drawing's node of a vertex.
func dotNode(p *graph.PAG, full bool, call func(int32) graph.CallInfo) func(v int32) report.DOTNode {
	return func(v int32) report.DOTNode {
		c, kind := p.Vertex(v)
		n := report.DOTNode{Rank: -1, Vertex: -1}
		if full {
			n.Vertex = v
		}
		switch kind {
		case graph.VertexRun:
			n.Label = "start"
		case graph.VertexHub:
			n.Label = "hub"
		default:
			n.Rank = p.Rank(c)
			ci := call(c)
			if full {
				n.Label = map[graph.VertexKind]string{graph.VertexStart: "S ", graph.VertexEnd: "E "}[kind] + ci.Op.String()
			} else {
				n.Site = ci.CallSite
			}
		}
		if !full && n.Rank >= 0 {
			n.Label = ""
		}
		return n
	}
}

// writeOutputs writes, on rank 0, the DOT drawing, the matrix heatmap,
// the CSV tables and the JSON and/or text report, as asked.
func writeOutputs(o *Options, rep *report.Report, dot []report.DOTEdge, label func(rank int, pc uint64) string) error {
	stdout := o.Stdout
	if o.DOT != "" {
		if err := writeTo(o.DOT, stdout, func(w io.Writer) error { return report.WriteDOT(w, dot, label) }); err != nil {
			return err
		}
	}
	if o.Matrix != "" {
		if err := writeTo(o.Matrix, stdout, func(w io.Writer) error { return report.WriteHeatmap(w, rep, o.Matrix) }); err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the flag names the file
			}
			return fmt.Errorf("--matrix %s: %v", o.Matrix, err)
		}
	}
	if o.CSV != "" {
		if err := report.WriteCSV(o.CSV, rep); err != nil {
			return fmt.Errorf("--csv %s: %v", o.CSV, err)
		}
	}
	if o.JSON != "" {
		if err := writeTo(o.JSON, stdout, func(w io.Writer) error { return report.WriteJSON(w, rep, o.JSONSegments) }); err != nil {
			return err
		}
		if o.JSON == "-" {
			return nil
		}
	}
	if o.DOT == "-" {
		return nil
	}
	return writeTo("-", stdout, func(w io.Writer) error {
		report.WriteText(w, rep, o.Top)
		return nil
	})
}

// writeTo writes to the file name, or to stdout for "-".
func writeTo(name string, stdout io.Writer, write func(io.Writer) error) error {
	if name == "-" {
		bw := bufio.NewWriter(stdout)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
