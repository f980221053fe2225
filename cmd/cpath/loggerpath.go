package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// loggerLib is the file name of the preloaded logger.
const loggerLib = "libcpathlog.so"

// findLogger returns the absolute path of libcpathlog.so: first
// ../lib/libcpathlog.so relative to the cpath executable (the layout `make`
// builds: bin/cpath and lib/libcpathlog.so), then $CPATH_LOGGER.
func findLogger() (string, error) {
	var tried []string
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		p := filepath.Join(filepath.Dir(exe), "..", "lib", loggerLib)
		if isFile(p) {
			return filepath.Abs(p)
		}
		tried = append(tried, filepath.Clean(p))
	}
	if env := os.Getenv("CPATH_LOGGER"); env != "" {
		if isFile(env) {
			return filepath.Abs(env)
		}
		return "", fmt.Errorf("CPATH_LOGGER=%s: no such file", env)
	}
	tried = append(tried, "$CPATH_LOGGER (unset)")
	return "", errors.New(loggerLib + " not found (tried " + strings.Join(tried, ", ") + "); build it with `make` or set CPATH_LOGGER")
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func newLoggerPathCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "logger-path",
		Short: "Print the absolute path of the logger library " + loggerLib,
		Long: `Print the absolute path of the logger library, for use with a hand-written
mpirun line:

  mpirun -x LD_PRELOAD=$(cpath logger-path) -x CPATH_DIR=LOGDIR -np 4 ./app

The library is looked up at ../lib/` + loggerLib + ` relative to the cpath
executable (where make puts it), then at $CPATH_LOGGER.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := findLogger()
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), p)
			return err
		},
	}
}
