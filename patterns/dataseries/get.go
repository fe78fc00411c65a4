package dataseries

import (
	"context"
	"errors"
	"strconv"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/keys"
)

// Get returns the counters of the series (pk, rk), Slots of them; slots
// never incremented, and every slot of a series never written, are 0.
//
// A series of one entity is read with one point query, the guide's reason
// for the pattern: a day of 24 hourly counters is one request, not a range
// over 24 entities. A longer series is one range query over its entities,
// which lie next to each other in the partition.
func (s *Series) Get(ctx context.Context, pk, rk string) ([]int64, error) {
	if err := s.ok(); err != nil {
		return nil, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if err := s.checkKeys("Get", pk, rk); err != nil {
		return nil, err
	}
	out := make([]int64, s.cfg.Slots)
	if s.chunk == 0 {
		e, err := s.tbl.Get(ctx, pk, rk)
		if errors.Is(err, entity.ErrNotFound) {
			return out, nil
		}
		if err != nil {
			return nil, &Error{Op: "Get", PartitionKey: pk, RowKey: rk, Err: err}
		}
		return out, s.fill(out, &e, 0, s.cfg.Slots)
	}
	from, to := keys.CompoundPrefix(rk)
	q := entity.Query{Filter: filter.PK(pk).And(filter.RowKeyRange(from, to))}
	for e, err := range s.tbl.Query(ctx, q) {
		if err != nil {
			return nil, &Error{Op: "Get", PartitionKey: pk, RowKey: rk, Err: err}
		}
		parts, err := keys.SplitCompound(e.RowKey)
		if err != nil || len(parts) != 2 {
			continue // not an entity of this layout
		}
		c, ok := s.chunkIndex(parts[1])
		if !ok {
			continue
		}
		lo := c * s.cfg.SlotsPerEntity
		if err := s.fill(out, &e, lo, min(lo+s.cfg.SlotsPerEntity, s.cfg.Slots)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fill copies the counters of slots lo to hi-1 from e into out.
func (s *Series) fill(out []int64, e *entity.DynamicEntity, lo, hi int) error {
	for slot := lo; slot < hi; slot++ {
		v, err := counter(e, s.Property(slot))
		if err != nil {
			return &Error{Op: "Get", PartitionKey: e.PartitionKey, RowKey: e.RowKey, Err: err}
		}
		out[slot] = v
	}
	return nil
}

// chunkIndex parses a chunk number written by entityKey.
func (s *Series) chunkIndex(part string) (int, bool) {
	n, err := strconv.Atoi(part)
	return n, err == nil && n >= 0 && n < s.chunks() && keys.Pad(int64(n), s.chunk) == part
}
