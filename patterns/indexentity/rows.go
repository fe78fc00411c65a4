package indexentity

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// An index entity list of one value is one entity (the head, RowKey
// Name_value) holding the members, or, once that would pass
// Config.MaxEntityBytes, a head holding a directory of continuation
// entities (RowKey Name_value plus a number), each holding the members
// of one key range. A change of one member reads the head and, for a
// directory, the one continuation entity whose range holds the member and
// then the head again, unchanged (else the round starts again), and
// writes that entity on condition of its ETag; a split of an entity also
// rewrites the head, on condition of its ETag. Two writers of one entity
// cannot both succeed, and an entity's range only shrinks when it is
// split (rewritten, and the head with it): the head unchanged across the
// continuation's read gives the range the continuation had when it was
// read, and the continuation's ETag guards it from then until the write
// (TestSpillBesideSplits).

// errChanged reports an index entity changed since it was read: the round
// starts again from the reads. It matches entity.ErrPreconditionFailed,
// so entity.RetryPolicy.Retry runs the next round.
var errChanged = fmt.Errorf("indexentity: an index entity changed since it was read: %w", entity.ErrPreconditionFailed)

// list is what a writer read of one value's index entities: enough to
// add or remove one member.
type list struct {
	ix    string // the index's name, for errors
	epk   string
	value string
	head  *entity.DynamicEntity // nil: the value has no entity
	dir   []chunkRef            // the head's directory; nil when it holds the members
	next  int64                 // the head's NextChunk
	// The entity that holds (or would hold) the member: the head, or
	// continuation dir[pos].
	at      *entity.DynamicEntity
	pos     int
	members []string
}

// decodeRow reads the members or the directory of an index entity; ok is
// false (with the reason) for content this package did not write.
func decodeRow(e *entity.DynamicEntity, isHead bool) (members []string, dir []chunkRef, next int64, err error) {
	ms, hasMembers, ok := unpack(e.Properties, PropMembers)
	if !ok {
		return nil, nil, 0, errors.New("the " + PropMembers + " properties are not Strings numbered from 1")
	}
	ds, hasDir, ok := unpack(e.Properties, PropChunks)
	if !ok {
		return nil, nil, 0, errors.New("the " + PropChunks + " properties are not Strings numbered from 1")
	}
	if hasDir {
		if !isHead {
			return nil, nil, 0, errors.New("a continuation entity holds a directory")
		}
		if hasMembers {
			return nil, nil, 0, errors.New("the entity holds members and a directory")
		}
		if dir, err = decodeDirectory(ds); err != nil {
			return nil, nil, 0, err
		}
		n, ok := e.Properties[PropNextChunk].(int64)
		if !ok || n < 1 {
			return nil, nil, 0, errors.New("the directory has no " + PropNextChunk)
		}
		for _, c := range dir {
			if c.id >= n {
				return nil, nil, 0, errors.New("the directory names a chunk at or after " + PropNextChunk)
			}
		}
		return nil, dir, n, nil
	}
	if members, err = decodeMembers(ms); err != nil {
		return nil, nil, 0, err
	}
	if !sortedUnique(members) {
		return nil, nil, 0, errors.New("the members are not in key order, or repeat")
	}
	if n, ok := e.Properties[PropNextChunk].(int64); ok {
		next = n
	}
	return members, nil, next, nil
}

func (l *list) corrupt(e *entity.DynamicEntity, err error) error {
	return &CorruptError{Index: l.ix, PartitionKey: e.PartitionKey, RowKey: e.RowKey, Reason: err.Error()}
}

// readFor reads the index entities of value that hold (or would hold)
// member.
func (s *Set[T]) readFor(ctx context.Context, ix *index[T], epk, value, member string) (*list, error) {
	t := s.rows(ix)
	l := &list{ix: ix.Name, epk: epk, value: value}
	h, err := t.Get(ctx, epk, ix.headRK(value))
	if errors.Is(err, entity.ErrNotFound) {
		return l, nil
	}
	if err != nil {
		return nil, &StepError{Step: "read index entity", Index: ix.Name, PartitionKey: epk, RowKey: ix.headRK(value), Err: err}
	}
	l.head, l.at = &h, &h
	ms, dir, next, err := decodeRow(&h, true)
	if err != nil {
		return nil, l.corrupt(&h, err)
	}
	l.members, l.dir, l.next = ms, dir, next
	if dir == nil {
		return l, nil
	}
	l.pos = chunkFor(dir, member)
	rk := ix.chunkRK(value, dir[l.pos].id)
	c, err := t.Get(ctx, epk, rk)
	if errors.Is(err, entity.ErrNotFound) {
		// Emptied and dropped since the head was read, or lost: read
		// the head again to tell.
		again, err := t.Get(ctx, epk, ix.headRK(value))
		if err == nil && again.ETag == h.ETag {
			return nil, l.corrupt(&h, fmt.Errorf("the directory names chunk %d, which does not exist", dir[l.pos].id))
		}
		return nil, errChanged
	}
	if err != nil {
		return nil, &StepError{Step: "read index entity", Index: ix.Name, PartitionKey: epk, RowKey: rk, Err: err}
	}
	l.at = &c
	if l.members, _, _, err = decodeRow(&c, false); err != nil {
		return nil, l.corrupt(&c, err)
	}
	// The continuation may have been read after a split that the head
	// read before it does not show: the continuation rewritten with a
	// narrower range, the member's part moved to a new one. Its ETag
	// would then guard a write to the wrong entity. Read the head again:
	// unchanged, it names the continuation's range as it was when the
	// continuation was read, and a split after that changes the
	// continuation's ETag, which the write is conditional on.
	again, err := t.Get(ctx, epk, ix.headRK(value))
	if err != nil && !errors.Is(err, entity.ErrNotFound) {
		return nil, &StepError{Step: "read index entity", Index: ix.Name, PartitionKey: epk, RowKey: ix.headRK(value), Err: err}
	}
	if err != nil || again.ETag != h.ETag {
		return nil, errChanged
	}
	return l, nil
}

// row returns a new index entity with keys epk/rk that replaces base (nil
// for a new one): base's ETag, for the condition, and its write token
// chain, which lets entity prove the outcome of the write after a lost
// reply.
func row(epk, rk string, base *entity.DynamicEntity) *entity.DynamicEntity {
	e := &entity.DynamicEntity{PartitionKey: epk, RowKey: rk, Properties: map[string]any{}}
	if base != nil {
		e.ETag = base.ETag
		if c, ok := base.Properties[propWriteToken]; ok {
			e.Properties[propWriteToken] = c
		}
	}
	return e
}

func withMembers(e *entity.DynamicEntity, ms []string) *entity.DynamicEntity {
	pack(e.Properties, PropMembers, memberLines(ms))
	return e
}

func withDirectory(e *entity.DynamicEntity, dir []chunkRef, next int64) *entity.DynamicEntity {
	pack(e.Properties, PropChunks, encodeDirectory(dir))
	e.Properties[PropNextChunk] = next
	return e
}

// put adds to b the write of e: an insert for a new entity, else a
// replace on condition of the ETag it was read with.
func put(b *entity.Batch, e *entity.DynamicEntity) {
	if e.ETag == "" {
		b.Insert(e)
	} else {
		b.Update(e, entity.Replace)
	}
}

// change adds to b the operations that add member to (or remove it from)
// the list l read, and reports whether it added any. With touch, an add
// of a member the list holds already still rewrites its entity, so that
// the transaction is conditional on it (see Set's write).
func (s *Set[T]) change(ix *index[T], l *list, member string, add, touch bool, b *entity.Batch) (bool, error) {
	i, found := slices.BinarySearchFunc(l.members, member, keys.Compare)
	switch {
	case add && found && !touch, !add && !found:
		return false, nil
	case add && !found:
		l.members = slices.Insert(slices.Clone(l.members), i, member)
	case !add:
		l.members = slices.Delete(slices.Clone(l.members), i, i+1)
	}
	limit := s.cfg.MaxEntityBytes
	if l.head == nil { // a new value
		b.Insert(withMembers(row(l.epk, ix.headRK(l.value), nil), l.members))
		return true, nil
	}
	if l.dir == nil { // the head holds the members
		switch {
		case len(l.members) == 0:
			b.DeleteEntity(l.head)
		case s.fits(l.epk, l.head.RowKey, l.members, limit):
			put(b, withMembers(row(l.epk, l.head.RowKey, l.head), l.members))
		default:
			// Spill: the head becomes a directory of two continuations.
			next := max(l.next, 1)
			lo, hi := halves(l.members)
			dir := []chunkRef{{id: next, from: ""}, {id: next + 1, from: hi[0]}}
			put(b, withDirectory(row(l.epk, l.head.RowKey, l.head), dir, next+2))
			b.Upsert(withMembers(row(l.epk, ix.chunkRK(l.value, next), nil), lo), entity.Replace)
			b.Upsert(withMembers(row(l.epk, ix.chunkRK(l.value, next+1), nil), hi), entity.Replace)
		}
		return true, nil
	}
	switch {
	case len(l.members) == 0 && len(l.dir) == 1:
		b.DeleteEntity(l.at)
		b.DeleteEntity(l.head)
	case len(l.members) == 0:
		b.DeleteEntity(l.at)
		dir := slices.Delete(slices.Clone(l.dir), l.pos, l.pos+1)
		dir[0].from = ""
		put(b, withDirectory(row(l.epk, l.head.RowKey, l.head), dir, l.next))
	case s.fits(l.epk, l.at.RowKey, l.members, limit):
		put(b, withMembers(row(l.epk, l.at.RowKey, l.at), l.members))
	default:
		lo, hi := halves(l.members)
		dir := slices.Insert(slices.Clone(l.dir), l.pos+1, chunkRef{id: l.next, from: hi[0]})
		put(b, withMembers(row(l.epk, l.at.RowKey, l.at), lo))
		b.Upsert(withMembers(row(l.epk, ix.chunkRK(l.value, l.next), nil), hi), entity.Replace)
		put(b, withDirectory(row(l.epk, l.head.RowKey, l.head), dir, l.next+1))
	}
	return true, nil
}

// fits reports whether an index entity with keys pk/rk holding ms stays
// within limit bytes.
func (s *Set[T]) fits(pk, rk string, ms []string, limit int) bool {
	if len(ms) < 2 {
		return true
	}
	e := withMembers(&entity.DynamicEntity{Properties: map[string]any{}}, ms)
	// Room for the write token's chain, which the write adds.
	return rowSize(pk, rk, e.Properties)+tokenRoom <= limit
}

// tokenRoom is the most a write token adds to an entity (entity's
// TkWrite: 8 + 2·7 + 4 + 2·134 bytes, rounded up).
const tokenRoom = 300

// halves cuts a sorted list in two of about equal size.
func halves(ms []string) (lo, hi []string) {
	total := membersSize(ms)
	n := 0
	for i, m := range ms {
		n += 2 * (keys.UTF16Len(m) + 1)
		if n*2 >= total && i+1 < len(ms) {
			return ms[:i+1], ms[i+1:]
		}
	}
	return ms[:len(ms)-1], ms[len(ms)-1:]
}
