package large

import (
	"container/list"
	"context"
	"sync"
)

// hints remembers, for the entities a Table read or wrote last, the
// references they held, so that Get can start reading their blobs while it
// reads the entity: a Get of an entity read before costs the time of its
// blob download alone, not that of two requests one after the other.
// A hint is only a guess: Get uses what it fetched only when the entity,
// once read, still references that very blob (each name holds one value
// for ever), and the value is checked against the entity's SHA-256 as
// any other.
type hints struct {
	mu    sync.Mutex
	max   int
	order *list.List // of hintKey, most recent first
	byKey map[hintKey]*list.Element
}

type hintKey struct{ pk, rk string }

type hintEntry struct {
	key  hintKey
	refs []Ref
}

func newHints(max int) *hints {
	return &hints{max: max, order: list.New(), byKey: map[hintKey]*list.Element{}}
}

// get returns the references last seen for the keys, or nil.
func (h *hints) get(pk, rk string) []Ref {
	if h.max <= 0 {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := h.byKey[hintKey{pk, rk}]; ok {
		h.order.MoveToFront(e)
		return e.Value.(*hintEntry).refs
	}
	return nil
}

// put remembers refs for the keys; nil forgets them.
func (h *hints) put(pk, rk string, refs []Ref) {
	if h.max <= 0 {
		return
	}
	k := hintKey{pk, rk}
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := h.byKey[k]; ok {
		if refs == nil {
			h.order.Remove(e)
			delete(h.byKey, k)
			return
		}
		e.Value.(*hintEntry).refs = refs
		h.order.MoveToFront(e)
		return
	}
	if refs == nil {
		return
	}
	h.byKey[k] = h.order.PushFront(&hintEntry{key: k, refs: refs})
	if h.order.Len() > h.max {
		last := h.order.Back()
		h.order.Remove(last)
		delete(h.byKey, last.Value.(*hintEntry).key)
	}
}

// prefetch is the read of a blob started before the entity was read.
type prefetch struct {
	ref    Ref
	cancel context.CancelFunc
	done   chan struct{}
	data   []byte
	err    error
}

// result waits for the read and returns what it got.
func (p *prefetch) result() ([]byte, error) {
	<-p.done
	p.cancel()
	return p.data, p.err
}
