package logtail

import (
	"context"
	"strconv"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
)

// Append adds entries to the log of partition, in argument order: each gets
// the instant of Config.Clock and a RowKey that sorts before every earlier
// entry of this Log, so the last argument is the newest. Append writes the
// PartitionKey and RowKey into the entries (any keys they had are replaced).
//
// One entry is one upsert; several are written by entity.Table.BulkWrite in
// transactions of up to 100 (each atomic, the call as a whole not). Because
// a RowKey is unique to this Log, an upsert never replaces another entry,
// and a write that azcore retries after its reply was lost lands on the
// same entry again: nothing is duplicated. With PlainKeys the writes are
// inserts, so that two writers that collide on a tick are told
// (entity.ErrAlreadyExists).
//
// Every entry is validated before anything is sent.
func (l *Log[T]) Append(ctx context.Context, partition string, entries ...*T) error {
	if err := checkPartition("Append", partition); err != nil {
		return err
	}
	for i, e := range entries {
		if e == nil {
			return &ArgError{Op: "Append", Arg: "entry", Value: strconv.Itoa(i), Reason: "nil"}
		}
	}
	for i, e := range entries {
		rk := l.nextKey(l.cfg.Clock())
		if err := entityfields.SetSystem(e, entityfields.System{PartitionKey: partition, RowKey: rk}); err != nil {
			return &ArgError{Op: "Append", Arg: "entry", Value: strconv.Itoa(i), Reason: "its keys cannot be set", Err: err}
		}
		if err := entity.Validate(e); err != nil {
			return &ArgError{Op: "Append", Arg: "entry", Value: strconv.Itoa(i), Reason: "invalid", Err: err}
		}
	}
	switch len(entries) {
	case 0:
		return nil
	case 1:
		if l.cfg.PlainKeys {
			return wrap("Append", partition, l.tbl.Insert(ctx, entries[0]))
		}
		return wrap("Append", partition, l.tbl.Upsert(ctx, entries[0], entity.Replace))
	}
	values := make([]T, len(entries))
	for i, e := range entries {
		values[i] = *e
	}
	mode := entity.OpUpsertReplace
	if l.cfg.PlainKeys {
		mode = entity.OpInsert
	}
	_, err := l.tbl.BulkWrite(ctx, values, entity.BulkOptions{Mode: mode, Concurrency: 1})
	return wrap("Append", partition, err)
}
