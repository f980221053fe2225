package report

import "github.com/cpath/cpath/internal/mpix"

// The drawing's edges cross ranks (each analyzer rank's, gathered on rank
// 0) in mpix's framed form: the labels once each, then the edges as
// records naming their nodes' labels by index.

// dotNode is a DOTNode on the wire, its label an index into the message's
// labels.
type dotNode struct {
	Rank   int64
	Site   uint64
	Vertex int32
	Label  int32
}

// dotEdge is a DOTEdge on the wire.
type dotEdge struct {
	From, To dotNode
	Ns, N    int64
	OnPath   bool
	_        [7]byte
}

// PutDOTEdges puts es in e's message; ReadDOTEdges reads them back.
func PutDOTEdges(e *mpix.Encoder, es []DOTEdge) {
	var labels []string
	index := map[string]int32{}
	node := func(n DOTNode) dotNode {
		i, ok := index[n.Label]
		if !ok {
			i = int32(len(labels))
			index[n.Label] = i
			labels = append(labels, n.Label)
		}
		return dotNode{Rank: int64(n.Rank), Site: n.Site, Vertex: n.Vertex, Label: i}
	}
	ws := make([]dotEdge, len(es))
	for i, x := range es {
		ws[i] = dotEdge{From: node(x.From), To: node(x.To), Ns: x.Ns, N: int64(x.N), OnPath: x.OnPath}
	}
	mpix.PutList(e, labels, func(e *mpix.Encoder, s *string) { e.PutString(*s) })
	mpix.PutRecords(e, ws)
}

// ReadDOTEdges reads back what PutDOTEdges put (nil for none). Errors are
// d's: a label index out of range is one.
func ReadDOTEdges(d *mpix.Decoder) []DOTEdge {
	labels := mpix.ReadList(d, func(d *mpix.Decoder, s *string) { *s = d.ReadString() })
	ws := mpix.ReadRecords[dotEdge](d)
	if len(ws) == 0 {
		return nil
	}
	out := make([]DOTEdge, len(ws))
	node := func(n dotNode) DOTNode {
		if n.Label < 0 || int(n.Label) >= len(labels) {
			d.Fail("report: a drawing's node labelled %d of %d", n.Label, len(labels))
			return DOTNode{}
		}
		return DOTNode{Rank: int(n.Rank), Site: n.Site, Vertex: n.Vertex, Label: labels[n.Label]}
	}
	for i, w := range ws {
		out[i] = DOTEdge{From: node(w.From), To: node(w.To), Ns: w.Ns, N: int(w.N), OnPath: w.OnPath}
	}
	return out
}
