package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/cpath/cpath/trace"
)

// version is set at link time by the Makefile (-X main.version=…).
var version = ""

func versionString() string {
	v := version
	if v == "" {
		v = "devel"
		if bi, ok := debug.ReadBuildInfo(); ok {
			if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
				v = bi.Main.Version
			}
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" && len(s.Value) >= 12 {
					v += " " + s.Value[:12]
				}
			}
		}
	}
	mpi := "no (single process)"
	if builtWithMPI {
		mpi = "yes"
	}
	return fmt.Sprintf("cpath %s\nlog format version %d\n%s %s/%s, built with MPI: %s\n",
		v, trace.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH, mpi)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of cpath and of the log format it reads",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), versionString())
			return err
		},
	}
}
