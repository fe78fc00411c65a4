package denormalize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/errline"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// fanout is the message that brings the OtherPartition copies of one
// source in line with it: the source's keys, and, per relation whose copy
// changed, where its targets were before and after the change (the
// source may be gone by the time the message runs).
//
// A change whose targets do not fit one message is fanned out by several
// (split), each naming a part of them: Part (from 1) of Parts. A part
// writes only the targets it names; a single message also those that
// Relation.Targets names for the source as it is when the message runs.
type fanout struct {
	PK      string             `json:"pk"`
	RK      string             `json:"rk"`
	Targets map[string]Targets `json:"targets,omitempty"`
	Part    int                `json:"part,omitempty"`
	Parts   int                `json:"parts,omitempty"`
}

// Limits of a change's fan-out messages. A message carries at most
// maxFanoutPayload bytes of JSON: with eventual's envelope (kind, id and
// time, under 300 bytes) and base64, its text stays under 56 KB, within
// what a queue message holds besides eventual's poison reserve (62 KiB),
// so that no fan-out message ever needs a blob. A change commits at most
// maxFanoutMessages of them (outbox intents, with the change, in one
// transaction of at most 4 MiB).
const (
	maxFanoutPayload  = 40 << 10
	maxFanoutMessages = 48
)

// split cuts m into messages of at most limit bytes of JSON each: m
// itself when it fits, else parts that name, between them, every target
// m names, each relation in the order of its name.
func (m fanout) split(limit int) ([]fanout, error) {
	whole, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if len(whole) <= limit {
		return []fanout{m}, nil
	}
	names := make([]string, 0, len(m.Targets))
	for name := range m.Targets {
		names = append(names, name)
	}
	slices.Sort(names)
	empty := fanout{PK: m.PK, RK: m.RK, Targets: map[string]Targets{}, Part: 1 << 20, Parts: 1 << 20}
	head, err := json.Marshal(empty)
	if err != nil {
		return nil, err
	}
	var parts []fanout
	cur, size := fanout{}, 0
	open := func() {
		cur = fanout{PK: m.PK, RK: m.RK, Targets: map[string]Targets{}}
		size = len(head)
	}
	open()
	// add puts one key or range (its JSON, item) of relation name into
	// the current part, starting another when it does not fit.
	add := func(name string, item []byte, put func(*Targets)) error {
		for {
			n := len(item) + 1 // and a comma
			if _, ok := cur.Targets[name]; !ok {
				q, _ := json.Marshal(name)
				n += len(q) + len(`:{"keys":[],"ranges":[]},`)
			}
			if size+n <= limit {
				t := cur.Targets[name]
				put(&t)
				cur.Targets[name] = t
				size += n
				return nil
			}
			if len(cur.Targets) == 0 {
				return errline.Join(fmt.Errorf("denormalize: a target of relation %s takes %d bytes, more than a fan-out message holds", name, n), eventual.ErrTooLarge)
			}
			parts = append(parts, cur)
			open()
		}
	}
	for _, name := range names {
		t := m.Targets[name]
		if len(t.Keys) == 0 && len(t.Ranges) == 0 {
			if err := add(name, nil, func(*Targets) {}); err != nil {
				return nil, err
			}
		}
		for _, k := range t.Keys {
			item, err := json.Marshal(k)
			if err != nil {
				return nil, err
			}
			if err := add(name, item, func(t *Targets) { t.Keys = append(t.Keys, k) }); err != nil {
				return nil, err
			}
		}
		for _, r := range t.Ranges {
			item, err := json.Marshal(r)
			if err != nil {
				return nil, err
			}
			if err := add(name, item, func(t *Targets) { t.Ranges = append(t.Ranges, r) }); err != nil {
				return nil, err
			}
		}
	}
	if len(cur.Targets) > 0 {
		parts = append(parts, cur)
	}
	for i := range parts {
		parts[i].Part, parts[i].Parts = i+1, len(parts)
	}
	return parts, nil
}

// check refuses a message whose keys no entity can have, before any
// request (such a message is poisoned after its deliveries run out).
func (m *fanout) check() error {
	if err := validKey(Key{m.PK, m.RK}); err != nil {
		return &StepError{Step: "read message", Key: Key{m.PK, m.RK}, Err: err}
	}
	if m.Part < 0 || m.Parts < 0 || m.Part > m.Parts {
		return &StepError{Step: "read message", Key: Key{m.PK, m.RK}, Err: fmt.Errorf("denormalize: part %d of %d", m.Part, m.Parts)}
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
			if src != nil && m.Parts <= 1 {
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
// names, at most Config.Concurrency at once. A target that fails — it
// does not decode, or its write fails — fails alone: the others are
// written, and the error names the targets that failed (at most
// maxNamed of them), so that the message runs again for those.
func (c *Copies[T, S]) fanOut(ctx context.Context, key Key, src *doc[S], rels []*relation[T, S], cands Targets) error {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed []error
		more   int
		sem    = make(chan struct{}, c.cfg.Concurrency)
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if len(failed) < maxNamed {
			failed = append(failed, err)
		} else {
			more++
		}
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
	bad := func(tk Key, err error) error {
		fail(&StepError{Step: "read target", Key: tk, Err: err})
		return nil
	}
	err := c.walkTargets(ctx, key, cands, spawn, bad)
	wg.Wait()
	if err != nil {
		return err
	}
	if len(failed) == 0 {
		return nil
	}
	if more > 0 {
		failed = append(failed, fmt.Errorf("denormalize: and %d more targets failed", more))
	}
	return errline.Join(failed...)
}

// maxNamed is the most failed targets one fan-out error names.
const maxNamed = 10

// walkTargets calls each for every target cands names, each once, the
// source itself aside: with the key only for a point read still to make,
// with the entity for one a range query read; and bad for a target a
// range query read that does not decode.
func (c *Copies[T, S]) walkTargets(ctx context.Context, source Key, cands Targets, each func(Key, *doc[T]) error, bad func(Key, error) error) error {
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
		err := queryRange(ctx, c.tgtRaw, rg, c.intents, func(t *doc[T]) error {
			if !first(t.key) {
				return nil
			}
			return each(t.key, t)
		}, func(k Key, err error) error {
			if !first(k) {
				return nil
			}
			return bad(k, err)
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
