// Package par runs loops on every core of one process: reading the logs,
// the graph's build steps, the searches' set-up, the timeline's counts.
// (Across analyzer ranks the work is divided by internal/mpix's exchanges
// instead.)
package par

import (
	"runtime"
	"sync"
)

// Do runs f(0), …, f(n-1) on up to GOMAXPROCS goroutines (in order on the
// calling goroutine when that is 1), and returns when all have returned.
func Do(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// Bounds cuts [0, n) into parts ranges of about equal length: range k is
// [b[k], b[k+1]).
func Bounds[T int | int32](n T, parts int) []T {
	b := make([]T, parts+1)
	for k := range b {
		b[k] = T(int64(n) * int64(k) / int64(parts))
	}
	return b
}
