package otf2

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/cpath/cpath/graph"
)

func init() {
	graph.RegisterFormat(graph.Format{Name: "OTF2", Detect: Detect, Open: openRun})
}

// Detect says whether path is an OTF2 archive: an anchor file (*.otf2),
// or a directory holding one (traces.otf2, else a sole *.otf2), or a
// directory with an archive's other parts but no anchor (then the path
// of the anchor that is missing, which Open refuses in one line).
func Detect(path string) (string, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return path, strings.HasSuffix(path, ".otf2")
	}
	if !st.IsDir() {
		return path, strings.HasSuffix(path, ".otf2")
	}
	anchor := filepath.Join(path, "traces.otf2")
	if _, err := os.Stat(anchor); err == nil {
		return anchor, true
	}
	if m, _ := filepath.Glob(filepath.Join(path, "*.otf2")); len(m) == 1 {
		return m[0], true
	}
	if _, err := os.Stat(filepath.Join(path, "traces.def")); err == nil {
		return anchor, true
	}
	return "", false
}

func openRun(anchor string) (*graph.Run, error) {
	a, err := Open(anchor)
	if err != nil {
		return nil, err
	}
	return a.Run(), nil
}
