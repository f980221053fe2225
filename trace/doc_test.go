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
