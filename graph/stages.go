package graph

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// StageTimes prints, with CPATH_TIMINGS=1 in the environment, the wall
// time of each step of the analysis to stderr, with the page faults the
// process took in it (first touches of new memory, which cost as much as
// the work on some machines), the cores it kept busy on average (the
// process's CPU time over the wall time) and the process's peak resident
// memory so far, one line a step and analyzer rank: where a slow analysis
// spends its time and reaches its peak, without a profiler or an
// instrumented build (bench/README.md).
type StageTimes struct {
	on     bool
	mu     sync.Mutex
	last   time.Time
	faults int64         // minor page faults of the process at last
	cpu    time.Duration // the process's CPU time (user and system) at last
}

var stageTimes = &StageTimes{on: os.Getenv("CPATH_TIMINGS") == "1"}

// Timings is the analysis's one timer, shared by the commands.
func Timings() *StageTimes { return stageTimes }

// Mark ends the step called name (an empty name only starts the clock)
// and starts the next.
func (s *StageTimes) Mark(rank int, name string) {
	if !s.on {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if name != "" && !s.last.IsZero() {
		wall := now.Sub(s.last)
		fmt.Fprintf(os.Stderr, "cpath timings: rank %d: %-14s %8.3f s %8d page faults %5.2f cores %6d MiB peak\n", rank, name, wall.Seconds(), ru.Minflt-s.faults,
			float64(cpu-s.cpu)/float64(max(wall, 1)), ru.Maxrss>>10)
	}
	s.last, s.faults, s.cpu = now, ru.Minflt, cpu
}
