// Package par runs the analysis's loops on every core of one process: the
// graph's build steps and the searches' set-up. (Across analyzer ranks the
// work is divided by internal/mpix's exchanges instead.)
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
