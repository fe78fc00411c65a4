package bucket

import (
	"context"
	"errors"
	"strconv"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/entityfields"
)

// Write stores entries in the spread partition name: each entry's
// PartitionKey is set to Partition(name, its RowKey), which the caller
// chooses (time-ordered keys, such as keys.InvertedTicks, are what this
// pattern is for). One entry is one request; several are written by
// entity.Table.BulkWrite, which groups them by bucket and writes the
// buckets in parallel, in transactions of up to 100 — each transaction
// atomic, the call as a whole not. Spreading costs batching: n entries in a
// call make up to min(n, Buckets) transactions instead of n/100.
//
// Every entry is validated before anything is sent. Each entry written
// gets its new ETag, the one the table holds for it — also when the reply
// to its transaction was lost and the transaction was found applied by
// reading back (entity.Table.BulkWrite reads the ETags back); it is empty
// only when another writer changed the entity since, so that the version
// stored is not this Write's: read the entity again before a conditional
// write (TestWriteBesideAnotherWriter). A failure is an *Error whose
// NotWritten names each entry that was not written, with its own error,
// wrapping the *entity.BulkError (several entries) or the service error
// (one entry).
func (s *Spread[T]) Write(ctx context.Context, name string, entries ...*T) error {
	if err := s.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := s.checkName("Write", name); err != nil {
		return err
	}
	for i, e := range entries {
		if e == nil {
			return &ArgError{Op: "Write", Arg: "entry", Value: strconv.Itoa(i), Reason: "nil"}
		}
		sys, err := entity.SystemOf(e)
		if err == nil {
			err = entityfields.SetSystem(e, entityfields.System{PartitionKey: s.Partition(name, sys.RowKey), RowKey: sys.RowKey, ETag: sys.ETag, Timestamp: sys.Timestamp})
		}
		if err == nil {
			err = entity.Validate(e)
		}
		if err != nil {
			return &ArgError{Op: "Write", Arg: "entry", Value: strconv.Itoa(i), Reason: "invalid", Err: err}
		}
	}
	switch len(entries) {
	case 0:
		return nil
	case 1:
		var err error
		switch s.cfg.Mode {
		case entity.OpInsert:
			err = s.tbl.Insert(ctx, entries[0])
		case entity.OpUpsertMerge:
			err = s.tbl.Upsert(ctx, entries[0], entity.Merge)
		default:
			err = s.tbl.Upsert(ctx, entries[0], entity.Replace)
		}
		if err != nil {
			sys, _ := entity.SystemOf(entries[0])
			return &Error{Op: "Write", Name: name, Err: err, NotWritten: []entity.Outcome{{PartitionKey: sys.PartitionKey, RowKey: sys.RowKey, Err: err}}}
		}
		return nil
	}
	values := make([]T, len(entries))
	for i, e := range entries {
		values[i] = *e
	}
	outs, err := s.tbl.BulkWrite(ctx, values, entity.BulkOptions{Mode: s.cfg.Mode, Concurrency: s.cfg.Concurrency})
	var notWritten []entity.Outcome
	for i, o := range outs {
		if o.Err != nil {
			notWritten = append(notWritten, o)
			continue
		}
		// The written entity's ETag — or none, when another writer
		// changed it after this write: never the ETag the entry came
		// with, which names an older version.
		if sys, serr := entity.SystemOf(entries[i]); serr == nil {
			sys.ETag = o.ETag
			_ = entityfields.SetSystem(entries[i], entityfields.System(sys))
		}
	}
	if err != nil {
		var ae *ArgError
		if errors.As(err, &ae) {
			return err
		}
		return &Error{Op: "Write", Name: name, Err: err, NotWritten: notWritten}
	}
	return nil
}
