// Command genlogs writes a synthetic run's logs in the real log format
// (package bench/gen): any number of ranks and calls per rank, in one of
// the patterns halo, collectives, random or imbalanced; causal, as the
// logger's synchronised clocks show a run, unless -independent-clocks.
//
//	go run ./bench/genlogs -dir /tmp/run16 -ranks 16 -calls 1000000 -pattern halo
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cpath/cpath/bench/gen"
)

func main() {
	dir := flag.String("dir", "", "directory to write the logs to (created)")
	ranks := flag.Int("ranks", 16, "logged ranks")
	calls := flag.Int("calls", 100_000, "calls per rank")
	pattern := flag.String("pattern", "halo", "halo, collectives, random or imbalanced")
	seed := flag.Int64("seed", 1, "random seed")
	independent := flag.Bool("independent-clocks", false, "each rank's timeline runs on its own (messages often arrive before they are sent: the clock correction's worst case), instead of causal, as the logger's synchronised clocks show a run")
	flag.Parse()
	if *dir == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: genlogs -dir DIR [-ranks N] [-calls N] [-pattern P] [-seed S] [-independent-clocks]")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "genlogs:", err)
		os.Exit(1)
	}
	spec := gen.Spec{Dir: *dir, Ranks: *ranks, CallsPerRank: *calls, Pattern: gen.Pattern(*pattern), Seed: *seed, Synchronised: !*independent}
	if err := gen.Write(spec); err != nil {
		fmt.Fprintln(os.Stderr, "genlogs:", err)
		os.Exit(1)
	}
}
