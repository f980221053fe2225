package trace

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// docClass is the name docs/log-format.md gives each class.
var docClass = map[Class]string{
	ClassOther: "other", ClassSend: "send", ClassRecv: "recv", ClassSendRecv: "sendrecv",
	ClassIsend: "isend", ClassIrecv: "irecv", ClassSendInit: "send_init", ClassRecvInit: "recv_init",
	ClassStart: "start", ClassComplete: "complete", ClassRequestFree: "request_free", ClassProbe: "probe",
	ClassCollective: "collective", ClassIcollective: "icollective", ClassCommCreate: "comm_create",
	ClassCommFree: "comm_free", ClassPartitioned: "partitioned", ClassSub: "sub",
	ClassGrequest: "grequest", ClassGrequestComplete: "grequest_complete",
	ClassFileIO: "file_io", ClassFileIIO: "file_iio",
	ClassMprobe: "mprobe", ClassMrecv: "mrecv",
	ClassRMA: "rma", ClassRMARequest: "rma_request", ClassRMAGroup: "rma_group",
	ClassCollInit: "coll_init",
}

// TestDocOpTable keeps the operation table of docs/log-format.md in step
// with ops, the one table the logger's code is generated from.
func TestDocOpTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "log-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| (\\d+) \\| ([^|]+?) \\| (\\w+) \\| (?:`(.)`)? *\\|$")
	seen := map[Op]bool{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.Atoi(m[1])
		o := Op(n)
		if n >= int(NumOps) {
			t.Errorf("docs list op %d (%s), trace has %d ops", n, m[2], NumOps)
			continue
		}
		var letter byte
		if m[4] != "" {
			letter = m[4][0]
		}
		if m[2] != o.String() || m[3] != docClass[o.Class()] || letter != o.CommLetter() {
			t.Errorf("docs: op %d is %s, class %s, letter %q; trace: %s, %s, %q",
				n, m[2], m[3], letter, o.String(), docClass[o.Class()], o.CommLetter())
		}
		seen[o] = true
	}
	for o := Op(0); o < NumOps; o++ {
		if !seen[o] {
			t.Errorf("op %d (%v) is not in the table of docs/log-format.md", o, o)
		}
	}
}

// TestOpTable: every code has a name, names are unique (OpByName), the
// collectives that move data have a flow and nothing else has one, and the
// constructors' letters are unique too (they start communicator names), but
// for the two sides of MPI_Comm_accept/MPI_Comm_connect.
func TestOpTable(t *testing.T) {
	names := map[string]Op{}
	letters := map[byte]Op{'W': OpInvalid, 's': OpInvalid} // MPI_COMM_WORLD's and MPI_COMM_SELF's
	for o := Op(0); o < NumOps; o++ {
		n := o.String()
		if n == "" {
			t.Errorf("op %d has no name", o)
		}
		if p, ok := names[n]; ok {
			t.Errorf("ops %d and %d are both %s", p, o, n)
		}
		names[n] = o
		if got, ok := OpByName(n); !ok || got != o {
			t.Errorf("OpByName(%q) = %d, %v; want %d", n, got, ok, o)
		}
		// A data flow marks collectives only; a collective without one is
		// a constructor, a free, a window's creation or free, or a file
		// operation, which move none of the program's data. A new
		// collective that moves data fails here until it has its flow.
		// MPI_Init is a barrier over MPI_COMM_WORLD (IsWorldBarrier).
		f := o.Flow()
		coll := o.IsCollective() || o.Class() == ClassCollInit || o.IsWorldBarrier()
		if f != FlowNone && !coll {
			t.Errorf("%v: flow %d, but not a collective", o, f)
		}
		if f == FlowNone && coll && o.Class() != ClassCommCreate && o.Class() != ClassCommFree && !o.IsRMA() && !o.IsIO() {
			t.Errorf("%v: a collective without a data flow", o)
		}
		if f > FlowNeighbor {
			t.Errorf("%v: flow %d is not a Flow constant", o, f)
		}
		l := o.CommLetter()
		if (l != 0) != (o.Class() == ClassCommCreate) {
			t.Errorf("%v: class %d, letter %q: constructors, and only they, have a letter", o, o.Class(), l)
		}
		if l != 0 {
			if p, ok := letters[l]; ok && !(p == OpCommAccept && o == OpCommConnect) {
				t.Errorf("%v and %v both have letter %q", p, o, l)
			}
			letters[l] = o
		}
	}
}
