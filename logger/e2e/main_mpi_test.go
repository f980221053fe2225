//go:build mpi

package e2e

import (
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
)

// TestMain removes the cpath command the tests built (mpitest.CPathBin).
func TestMain(m *testing.M) { mpitest.Main(m) }
