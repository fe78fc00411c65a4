package logtail

import (
	"container/heap"
	"iter"
	"slices"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// newestOf reads seq, which a backend without key order (Config.Unsorted)
// returns in any order, and returns its n smallest RowKeys — the n newest
// entries — in key order; n = 0 keeps all. It holds at most n entries.
func newestOf[T any](seq iter.Seq2[T, error], n int) ([]T, error) {
	h := &keyed[T]{}
	for e, err := range seq {
		if err != nil {
			return nil, err
		}
		sys, err := entity.SystemOf(&e)
		if err != nil {
			return nil, err
		}
		switch {
		case n == 0 || h.Len() < n:
			heap.Push(h, item[T]{sys.RowKey, e})
		case keys.Compare(sys.RowKey, h.items[0].key) < 0:
			h.items[0] = item[T]{sys.RowKey, e}
			heap.Fix(h, 0)
		}
	}
	slices.SortFunc(h.items, func(a, b item[T]) int { return keys.Compare(a.key, b.key) })
	out := make([]T, len(h.items))
	for i, it := range h.items {
		out[i] = it.v
	}
	return out, nil
}

type item[T any] struct {
	key string
	v   T
}

// keyed is a max-heap by RowKey: the root is the oldest entry kept, the
// one to drop when a newer one arrives.
type keyed[T any] struct{ items []item[T] }

func (h *keyed[T]) Len() int           { return len(h.items) }
func (h *keyed[T]) Less(i, j int) bool { return keys.Compare(h.items[i].key, h.items[j].key) > 0 }
func (h *keyed[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *keyed[T]) Push(x any)         { h.items = append(h.items, x.(item[T])) }
func (h *keyed[T]) Pop() any {
	last := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return last
}
