package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// defaultLogDir is where record (and the logger, when CPATH_DIR is unset)
// puts the logs.
const defaultLogDir = "cpath-logs"

const recordUsage = "record [-o LOGDIR] [--force] [mpirun options] -- PROGRAM [ARGS...]"

func newRecordCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   recordUsage,
		Short: "Run an MPI program under mpirun with the logger preloaded",
		Long: `Run PROGRAM under mpirun with the logger library preloaded into every rank,
so that each rank writes its log to LOGDIR/rank-NNNNNN.cplog.

Everything between the cpath flags and "--" is passed to mpirun unchanged
(for example -np 4 --oversubscribe --bind-to none); everything after "--" is
the program and its arguments. cpath adds

  -x LD_PRELOAD=<libcpathlog.so> -x CPATH_DIR=<LOGDIR>

and, when run as root, --allow-run-as-root (for MPICH's mpirun:
-genv LD_PRELOAD <libcpathlog-mpich.so> -genv CPATH_DIR <LOGDIR>).

The logger must be the one built for the MPI the program links: Open MPI
(lib/libcpathlog.so) or MPICH (lib/libcpathlog-mpich.so). cpath reads which
from the program's shared libraries (libmpi.so.40 or libmpich.so.12), or, if
it links neither itself, from the mpirun given with --mpirun. Without
--mpirun it runs that MPI's own mpirun (mpirun.openmpi or mpirun.mpich:
Debian's plain mpirun may be either's). A program and an mpirun of
different MPIs are refused. The logger library is looked up in ../lib
relative to the cpath executable, then at $CPATH_LOGGER (Open MPI's) or
$CPATH_LOGGER_MPICH (see cpath logger-path).

LOGDIR is created if needed. cpath refuses to write into a LOGDIR that already
holds *.cplog files, because the logs of two runs must not be mixed; --force
deletes those old logs first.

cpath exits with the exit status of mpirun, which is that of the program
(128+N if mpirun was killed by signal N). An interrupt (Ctrl-C) reaches
mpirun directly from the terminal; SIGTERM, SIGHUP and SIGQUIT sent to cpath
are passed on to mpirun.`,
		Example: `  cpath record -np 4 -- ./app input.dat
  cpath record -o logs/run1 --force -np 8 --oversubscribe -- lmp -in in.lj`,
		DisableFlagParsing:    true, // mpirun's options are not ours to parse
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := parseRecordArgs(args)
			if err != nil {
				return err
			}
			if o.help {
				return cmd.Help()
			}
			return runRecord(o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	// For --help only: parsing is done by parseRecordArgs.
	cmd.Flags().StringP("output", "o", defaultLogDir, "directory for the logs (the logger's CPATH_DIR)")
	cmd.Flags().Bool("force", false, "delete *.cplog files already in LOGDIR instead of refusing")
	cmd.Flags().String("mpirun", "", "the mpirun command to use (default: that of the MPI the program links, mpirun.openmpi or mpirun.mpich)")
	return cmd
}

// recordOpts is the parsed command line of record.
type recordOpts struct {
	dir     string
	force   bool
	mpirun  string   // as given by --mpirun; empty: chosen by the program's MPI
	mpiArgs []string // passed to mpirun before the program
	prog    []string // program and its arguments
	help    bool
}

// parseRecordArgs splits record's arguments into cpath's own flags, mpirun's
// options (everything else before "--") and the program (after "--").
func parseRecordArgs(args []string) (recordOpts, error) {
	o := recordOpts{dir: defaultLogDir}
	dash := -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		// value returns the value of a flag called one of names, given as
		// "name=v" or "name v", and whether a is that flag.
		value := func(names ...string) (string, bool, error) {
			for _, name := range names {
				if a == name {
					if i+1 >= len(args) || args[i+1] == "--" {
						return "", true, fmt.Errorf("record: %s needs a value", name)
					}
					i++
					return args[i], true, nil
				}
				if v, ok := strings.CutPrefix(a, name+"="); ok {
					return v, true, nil
				}
			}
			return "", false, nil
		}
		if a == "--" {
			dash = i
			break
		}
		if a == "-h" || a == "--help" || a == "-help" {
			o.help = true
			return o, nil
		}
		if a == "--force" {
			o.force = true
			continue
		}
		if v, ok, err := value("-o", "--output"); err != nil {
			return o, err
		} else if ok {
			if v == "" {
				return o, errors.New("record: empty LOGDIR")
			}
			o.dir = v
			continue
		}
		if v, ok, err := value("--mpirun"); err != nil {
			return o, err
		} else if ok {
			o.mpirun = v
			continue
		}
		o.mpiArgs = append(o.mpiArgs, a)
	}
	if dash < 0 {
		return o, errors.New("record: no \"--\" before the program; usage: cpath " + recordUsage)
	}
	o.prog = args[dash+1:]
	if len(o.prog) == 0 {
		return o, errors.New("record: no program after \"--\"; usage: cpath " + recordUsage)
	}
	return o, nil
}

// mpirunArgs builds mpirun's argument list (without argv[0]) for m's
// mpirun: Open MPI's passes environment with -x and refuses root unless
// asked; MPICH's (Hydra) passes it with -genv and runs as root.
func mpirunArgs(o recordOpts, m *mpiImpl, lib, dir string, root bool) []string {
	var a []string
	if m == openMPI && root && !hasOption(o.mpiArgs, "allow-run-as-root") {
		a = append(a, "--allow-run-as-root")
	}
	preload := lib
	if old := os.Getenv("LD_PRELOAD"); old != "" {
		preload += ":" + old
	}
	if m == mpich {
		a = append(a, "-genv", "LD_PRELOAD", preload, "-genv", "CPATH_DIR", dir)
	} else {
		a = append(a, "-x", "LD_PRELOAD="+preload, "-x", "CPATH_DIR="+dir)
	}
	a = append(a, o.mpiArgs...)
	return append(a, o.prog...)
}

// hasOption reports whether args holds the mpirun option name, spelled with
// one dash or two.
func hasOption(args []string, name string) bool {
	for _, a := range args {
		if a == "-"+name || a == "--"+name {
			return true
		}
	}
	return false
}

// cplogFiles returns the *.cplog files in dir, sorted.
func cplogFiles(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join(globEscape(dir), "*.cplog"))
}

// globEscape quotes the glob metacharacters of a literal path.
func globEscape(p string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(p)
}

// prepareLogDir creates dir, or checks that it holds no earlier logs
// (deleting them with force). It returns the absolute path.
func prepareLogDir(dir string, force bool) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		return "", fmt.Errorf("record: %s exists and is not a directory", dir)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("record: %v", err)
	}
	old, err := cplogFiles(abs)
	if err != nil {
		return "", err
	}
	if len(old) > 0 && !force {
		return "", fmt.Errorf("record: %s already holds %d log(s) (%s…) of an earlier run; "+
			"use --force to delete them or -o to choose another directory", dir, len(old), filepath.Base(old[0]))
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return "", fmt.Errorf("record: %v", err)
		}
	}
	return abs, nil
}

func runRecord(o recordOpts, stdin io.Reader, stdout, stderr io.Writer) error {
	m, mpirun, err := chooseMPI(o.prog[0], o.mpirun)
	if err != nil {
		return fmt.Errorf("record: %v", err)
	}
	lib, err := findLogger(m)
	if err != nil {
		return fmt.Errorf("record: %v", err)
	}
	dir, err := prepareLogDir(o.dir, o.force)
	if err != nil {
		return err
	}
	args := mpirunArgs(o, m, lib, dir, os.Geteuid() == 0)
	fmt.Fprintf(stderr, "cpath: recording %s into %s\n", o.prog[0], dir)

	c := exec.Command(mpirun, args...)
	c.Stdin, c.Stdout, c.Stderr = stdin, stdout, stderr
	if err := c.Start(); err != nil {
		return fmt.Errorf("record: %v", err)
	}
	// Ctrl-C reaches mpirun from the terminal (same process group); passing
	// it on as well would make mpirun kill the ranks at once instead of
	// letting them flush their logs. Other termination signals are passed on.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if s != os.Interrupt {
					_ = c.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	werr := c.Wait()
	signal.Stop(sigs)
	close(done)

	status := 0
	if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			return fmt.Errorf("record: %v", werr)
		}
		status = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = 128 + int(ws.Signal())
		}
	}

	logs, _ := cplogFiles(dir)
	switch {
	case len(logs) == 0:
		fmt.Fprintf(stderr, "cpath: no logs were written to %s (is %s an MPI program? did the logger load?)\n", dir, o.prog[0])
	case status != 0:
		fmt.Fprintf(stderr, "cpath: %s exited with status %d; %d log(s) in %s (see: cpath info %s)\n",
			o.prog[0], status, len(logs), dir, shellQuote(dir))
	default:
		fmt.Fprintf(stderr, "cpath: %d log(s) in %s (see: cpath info %s)\n", len(logs), dir, shellQuote(dir))
	}
	if status != 0 {
		return exitStatus(status)
	}
	return nil
}

// shellQuote quotes s for a shell command line when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
