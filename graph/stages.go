package graph

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// StageTimes prints, with CPATH_TIMINGS=1 in the environment, the wall
// time of each step of the analysis to stderr, one line a step and
// analyzer rank: where a slow analysis spends its time, without a
// profiler or an instrumented build (bench/README.md).
type StageTimes struct {
	on   bool
	mu   sync.Mutex
	last time.Time
}

var stageTimes = NewStageTimes()

// NewStageTimes returns the timer, on when CPATH_TIMINGS is set to 1.
func NewStageTimes() *StageTimes { return &StageTimes{on: os.Getenv("CPATH_TIMINGS") == "1"} }

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
	if name != "" && !s.last.IsZero() {
		fmt.Fprintf(os.Stderr, "cpath timings: rank %d: %-14s %8.3f s\n", rank, name, now.Sub(s.last).Seconds())
	}
	s.last = now
}
