// Command otf2bench measures cpath's OTF2 export and import on one log
// directory (generated with bench/gen unless -dir is given): cpath export
// --otf2 of the logs, and the analysis of the logs against the analysis
// of the archive (the same report), each under GNU time for its wall
// time and peak resident memory, with CPATH_TIMINGS for the time the
// analysis spends reading (its "count" and "read" steps). The analyses
// are interleaved, repetition by repetition, so that the machine's noise
// falls on both alike; medians are reported.
//
//	go run ./bench/otf2bench -ranks 16 -calls 1000000 -reps 3
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cpath/cpath/bench/gen"
)

func main() {
	dir := flag.String("dir", "", "measure on this log directory instead of generating one")
	ranks := flag.Int("ranks", 16, "ranks to generate")
	calls := flag.Int("calls", 1_000_000, "calls per rank to generate")
	pattern := flag.String("pattern", "halo", "halo, collectives, random or imbalanced")
	reps := flag.Int("reps", 3, "repetitions of each measurement (median reported)")
	bin := flag.String("cpath", "bin/cpath", "the cpath to measure")
	flag.Parse()
	if err := run(*bin, *dir, *ranks, *calls, *pattern, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "otf2bench:", err)
		os.Exit(1)
	}
}

// sample is one measured run.
type sample struct {
	wall time.Duration
	rss  int64 // KiB
	read time.Duration
}

func run(bin, dir string, ranks, calls int, pattern string, reps int) error {
	tmp, err := os.MkdirTemp("", "otf2bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if dir == "" {
		dir = filepath.Join(tmp, "logs")
		fmt.Fprintf(os.Stderr, "generating %d ranks × %d calls (%s)...\n", ranks, calls, pattern)
		if err := gen.Write(gen.Spec{Dir: dir, Ranks: ranks, CallsPerRank: calls, Pattern: gen.Pattern(pattern), Seed: 1, Synchronised: true}); err != nil {
			return err
		}
	}
	var export []sample
	archive := filepath.Join(tmp, "otf2")
	for i := 0; i < reps; i++ {
		os.RemoveAll(archive)
		s, err := measure(bin, "export", "--otf2", archive, dir)
		if err != nil {
			return err
		}
		export = append(export, s)
	}
	logBytes, arcBytes := size(dir), size(archive)
	var logs, otf2 []sample
	for i := 0; i < reps; i++ {
		for _, in := range []string{dir, archive} {
			s, err := measure(bin, "--json", filepath.Join(tmp, "report.json"), in)
			if err != nil {
				return err
			}
			if in == dir {
				logs = append(logs, s)
			} else {
				otf2 = append(otf2, s)
			}
		}
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\tinput\twall\tpeak RSS\treading\t\n")
	row := func(what, in string, ss []sample) {
		m := median(ss)
		read := "-"
		if m.read > 0 {
			read = m.read.Round(time.Millisecond).String()
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d MiB\t%s\t\n", what, in, m.wall.Round(10*time.Millisecond), m.rss/1024, read)
	}
	row("cpath export --otf2", fmt.Sprintf("logs %d MiB -> archive %d MiB", logBytes>>20, arcBytes>>20), export)
	row("cpath (analysis)", "logs", logs)
	row("cpath (analysis)", "archive", otf2)
	w.Flush()
	ml, mo := median(logs), median(otf2)
	fmt.Printf("archive / logs: analysis %.2f× wall, %.2f× peak RSS, reading %.2f× (medians of %d, interleaved)\n",
		mo.wall.Seconds()/ml.wall.Seconds(), float64(mo.rss)/float64(ml.rss), mo.read.Seconds()/ml.read.Seconds(), reps)
	return nil
}

var (
	timeLine = regexp.MustCompile(`(?m)^otf2bench-time ([0-9.]+) (\d+)$`)
	stepLine = regexp.MustCompile(`(?m)^cpath timings: rank 0: (count|read)\s+([0-9.]+) s`)
)

// measure runs cpath with args under GNU time, with CPATH_TIMINGS.
func measure(bin string, args ...string) (sample, error) {
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "otf2bench-time %e %M", bin}, args...)...)
	cmd.Env = append(os.Environ(), "CPATH_TIMINGS=1")
	var errs bytes.Buffer
	cmd.Stderr = &errs
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("cpath %s: %v\n%s", strings.Join(args, " "), err, errs.String())
	}
	m := timeLine.FindStringSubmatch(errs.String())
	if m == nil {
		return sample{}, fmt.Errorf("no GNU time line in cpath's stderr (is /usr/bin/time GNU time?)")
	}
	sec, _ := strconv.ParseFloat(m[1], 64)
	rss, _ := strconv.ParseInt(m[2], 10, 64)
	s := sample{wall: time.Duration(sec * float64(time.Second)), rss: rss}
	for _, st := range stepLine.FindAllStringSubmatch(errs.String(), -1) {
		v, _ := strconv.ParseFloat(st[2], 64)
		s.read += time.Duration(v * float64(time.Second))
	}
	return s, nil
}

// median is the median of each measure apart.
func median(ss []sample) sample {
	pick := func(f func(sample) int64) int64 {
		v := make([]int64, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return sample{wall: time.Duration(pick(func(s sample) int64 { return int64(s.wall) })), rss: pick(func(s sample) int64 { return s.rss }),
		read: time.Duration(pick(func(s sample) int64 { return int64(s.read) }))}
}

// size is the bytes of the files under dir.
func size(dir string) int64 {
	n := int64(0)
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}
