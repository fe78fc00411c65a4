package indexset

import (
	"context"
	"sync"
)

// Ordered runs read(i) for i from 0 to n-1, at most concurrency at once,
// started in index order: the bucket reads of a table-wide lookup. The
// first failure in index order wins: a read that fails calls cancel(j) for
// every j after it, and none after it is started, while the reads before
// it finish (one of them may fail too, and comes first). A ctx that ends
// starts no more reads; the first read it kept from starting gets the
// error stopped(i). Ordered returns once every read has ended, with the
// error of the lowest index that has one.
func Ordered(ctx context.Context, n, concurrency int, read func(i int) error, cancel func(i int), stopped func(i int) error) error {
	errs := make([]error, n)
	var mu sync.Mutex // failed, and errs of the reads under way
	failed := n       // the first failing index so far
	sem := make(chan struct{}, max(concurrency, 1))
	var wg sync.WaitGroup
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		mu.Lock()
		stop := i > failed || ctx.Err() != nil
		mu.Unlock()
		if stop {
			if ctx.Err() != nil {
				errs[i] = stopped(i)
			}
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			err := read(i)
			mu.Lock()
			defer mu.Unlock()
			errs[i] = err
			if err != nil && i < failed {
				// A read after the first failure cannot come first.
				failed = i
				for j := i + 1; j < n; j++ {
					cancel(j)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
