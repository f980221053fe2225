package trace

import "strconv"

// Comm is one entry of a rank's communicator table.
type Comm struct {
	// Name identifies the communicator across ranks, as mpisee does: the
	// constructor's letter, the world rank of local rank 0, and that rank's
	// creation counter ("W0.0" is MPI_COMM_WORLD, "S2.1" the first
	// communicator rank 2 led, made by MPI_Comm_split). Both sides of an
	// intercommunicator take the name of the leader with the lower world
	// rank; MPI_Comm_idup's is "d" + the parent's name + "." + the idup's
	// sequence number on the parent ("dW0.0.7").
	Name    string
	Op      Op      // the constructor (OpInvalid for the predefined ones)
	Parent  uint32  // index of the communicator it was created from
	Members []int32 // world rank of each local rank
	Remote  []int32 // intercommunicators: world rank of each rank of the other group
}

// BuildComms rebuilds a rank's communicator table from its header and the
// constructor records (each followed by its Member sub-records). The table is
// indexed like Record.Comm; slots of communicators the log does not define
// (a log cut short) are left with an empty Name.
func BuildComms(h *Header, recs []Record) []Comm {
	world := make([]int32, h.Size)
	for i := range world {
		world[i] = int32(i)
	}
	comms := []Comm{
		CommWorld: {Name: "W0.0", Members: world},
		CommSelf:  {Name: "s" + strconv.Itoa(h.Rank) + ".0", Members: []int32{int32(h.Rank)}},
	}
	for i := 0; i < len(recs); i++ {
		r := &recs[i]
		if r.Op.Class() != ClassCommCreate {
			continue
		}
		idx := r.Req
		c := Comm{Op: r.Op, Parent: r.Comm,
			Name: string(r.Op.CommLetter()) + strconv.Itoa(int(r.Root)) + "." + strconv.Itoa(int(r.Tag))}
		if r.Op == OpCommIdup {
			// Nothing can be sent on a communicator before its idup
			// completes, so the logger cannot agree on a counter: the name is
			// the parent's and the idup's sequence number on it, which every
			// member shares. Req is the request; Tag the new index.
			if r.Count == 0 || r.Tag < 0 {
				continue
			}
			idx = uint32(r.Tag)
			parent := "?"
			if int(r.Comm) < len(comms) && comms[r.Comm].Name != "" {
				parent = comms[r.Comm].Name
			}
			c.Name = "d" + parent + "." + strconv.Itoa(int(r.Seq))
		}
		if idx == 0 || idx > 1<<20 {
			continue
		}
		for j := i + 1; j <= i+int(r.Count) && j < len(recs) && recs[j].Op == OpMember; j++ {
			if recs[j].Flags&FlagRemote != 0 {
				c.Remote = append(c.Remote, recs[j].Peer)
			} else {
				c.Members = append(c.Members, recs[j].Peer)
			}
		}
		for int(idx) >= len(comms) {
			comms = append(comms, Comm{})
		}
		comms[idx] = c
	}
	return comms
}
