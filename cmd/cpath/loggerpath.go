package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// loggerEnv names the environment variable that locates m's logger when it
// is not in ../lib: CPATH_LOGGER for Open MPI's, CPATH_LOGGER_MPICH.
func loggerEnv(m *mpiImpl) string {
	if m == openMPI {
		return "CPATH_LOGGER"
	}
	return "CPATH_LOGGER_" + strings.ToUpper(m.key)
}

// findLogger returns the absolute path of the logger built for m: first
// ../lib/<m.lib> relative to the cpath executable (the layout `make`
// builds: bin/cpath and lib/libcpathlog.so, lib/libcpathlog-mpich.so), then
// $CPATH_LOGGER ($CPATH_LOGGER_MPICH for MPICH's).
func findLogger(m *mpiImpl) (string, error) {
	var tried []string
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		p := filepath.Join(filepath.Dir(exe), "..", "lib", m.lib)
		if isFile(p) {
			return filepath.Abs(p)
		}
		tried = append(tried, filepath.Clean(p))
	}
	env := loggerEnv(m)
	if v := os.Getenv(env); v != "" {
		if isFile(v) {
			return filepath.Abs(v)
		}
		return "", fmt.Errorf("%s=%s: no such file", env, v)
	}
	tried = append(tried, "$"+env+" (unset)")
	build := "build it with `make`"
	if m != openMPI {
		build = "install " + m.name + " (make deps) and build it with `make`"
	}
	return "", errors.New(m.lib + " not found (tried " + strings.Join(tried, ", ") + "); " + build + " or set " + env)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func newLoggerPathCmd() *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "logger-path",
		Short: "Print the absolute path of the logger library (libcpathlog.so, libcpathlog-mpich.so)",
		Long: `Print the absolute path of the logger library, for use with a hand-written
mpirun line:

  mpirun.openmpi -x LD_PRELOAD=$(cpath logger-path) -x CPATH_DIR=LOGDIR -np 4 ./app
  mpirun.mpich -genv LD_PRELOAD $(cpath logger-path --mpi mpich) -genv CPATH_DIR LOGDIR -np 4 ./app

The logger must match the MPI the program links. The library is looked up
in ../lib relative to the cpath executable (where make puts it), then at
$CPATH_LOGGER (Open MPI's) or $CPATH_LOGGER_MPICH.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := mpiByKey(key)
			if err != nil {
				return fmt.Errorf("logger-path: --mpi: %v", err)
			}
			p, err := findLogger(m)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), p)
			return err
		},
	}
	cmd.Flags().StringVar(&key, "mpi", "openmpi", "the MPI the logger is for: openmpi or mpich")
	return cmd
}
