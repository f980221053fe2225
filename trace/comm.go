package trace

import "strconv"

// Comm is one entry of a rank's communicator table.
type Comm struct {
	// Name identifies the communicator across ranks, as mpisee does: the
	// constructor's letter, the world rank of local rank 0, and that rank's
	// creation counter ("W0.0" is MPI_COMM_WORLD, "S2.1" the second
	// communicator rank 2 created by MPI_Comm_split).
	Name    string
	Op      Op      // the constructor (OpInvalid for the predefined ones)
	Parent  uint32  // index of the communicator it was created from
	Members []int32 // world rank of each local rank
	Remote  []int32 // intercommunicators: world rank of each remote rank
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
		if r.Op.Class() != ClassCommCreate || r.Req == 0 || r.Req > 1<<20 {
			continue
		}
		c := Comm{Op: r.Op, Parent: r.Comm,
			Name: string(r.Op.CommLetter()) + strconv.Itoa(int(r.Root)) + "." + strconv.Itoa(int(r.Tag))}
		for j := i + 1; j <= i+int(r.Count) && j < len(recs) && recs[j].Op == OpMember; j++ {
			if recs[j].Flags&FlagRemote != 0 {
				c.Remote = append(c.Remote, recs[j].Peer)
			} else {
				c.Members = append(c.Members, recs[j].Peer)
			}
		}
		for int(r.Req) >= len(comms) {
			comms = append(comms, Comm{})
		}
		comms[r.Req] = c
	}
	return comms
}
