package trace

import (
	"strconv"
	"strings"
)

// Comm is one entry of a rank's communicator table.
type Comm struct {
	// Name identifies the communicator across ranks, as mpisee does: the
	// constructor's letter, the world rank of local rank 0, and that rank's
	// creation counter ("W0.0" is MPI_COMM_WORLD, "S2.1" the first
	// communicator rank 2 led, made by MPI_Comm_split). Both sides of an
	// intercommunicator take the name of the leader with the lower world
	// rank; MPI_Comm_idup's is "d" + the parent's name + "." + the idup's
	// sequence number on the parent ("dW0.0.7"), MPI_Comm_idup_with_info's
	// the same with "e".
	Name    string
	Op      Op      // the constructor (OpInvalid for the predefined ones)
	Parent  uint32  // index of the communicator it was created from
	Members []int32 // world rank of each local rank
	Remote  []int32 // intercommunicators: world rank of each rank of the other group
	// Sources and Dests are this rank's in- and out-neighbours in the
	// communicator's topology (cart, graph or dist-graph), as world ranks
	// in MPI's neighbour order (ProcNull for MPI_PROC_NULL slots of a
	// non-periodic cart: PeerProcNull); nil when it has no topology.
	Sources, Dests []int32
}

// BuildComms rebuilds a rank's communicator table from its header and the
// constructor records (each followed by its Member sub-records, then a
// topology's NeighborSource and NeighborDest ones). The table is
// indexed like Record.Comm; slots of communicators the log does not define
// (a log cut short) are left with an empty Name.
func BuildComms(h *Header, recs []Record) []Comm {
	b := NewCommBuilder(h)
	for i := range recs {
		b.Add(&recs[i])
	}
	return b.Comms()
}

// CommBuilder builds a rank's communicator table from its records fed one
// at a time, in log order, so that a log can be streamed: BuildComms is
// NewCommBuilder, Add for every record, then Comms.
type CommBuilder struct {
	comms   []Comm
	cur     Comm   // the constructor whose Member sub-records are being read
	idx     uint32 // its slot
	left    uint32 // sub-records of it that may still be members
	pending bool
}

// NewCommBuilder starts a table with the predefined communicators of the
// rank the header describes, or with the header's table (Header.Comms).
func NewCommBuilder(h *Header) *CommBuilder {
	if len(h.Comms) > 0 {
		return &CommBuilder{comms: append([]Comm(nil), h.Comms...)}
	}
	world := make([]int32, h.Size)
	for i := range world {
		world[i] = int32(i)
	}
	return &CommBuilder{comms: []Comm{
		CommWorld: {Name: "W0.0", Members: world},
		CommSelf:  {Name: "s" + strconv.Itoa(h.Rank) + ".0", Members: []int32{int32(h.Rank)}},
	}}
}

// Add feeds the next record of the log (calls and sub-records alike).
func (b *CommBuilder) Add(r *Record) {
	if b.pending || r.Op.Class() == ClassCommCreate {
		b.add(r)
	}
}

func (b *CommBuilder) add(r *Record) {
	if b.pending {
		if b.left > 0 && (r.Op == OpMember || r.Op == OpNeighborSource || r.Op == OpNeighborDest) {
			b.left--
			switch {
			case r.Op == OpNeighborSource:
				b.cur.Sources = append(b.cur.Sources, r.Peer)
			case r.Op == OpNeighborDest:
				b.cur.Dests = append(b.cur.Dests, r.Peer)
			case r.Flags&FlagRemote != 0:
				b.cur.Remote = append(b.cur.Remote, r.Peer)
			default:
				b.cur.Members = append(b.cur.Members, r.Peer)
			}
			if b.left == 0 {
				b.commit()
			}
			return
		}
		b.commit()
	}
	if r.Op.Class() != ClassCommCreate {
		return
	}
	idx := r.Req
	c := Comm{Op: r.Op, Parent: r.Comm,
		Name: string(r.Op.CommLetter()) + strconv.Itoa(int(r.Root)) + "." + strconv.Itoa(int(r.Tag))}
	if r.Op.IsNonblockingCommCreate() {
		// Nothing can be sent on a communicator before its idup
		// completes, so the logger cannot agree on a counter: the name is
		// the parent's and the idup's sequence number on it, which every
		// member shares. Req is the request; Tag the new index.
		if r.Count == 0 || r.Tag < 0 {
			return
		}
		idx = uint32(r.Tag)
		parent := "?"
		if int(r.Comm) < len(b.comms) && b.comms[r.Comm].Name != "" {
			parent = b.comms[r.Comm].Name
		}
		c.Name = string(r.Op.CommLetter()) + parent + "." + strconv.Itoa(int(r.Seq))
	}
	if idx == 0 || idx > 1<<20 {
		return
	}
	b.cur, b.idx, b.left, b.pending = c, idx, r.Count, true
	if b.left == 0 {
		b.commit()
	}
}

func (b *CommBuilder) commit() {
	for int(b.idx) >= len(b.comms) {
		b.comms = append(b.comms, Comm{})
	}
	b.comms[b.idx] = b.cur
	b.cur, b.pending = Comm{}, false
}

// Comms returns the table built from the records added so far; adding
// more records afterwards may change it.
func (b *CommBuilder) Comms() []Comm {
	if b.pending {
		cur, idx, left := b.cur, b.idx, b.left
		b.commit()
		b.cur, b.idx, b.left, b.pending = cur, idx, left, true
	}
	return b.comms
}

// CommLetterName is what the letter a communicator's name starts with
// (Comm.Name) stands for: MPI_COMM_WORLD, MPI_COMM_SELF or the
// constructors that have it ("" for none).
func CommLetterName(l byte) string {
	switch l {
	case 'W':
		return "MPI_COMM_WORLD"
	case 's':
		return "MPI_COMM_SELF"
	}
	var names []string
	for o := Op(0); o < NumOps; o++ {
		if l != 0 && o.CommLetter() == l {
			names = append(names, o.String())
		}
	}
	return strings.Join(names, " or ")
}
