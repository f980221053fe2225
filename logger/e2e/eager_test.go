//go:build mpi

package e2e

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cpath/cpath/internal/mpitest"
)

// TestEagerLimits records testdata/barrier.c under each MPI with one of
// its eager limits set through the environment, and checks that every
// rank's header holds that limit with the value set, and no control
// variable that only looks like one (MPICH's MPIR_CVAR_CTXID_EAGER_SIZE
// counts context id words). Open MPI's are those of the transports the
// run opened: limited to self and tcp, vader's are not there.
func TestEagerLimits(t *testing.T) {
	const np = 2
	for _, tc := range []struct {
		name  string
		impl  *mpitest.Impl
		cvar  string // as the header names it
		env   string // how the MPI is told
		value string
		more  []string // more environment
		not   string   // a limit the header must not have
	}{
		{"openmpi/btl_vader_eager_limit", mpitest.OpenMPI, "btl_vader_eager_limit", "OMPI_MCA_btl_vader_eager_limit", "12288", nil, ""},
		{"openmpi/btl_tcp_eager_limit", mpitest.OpenMPI, "btl_tcp_eager_limit", "OMPI_MCA_btl_tcp_eager_limit", "23456", []string{"OMPI_MCA_btl=self,tcp"}, "btl_vader_eager_limit"},
		{"mpich/NEMESIS_SHM_EAGER_MAX_SZ", mpitest.MPICH, "MPIR_CVAR_NEMESIS_SHM_EAGER_MAX_SZ", "MPIR_CVAR_NEMESIS_SHM_EAGER_MAX_SZ", "12345", nil, ""},
		{"mpich/CH3_EAGER_MAX_MSG_SIZE", mpitest.MPICH, "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE", "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE", "54321", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.impl
			lib := m.LoggerLib(t)
			exe := mpitest.Compile(t, t.TempDir(), m.CC(t), "barrier.c")
			logDir := filepath.Join(t.TempDir(), "logs")
			m.RunEnv(t, np, append([]string{tc.env + "=" + tc.value}, tc.more...), lib, logDir, filepath.Dir(exe), exe)
			for r, l := range mpitest.ReadLogs(t, logDir, np) {
				got := ""
				for _, v := range l.Header.EagerLimits {
					if strings.Contains(strings.ToUpper(v.Name), "CTXID") {
						t.Errorf("rank %d: %s = %d is not an eager limit", r, v.Name, v.Value)
					}
					if v.Name == tc.cvar {
						got = strconv.FormatInt(v.Value, 10)
					}
					if v.Name == tc.not {
						t.Errorf("rank %d: %s = %d, a limit of a transport the run did not open", r, v.Name, v.Value)
					}
				}
				if got != tc.value {
					t.Errorf("rank %d: %s = %q, want %s (from %s); eager limits %+v", r, tc.cvar, got, tc.value, tc.env, l.Header.EagerLimits)
				}
			}
		})
	}
}
