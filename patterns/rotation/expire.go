package rotation

import (
	"context"
	"errors"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Expire deletes every period that ends at or before before: one table
// deletion per period, whatever the number of entities in it (design guide
// §6.8), instead of one delete per entity or per 100-entity transaction. It
// returns the periods it deleted.
//
// Steps:
//  1. Read the rotation's catalog entries older than the new mark (or the
//     stored mark, when it is later), and its meta entry, in one query; a
//     second one when the stored mark turns out later than this Rotation
//     knew.
//  2. Move the expiry mark to the start of the period that holds before
//     (a merge conditional on the meta entry's ETag; from a fresh read on a
//     conflict). From here on no writer claims or creates those periods and
//     no reader queries them.
//  3. Delete each expired period's table; a table already gone or being
//     deleted counts as deleted.
//  4. Delete their catalog entries, in one transaction per 100.
//
// A crash after step 2 leaves expired periods with tables: they are invisible
// to readers and writers, and the next Expire call, with any time, by any
// Rotation (a fresh one learns the stored mark from the catalog), deletes
// them (TestExpireCrashRecoveredByFreshRotation). Every step may be
// repeated.
func (r *Rotation[T]) Expire(ctx context.Context, before time.Time) ([]PeriodTable, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if err := r.ok(); err != nil {
		return nil, err
	}
	if err := r.checkTime("before", before); err != nil {
		return nil, err
	}
	mark := r.PeriodOf(before)
	var rows []catalogRow
	err := r.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		// The entries older than the stored mark too: a crashed Expire
		// may have left some.
		r.mu.Lock()
		upTo := mark
		if r.expiredBefore.After(mark) {
			upTo = r.expiredBefore
		}
		r.mu.Unlock()
		snap, err := r.readCatalog(ctx, filter.Lt(filter.RowKeyProperty, r.label(upTo)))
		if err != nil {
			return err
		}
		if stored := snap.expiredBefore(); stored.After(upTo) {
			// The stored mark is past what this Rotation knew (a fresh
			// one, or another process's Expire): the entries an Expire
			// that crashed after moving it left are older than it.
			if snap, err = r.readCatalog(ctx, filter.Lt(filter.RowKeyProperty, r.label(stored))); err != nil {
				return err
			}
		}
		rows = snap.rows
		if !snap.expiredBefore().Before(mark) {
			return nil
		}
		m := catalogRow{PartitionKey: r.cfg.Name, RowKey: metaKey, PeriodSeconds: int64(r.cfg.Period / time.Second), ExpiredBefore: &mark}
		if snap.meta == nil {
			err = r.catalog.Insert(ctx, &m)
		} else {
			m.ETag = snap.meta.ETag
			err = r.catalog.Update(ctx, &m, entity.Merge)
		}
		switch {
		case err == nil:
			r.observe(mark)
			return nil
		case errors.Is(err, entity.ErrAlreadyExists), errors.Is(err, entity.ErrPreconditionFailed),
			errors.Is(err, entity.ErrOutcomeUnknown):
			// Another writer moved the catalog, or a lost reply left our own
			// write unsettled: setting the mark is idempotent, so read again
			// and decide from what is stored.
			return errCatalogChanged
		}
		return &PeriodError{Op: "expire", Start: mark, Err: err}
	})
	if err != nil {
		return nil, err
	}

	var done []PeriodTable
	b := r.catalog.NewBatch()
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		_, err := r.catalog.Submit(ctx, b)
		if errors.Is(err, entity.ErrNotFound) || errors.Is(err, entity.ErrOutcomeUnknown) {
			// Another Expire removed some of them, or a lost reply left the
			// transaction unsettled: remove the rest one by one, idempotently.
			for _, p := range done[len(done)-b.Len():] {
				if _, err := r.catalog.DeleteIfExists(ctx, r.cfg.Name, r.label(p.Start)); err != nil {
					return &PeriodError{Op: "expire", Start: p.Start, Table: p.Table, Err: err}
				}
			}
			err = nil
		}
		b = r.catalog.NewBatch()
		return err
	}
	for _, c := range rows {
		p := c.period()
		tbl, err := r.table(c.Table)
		if err != nil {
			return done, err
		}
		if err := tbl.DeleteTable(ctx); err != nil && !tableGone(err) && !errors.Is(err, entity.ErrNotFound) {
			return done, &PeriodError{Op: "expire", Start: p.Start, Table: p.Table, Err: err}
		}
		done = append(done, p)
		b.Delete(c.PartitionKey, c.RowKey, entity.AnyETag)
		if b.Len() == entity.MaxBatchOperations {
			if err := flush(); err != nil {
				return done, err
			}
		}
	}
	if err := flush(); err != nil {
		return done, &PeriodError{Op: "expire", Start: mark, Err: err}
	}
	return done, nil
}
