// Command cpath is the post-mortem critical-path analyzer for MPI programs.
//
// This file holds the command tree; each command lives in its own file and
// the work behind it in small helpers of this package.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// exitStatus is returned by a command that wants cpath to exit with a given
// status without printing an error (record passes the program's status on).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// run executes the command line args and returns the process exit status.
// Errors are printed once, on one line, as "cpath: <error>".
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var st exitStatus
	if errors.As(err, &st) {
		return int(st)
	}
	// Under mpirun every rank meets the same error (they agree on one):
	// only rank 0 prints it. The others leave it time to: mpirun aborts
	// the job at the first rank that exits non-zero, and a rank 0 still
	// starting up (a bad flag is met before MPI_Init) would be killed
	// before its line is written.
	if r := os.Getenv("OMPI_COMM_WORLD_RANK"); r == "" || r == "0" {
		fmt.Fprintf(stderr, "cpath: %v\n", err)
	} else {
		time.Sleep(errorGrace)
	}
	return 1
}

// errorGrace is how long the ranks other than 0 wait before exiting on an
// error, for rank 0 to print it.
const errorGrace = 500 * time.Millisecond

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	var o analyzeOpts
	root := &cobra.Command{
		Use:   "cpath [flags] LOGDIR",
		Short: "Post-mortem critical-path analyzer for MPI programs",
		Long: `cpath records the MPI calls of an unmodified MPI program with a preloaded
logger (libcpathlog.so), one log per rank, for post-mortem analysis.

  cpath record -o LOGDIR -np 4 -- ./app ARGS   run ./app under mpirun with the logger
  cpath info LOGDIR                            summarise what was recorded
  cpath LOGDIR  (or cpath analyze LOGDIR)      critical path, imbalance, wait states
  cpath export --otf2 OUTDIR LOGDIR            write the run as an OTF2 archive (Vampir)

LOGDIR may also be an OTF2 archive (Score-P, TAU): its anchor file
traces.otf2 or the directory holding it.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return fmt.Errorf("want one LOGDIR, got %d arguments (see cpath --help)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return runAnalyze(o, args[0], stdout)
		},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetOut(stdout)
	root.SetErr(stderr)
	addAnalyzeFlags(root, &o)
	root.AddCommand(newAnalyzeCmd(stdout), newRecordCmd(), newInfoCmd(), newExportCmd(stdout), newLoggerPathCmd(), newVersionCmd())
	return root
}
