package dataseries

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/keys"
)

// Add adds delta (which may be negative) to one slot of the series (pk,
// rk) and returns the value its own change produced: the slot's value
// right after this increment, even when other writers' increments landed
// since (a counter used for sequence numbers never hands one out twice).
// When that value cannot be known the error matches
// entity.ErrOutcomeUnknown. A delta of 0 changes nothing and returns the
// slot's current value (one point query). See AddMany.
func (s *Series) Add(ctx context.Context, pk, rk string, slot int, delta int64) (int64, error) {
	if err := s.ok(); err != nil {
		return 0, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return 0, err
	}
	if delta == 0 {
		return s.value(ctx, pk, rk, slot)
	}
	vals, err := s.add(ctx, "Add", pk, rk, map[int]int64{slot: delta})
	if err != nil {
		return 0, err
	}
	return vals[slot], nil
}

// value reads one slot.
func (s *Series) value(ctx context.Context, pk, rk string, slot int) (int64, error) {
	if err := s.checkKeys("Add", pk, rk); err != nil {
		return 0, err
	}
	if err := s.checkSlot("Add", slot); err != nil {
		return 0, err
	}
	erk := s.entityKey(rk, slot)
	e, err := s.tbl.Get(ctx, pk, erk)
	if errors.Is(err, entity.ErrNotFound) {
		return 0, nil
	}
	if err == nil {
		var v int64
		if v, err = counter(&e, s.Property(slot)); err == nil {
			return v, nil
		}
	}
	return 0, &Error{Op: "Add", PartitionKey: pk, RowKey: erk, Err: err}
}

// checkSlot refuses a slot outside the series.
func (s *Series) checkSlot(op string, slot int) error {
	if slot < 0 || slot >= s.cfg.Slots {
		return &ArgError{Op: op, Arg: "slot", Value: strconv.Itoa(slot), Reason: fmt.Sprintf("want 0 to %d", s.cfg.Slots-1)}
	}
	return nil
}

// AddMany adds deltas (slot → delta) to the series (pk, rk), creating it
// when it does not exist.
//
// Each entity of the series that a slot falls in is changed by one
// ETag-guarded merge (entity.Table.Modify): read it, add, write it back on
// condition that nobody wrote it in between, and start again from a fresh
// read when somebody did, within Config.Retry. The slots of one entity —
// every slot, for a series of up to Config.SlotsPerEntity slots — change
// together or not at all; a series of several entities is changed entity by
// entity, in slot order. The merge sends only the changed slots, so a
// concurrent writer of the application's own properties is never undone.
//
// A failure is an *Error naming the entity: entity.ErrContention when every
// round lost to other writers, ErrOverflow, ErrStoredType. Nothing of that
// entity was changed, unless the error says the outcome is unknown
// (entity.ErrOutcomeUnknown). A slot stored with another type, or one the
// delta would overflow, is found before anything is written: a series of
// several entities is read first (one range query), so such a slot fails
// the whole call. Entities of the series changed before a failing one
// (contention, a lost reply that could not be settled, a slot changed by
// another program after that check) keep their increments. A delta of 0
// is no change.
func (s *Series) AddMany(ctx context.Context, pk, rk string, deltas map[int]int64) error {
	if err := s.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	_, err := s.add(ctx, "AddMany", pk, rk, deltas)
	return err
}

func (s *Series) add(ctx context.Context, op, pk, rk string, deltas map[int]int64) (map[int]int64, error) {
	if err := s.checkKeys(op, pk, rk); err != nil {
		return nil, err
	}
	byEntity := map[string]map[int]int64{}
	for slot, d := range deltas {
		if err := s.checkSlot(op, slot); err != nil {
			return nil, err
		}
		if d == 0 {
			continue
		}
		erk := s.entityKey(rk, slot)
		if byEntity[erk] == nil {
			byEntity[erk] = map[int]int64{}
		}
		byEntity[erk][slot] = d
	}
	order := slices.Sorted(maps.Keys(byEntity)) // chunk keys sort in slot order
	if len(order) > 1 {
		// One slot that cannot take its delta must not leave the
		// entities before it changed: check them all first.
		if err := s.precheck(ctx, op, pk, rk, byEntity); err != nil {
			return nil, err
		}
	}
	vals := map[int]int64{}
	for _, erk := range order {
		if err := s.addTo(ctx, pk, erk, byEntity[erk], vals); err != nil {
			return vals, &Error{Op: op, PartitionKey: pk, RowKey: erk, Err: err}
		}
	}
	return vals, nil
}

// precheck reads the entities of a series (one range query) and checks
// that each slot of deltas can take its delta: ErrStoredType, ErrOverflow
// otherwise, as an *Error naming the entity, before anything is written.
func (s *Series) precheck(ctx context.Context, op, pk, rk string, byEntity map[string]map[int]int64) error {
	from, to := keys.CompoundPrefix(rk)
	q := entity.Query{Filter: filter.PK(pk).And(filter.RowKeyRange(from, to))}
	for e, err := range s.tbl.Query(ctx, q) {
		if err != nil {
			return &Error{Op: op, PartitionKey: pk, RowKey: rk, Err: err}
		}
		deltas, ok := byEntity[e.RowKey]
		if !ok {
			continue
		}
		for _, slot := range slices.Sorted(maps.Keys(deltas)) {
			if _, err := s.apply(&e, slot, deltas[slot]); err != nil {
				return &Error{Op: op, PartitionKey: pk, RowKey: e.RowKey, Err: err}
			}
		}
	}
	return nil
}

// apply returns slot's value in e plus d, or why it cannot be.
func (s *Series) apply(e *entity.DynamicEntity, slot int, d int64) (int64, error) {
	cur, err := counter(e, s.Property(slot))
	if err != nil {
		return 0, err
	}
	if d > 0 && cur > math.MaxInt64-d || d < 0 && cur < math.MinInt64-d {
		return 0, fmt.Errorf("%w: slot %d is %d, adding %d", ErrOverflow, slot, cur, d)
	}
	return cur + d, nil
}

// addTo adds deltas to the entity (pk, erk) and stores in vals the values
// this change produced.
//
// Modify calls change once per round, before that round's write, and
// reports success only for the write of its last round: the one that
// went out after the last call of change, found applied either by its
// answer or, after a lost reply, by its write token. So the values the
// last call computed are the ones the applied write stored — whatever
// other writers' increments the entity holds by the time this one is
// settled, which Modify's returned entity would show instead.
func (s *Series) addTo(ctx context.Context, pk, erk string, deltas map[int]int64, vals map[int]int64) error {
	var wrote map[int]int64 // by the last call of change
	change := func(e *entity.DynamicEntity) error {
		// Send only the changed slots: a merge leaves the others as they
		// are. An encrypted table's entity is written whole (a replace,
		// under the same ETag: nothing another writer wrote is undone).
		wrote = make(map[int]int64, len(deltas))
		changed := make(map[string]any, len(deltas))
		for slot, d := range deltas {
			v, err := s.apply(e, slot, d)
			if err != nil {
				return err
			}
			wrote[slot] = v
			changed[s.Property(slot)] = v
		}
		if s.mode == entity.Replace {
			maps.Copy(e.Properties, changed)
		} else {
			e.Properties = changed
		}
		return nil
	}
	// Create: the first increment of an entity inserts it, and one that
	// another program deleted meanwhile is created again, within
	// Config.Retry's rounds (then entity.ErrContention).
	_, err := s.tbl.Modify(ctx, pk, erk, change, entity.ModifyOptions{Mode: s.mode, Retry: s.cfg.Retry, Create: true})
	if err != nil {
		return err
	}
	if len(wrote) != len(deltas) {
		// Not a write of this call's change: never report a value it did
		// not produce.
		return &entity.OutcomeError{Op: "Modify", PartitionKey: pk, RowKey: erk}
	}
	maps.Copy(vals, wrote)
	return nil
}

// counter reads the counter name of e: 0 when absent. Int32 is accepted
// (another program may have written a small counter without the Int64
// annotation); any other type is ErrStoredType.
func counter(e *entity.DynamicEntity, name string) (int64, error) {
	switch v := e.Properties[name].(type) {
	case nil:
		return 0, nil
	case int64:
		return v, nil
	case int32:
		return int64(v), nil
	default:
		return 0, fmt.Errorf("%w: %s holds a %T", ErrStoredType, name, v)
	}
}
