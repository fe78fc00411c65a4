package denormalize

import (
	"context"
	"errors"
	"sync"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/errline"
)

// fanout is the message that brings the OtherPartition copies of one
// source in line with it: the source's keys, and, per relation whose copy
// changed, where its targets were before and after the change (the
// source may be gone by the time the message runs).
type fanout struct {
	PK      string             `json:"pk"`
	RK      string             `json:"rk"`
	Targets map[string]Targets `json:"targets,omitempty"`
}

// check refuses a message whose keys no entity can have, before any
// request (such a message is poisoned after its deliveries run out).
func (m *fanout) check() error {
	if err := validKey(Key{m.PK, m.RK}); err != nil {
		return &StepError{Step: "read message", Key: Key{m.PK, m.RK}, Err: err}
	}
	for _, t := range m.Targets {
		for _, k := range t.Keys {
			if err := validKey(k); err != nil {
				return &StepError{Step: "read message", Key: k, Err: err}
			}
		}
		for _, r := range t.Ranges {
			if err := validKey(Key{PartitionKey: r.PartitionKey}); err != nil {
				return &StepError{Step: "read message", Key: Key{PartitionKey: r.PartitionKey}, Err: err}
			}
		}
	}
	return nil
}

// handle runs one fan-out message: it reads the source as it is now and
// writes its copy into every target that refers to it, then reads the
// source again and starts over if it changed meanwhile, so that a target
// never keeps a copy older than the source's last change once every
// message has run. Every step may run twice: a target that holds the copy
// already is not written.
func (c *Copies[T, S]) handle(ctx context.Context, m fanout) error {
	if err := m.check(); err != nil {
		return err
	}
	key := Key{m.PK, m.RK}
	var rels []*relation[T, S]
	for _, r := range c.remote {
		if _, ok := m.Targets[r.Name]; ok || len(m.Targets) == 0 {
			rels = append(rels, r)
		}
	}
	for range maxRounds {
		src, err := read[S](ctx, c.srcRaw, key)
		if err != nil {
			return &StepError{Step: "read source", Key: key, Err: err}
		}
		var all []Targets
		for _, r := range rels {
			all = append(all, m.Targets[r.Name])
			if src != nil {
				v, err := src.fresh()
				if err != nil {
					return &StepError{Step: "read source", Key: key, Err: err}
				}
				all = append(all, r.Targets(&v))
			}
		}
		if err := c.fanOut(ctx, key, src, rels, union(all...)); err != nil {
			return err
		}
		now, err := read[S](ctx, c.srcRaw, key)
		if err != nil {
			return &StepError{Step: "read source again", Key: key, Err: err}
		}
		if sameVersion(src, now) {
			return nil
		}
	}
	return &StepError{Step: "fan out", Key: key, Err: errline.Join(errors.New("denormalize: source kept changing"), entity.ErrContention)}
}

// fanOut writes src's copies of relations rels into the targets cands
// names, at most Config.Concurrency at once.
func (c *Copies[T, S]) fanOut(ctx context.Context, key Key, src *doc[S], rels []*relation[T, S], cands Targets) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		sem   = make(chan struct{}, c.cfg.Concurrency)
	)
	fail := func(err error) {
		once.Do(func() { first = err; cancel() })
	}
	spawn := func(tk Key, t *doc[T]) error {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := c.syncOne(ctx, key, src, rels, tk, t); err != nil {
				fail(err)
			}
		}()
		return nil
	}
	err := c.walkTargets(ctx, key, cands, spawn)
	wg.Wait()
	if first != nil {
		return first
	}
	return err
}

// walkTargets calls each for every target cands names, each once, the
// source itself aside: with the key only for a point read still to make,
// with the entity for one a range query read.
func (c *Copies[T, S]) walkTargets(ctx context.Context, source Key, cands Targets, each func(Key, *doc[T]) error) error {
	var mu sync.Mutex
	seen := map[Key]bool{source: true}
	first := func(k Key) bool {
		mu.Lock()
		defer mu.Unlock()
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	}
	for _, k := range cands.Keys {
		if first(k) {
			if err := each(k, nil); err != nil {
				return err
			}
		}
	}
	for _, rg := range cands.Ranges {
		err := queryRange(ctx, c.tgtRaw, rg, func(t *doc[T]) error {
			if !first(t.key) {
				return nil
			}
			return each(t.key, t)
		})
		if err != nil {
			return &StepError{Step: "read targets", Key: Key{rg.PartitionKey, rg.From}, Err: err}
		}
	}
	return nil
}

// syncOne writes src's copies into target tk (t, when already read) if it
// refers to src and does not hold them, conditional on the version read.
func (c *Copies[T, S]) syncOne(ctx context.Context, key Key, src *doc[S], rels []*relation[T, S], tk Key, t *doc[T]) error {
	var sb *entity.DynamicEntity
	if src != nil {
		sb = &src.bag
	}
	return c.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		cur := t
		t = nil // a later round reads again
		if cur == nil {
			var err error
			if cur, err = read[T](ctx, c.tgtRaw, tk); err != nil {
				return &StepError{Step: "read target", Key: tk, Err: err}
			}
			if cur == nil {
				return nil // gone: no copy to keep
			}
		}
		nb := clone(&cur.bag)
		changed := false
		for _, r := range rels {
			if k, ok := r.sourceOf(cur); ok && k == key {
				if want := r.project(sb); !r.holds(nb, want) {
					r.put(nb, want)
					changed = true
				}
			}
		}
		if !changed {
			return nil
		}
		if err := c.tgtBags.Update(ctx, nb, entity.Replace); err != nil {
			return submitError("write copy", tk, err)
		}
		return nil
	})
}
