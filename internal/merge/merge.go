// Package merge merges sequences that are each sorted into one sorted
// sequence, reading every source concurrently: the k-way merge behind reads
// that span several tables or partitions whose keys interleave (design guide
// §6.8 period tables, §6.12 buckets), so that the caller sees one result in
// the service's order, as if one query had read it.
package merge

import (
	"container/heap"
	"context"
	"iter"
	"sync"
)

// Sorted yields the items of every source in the order cmp defines; items
// that compare equal come in source order (the first source's first). Each
// source must itself be sorted by cmp. Every source runs in a goroutine of
// its own from the start, since the smallest item may be anywhere: a source
// that issues requests should bound them itself.
//
// The first error of any source is yielded and ends the sequence. Stopping
// early, or ctx ending, stops the sources: each source is called with a
// context that ends when the merge does. A source must stop when its context
// ends.
func Sorted[T any](ctx context.Context, sources []func(context.Context) iter.Seq2[T, error], cmp func(a, b T) int) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		ctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		type item struct {
			v   T
			err error
		}
		chans := make([]chan item, len(sources))
		for i, src := range sources {
			ch := make(chan item, 64)
			chans[i] = ch
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(ch)
				for v, err := range src(ctx) {
					select {
					case ch <- item{v, err}:
					case <-ctx.Done():
						return
					}
					if err != nil {
						return
					}
				}
			}()
		}

		h := &heads[T]{cmp: cmp}
		// next reads source i's next item into the heap; false after an error
		// was yielded (or the caller stopped).
		next := func(i int) bool {
			select {
			case it, ok := <-chans[i]:
				if !ok {
					// A source stopped by the context ends without an
					// error: say why the result is incomplete.
					if err := ctx.Err(); err != nil {
						yield(zero, err)
						return false
					}
					return true
				}
				if it.err != nil {
					yield(zero, it.err)
					return false
				}
				heap.Push(h, head[T]{v: it.v, src: i})
				return true
			case <-ctx.Done():
				yield(zero, ctx.Err())
				return false
			}
		}
		for i := range chans {
			if !next(i) {
				return
			}
		}
		for h.Len() > 0 {
			top := heap.Pop(h).(head[T])
			if !yield(top.v, nil) {
				return
			}
			if !next(top.src) {
				return
			}
		}
	}
}

type head[T any] struct {
	v   T
	src int
}

// heads is a min-heap of each source's current item.
type heads[T any] struct {
	items []head[T]
	cmp   func(a, b T) int
}

func (h *heads[T]) Len() int { return len(h.items) }
func (h *heads[T]) Less(i, j int) bool {
	if c := h.cmp(h.items[i].v, h.items[j].v); c != 0 {
		return c < 0
	}
	return h.items[i].src < h.items[j].src
}
func (h *heads[T]) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *heads[T]) Push(x any)    { h.items = append(h.items, x.(head[T])) }
func (h *heads[T]) Pop() any {
	n := len(h.items) - 1
	x := h.items[n]
	h.items = h.items[:n]
	return x
}
