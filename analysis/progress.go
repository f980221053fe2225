package analysis

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressDelay is how long an analysis runs before it shows progress:
// short runs stay quiet.
const progressDelay = 2 * time.Second

// progress shows on stderr which stage a long analysis is in, from rank 0
// only: a spinner with the stage and the elapsed time on a terminal, one
// line per stage otherwise (logs of batch jobs).
type progress struct {
	mu      sync.Mutex
	out     io.Writer
	tty     bool
	start   time.Time
	stage   string
	bar     *progressbar.ProgressBar
	shown   bool
	stop    chan struct{}
	stopped sync.WaitGroup
	done    sync.Once
}

// newProgress returns a progress for rank `rank` (nil, which does
// nothing, on the others).
func newProgress(rank int) *progress {
	if rank != 0 {
		return nil
	}
	p := &progress{out: os.Stderr, tty: term.IsTerminal(int(os.Stderr.Fd())), start: time.Now(), stop: make(chan struct{})}
	p.stopped.Add(1)
	go func() {
		defer p.stopped.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.tick()
			}
		}
	}()
	return p
}

// Stage says what the analysis does now.
func (p *progress) Stage(s string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stage = s
	if p.shown {
		p.show()
	}
}

func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.shown && time.Since(p.start) >= progressDelay {
		p.shown = true
		if p.tty {
			p.bar = progressbar.NewOptions(-1, progressbar.OptionSetWriter(p.out), progressbar.OptionSpinnerType(14),
				progressbar.OptionSetElapsedTime(true), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
		}
		p.show()
	}
	if p.bar != nil {
		_ = p.bar.Add(1)
	}
}

func (p *progress) show() {
	if p.bar != nil {
		p.bar.Describe("cpath: " + p.stage)
		return
	}
	fmt.Fprintf(p.out, "cpath: %s (%.1f s)\n", p.stage, time.Since(p.start).Seconds())
}

// Done ends the display.
func (p *progress) Done() {
	if p == nil {
		return
	}
	p.done.Do(func() {
		close(p.stop)
		p.stopped.Wait()
		if p.bar != nil {
			_ = p.bar.Finish()
		}
	})
}
