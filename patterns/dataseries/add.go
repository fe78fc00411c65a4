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
)

// Add adds delta (which may be negative) to one slot of the series (pk,
// rk) and returns the slot's new value. See AddMany.
func (s *Series) Add(ctx context.Context, pk, rk string, slot int, delta int64) (int64, error) {
	vals, err := s.add(ctx, "Add", pk, rk, map[int]int64{slot: delta})
	return vals[slot], err
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
// (entity.ErrOutcomeUnknown). Entities of the series changed before the
// failing one keep their increments.
func (s *Series) AddMany(ctx context.Context, pk, rk string, deltas map[int]int64) error {
	_, err := s.add(ctx, "AddMany", pk, rk, deltas)
	return err
}

func (s *Series) add(ctx context.Context, op, pk, rk string, deltas map[int]int64) (map[int]int64, error) {
	if err := s.checkKeys(op, pk, rk); err != nil {
		return nil, err
	}
	byEntity := map[string]map[int]int64{}
	for slot, d := range deltas {
		if slot < 0 || slot >= s.cfg.Slots {
			return nil, &ArgError{Op: op, Arg: "slot", Value: strconv.Itoa(slot), Reason: fmt.Sprintf("want 0 to %d", s.cfg.Slots-1)}
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
	vals := map[int]int64{}
	for _, erk := range slices.Sorted(maps.Keys(byEntity)) { // chunk keys sort in slot order
		if err := s.addTo(ctx, pk, erk, byEntity[erk], vals); err != nil {
			return vals, &Error{Op: op, PartitionKey: pk, RowKey: erk, Err: err}
		}
	}
	return vals, nil
}

// addTo adds deltas to the entity (pk, erk) and stores the new values in
// vals.
func (s *Series) addTo(ctx context.Context, pk, erk string, deltas map[int]int64, vals map[int]int64) error {
	change := func(e *entity.DynamicEntity) error {
		// Send only the changed slots: a merge leaves the others as they are.
		changed := make(map[string]any, len(deltas))
		for slot, d := range deltas {
			name := s.Property(slot)
			cur, err := counter(e, name)
			if err != nil {
				return err
			}
			if d > 0 && cur > math.MaxInt64-d || d < 0 && cur < math.MinInt64-d {
				return fmt.Errorf("%w: slot %d is %d, adding %d", ErrOverflow, slot, cur, d)
			}
			changed[name] = cur + d
		}
		e.Properties = changed
		return nil
	}
	for created := false; ; created = true {
		e, err := s.tbl.Modify(ctx, pk, erk, change, entity.ModifyOptions{Retry: s.cfg.Retry})
		if err == nil {
			for slot := range deltas {
				vals[slot] = e.Properties[s.Property(slot)].(int64)
			}
			return nil
		}
		if !errors.Is(err, entity.ErrNotFound) || created {
			return err
		}
		// The first increment of this entity: create it empty. An
		// upsert-merge of no properties changes nothing when a concurrent
		// writer created it first, and repeating it (a retry after a lost
		// reply) is harmless, unlike an insert's 409.
		if err := s.tbl.Upsert(ctx, &entity.DynamicEntity{PartitionKey: pk, RowKey: erk}, entity.Merge); err != nil {
			return err
		}
	}
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
