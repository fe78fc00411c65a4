package logtail

import (
	"context"
	"strconv"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/entityfields"
	"github.com/tablekit/tablekit/keys"
)

// Append adds entries to the log of partition, in argument order: each gets
// the instant of Config.Now and a RowKey that sorts before every earlier
// entry of this Log, so the last argument is the newest. Append writes the
// PartitionKey and RowKey into the entries (any keys they had are replaced),
// and the new ETag into those written, when T has an ETag field.
//
// One entry is one upsert; several are written by entity.Table.BulkWrite in
// transactions of up to 100 (each atomic, the call as a whole not), oldest
// first. Because a RowKey is unique to this Log, an upsert never replaces
// another entry, and a write that azcore retries after its reply was lost
// lands on the same entry again: nothing is duplicated. With PlainKeys the
// writes are inserts, so that two writers that collide on a tick are told
// (entity.ErrAlreadyExists).
//
// Every entry is validated, and every instant Config.Now gives checked
// to lie in .NET's DateTime range (years 1 to 9999, which the keys can
// hold), before anything is sent: an *ArgError names the first that is
// not, and nothing is written. An entry the service then refuses fails
// alone: of several entries, the others are still written, and the error
// (an *Error) holds an *AppendError listing each entry not written with
// its error.
func (l *Log[T]) Append(ctx context.Context, partition string, entries ...*T) error {
	if err := l.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := checkPartition("Append", partition); err != nil {
		return err
	}
	for i, e := range entries {
		if e == nil {
			return &ArgError{Op: "Append", Arg: "entry", Value: strconv.Itoa(i), Reason: "nil"}
		}
	}
	for i, e := range entries {
		now := l.cfg.Now()
		if _, err := keys.InvertedTicksChecked(now); err != nil {
			return &ArgError{Op: "Append", Arg: "time of entry " + strconv.Itoa(i), Value: now.Format(time.RFC3339Nano),
				Reason: "outside .NET DateTime's range, years 1 to 9999 (Config.Now)", Err: err}
		}
		rk := l.nextKey(now)
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
	outcomes, err := l.tbl.BulkWrite(ctx, values, entity.BulkOptions{Mode: mode, Concurrency: 1})
	if len(outcomes) != len(entries) {
		return wrap("Append", partition, err)
	}
	ae := &AppendError{Total: len(entries)}
	for i, o := range outcomes {
		switch {
		case o.Err != nil:
			ae.NotWritten = append(ae.NotWritten, EntryError{Index: i, RowKey: o.RowKey, Err: o.Err})
		case o.ETag != "":
			_ = entityfields.SetWritten(entries[i], o.ETag)
		}
	}
	if len(ae.NotWritten) == 0 {
		return wrap("Append", partition, err)
	}
	ae.bulk = err
	return wrap("Append", partition, ae)
}
