package entity

import (
	"container/heap"
	"context"

	"github.com/tablekit/tablekit/keys"
)

// fanItem is one result of one partition of a fan-out query.
type fanItem[T any] struct {
	v   T
	err error
}

// gated makes fetch take one of slots for each request, so that a fan-out
// that reads every partition at once still has at most cap(slots) requests
// in flight.
func gated[E any](slots chan struct{}, fetch pageFetcher[E]) pageFetcher[E] {
	return func(ctx context.Context, c compiled, top int, cont continuation) ([]E, continuation, error) {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil, continuation{}, ctx.Err()
		}
		defer func() { <-slots }()
		return fetch(ctx, c, top, cont)
	}
}

// mergeByRowKey passes the items of streams, each in RowKey order, to emit
// in RowKey order (service order, keys.Compare), the earlier stream first
// among equal RowKeys; an error item is passed as soon as it is at the head
// of its stream. It returns false when emit did.
func mergeByRowKey[T any](streams []chan fanItem[T], rowKey func(*T) string, emit func(fanItem[T]) bool) bool {
	h := &heads[T]{}
	pull := func(i int) bool {
		it, ok := <-streams[i]
		if !ok {
			return true
		}
		if it.err != nil {
			return emit(it)
		}
		heap.Push(h, head[T]{rk: rowKey(&it.v), stream: i, it: it})
		return true
	}
	for i := range streams {
		if !pull(i) {
			return false
		}
	}
	for h.Len() > 0 {
		top := heap.Pop(h).(head[T])
		if !emit(top.it) || !pull(top.stream) {
			return false
		}
	}
	return true
}

type head[T any] struct {
	rk     string
	stream int
	it     fanItem[T]
}

// heads is a min-heap of stream heads by (RowKey, stream).
type heads[T any] []head[T]

func (h heads[T]) Len() int { return len(h) }
func (h heads[T]) Less(i, j int) bool {
	if c := keys.Compare(h[i].rk, h[j].rk); c != 0 {
		return c < 0
	}
	return h[i].stream < h[j].stream
}
func (h heads[T]) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *heads[T]) Push(x any)   { *h = append(*h, x.(head[T])) }
func (h *heads[T]) Pop() any {
	old := *h
	last := old[len(old)-1]
	*h = old[:len(old)-1]
	return last
}
