package rotation

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Table returns the table of the period that holds t, claiming the period
// in the catalog and creating its table (and the next Config.Ahead ones)
// when it is new: for operations this package does not wrap (Get, Update,
// Submit, Delete). A period that has expired is ErrExpired.
func (r *Rotation[T]) Table(ctx context.Context, t time.Time) (*entity.Table[T], error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if err := r.ok(); err != nil {
		return nil, err
	}
	if err := r.checkTime("time", t); err != nil {
		return nil, err
	}
	return r.tableFor(ctx, r.PeriodOf(t), false)
}

// Prepare creates the tables of the period that holds t and of the next
// Config.Ahead periods if they do not exist yet. New tables start cold on
// Azure Storage: call it ahead of time (an hour before midnight for daily
// tables) so the first writes of a period do not wait.
func (r *Rotation[T]) Prepare(ctx context.Context, t time.Time) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := r.ok(); err != nil {
		return err
	}
	if err := r.checkTime("time", t); err != nil {
		return err
	}
	_, err := r.load(ctx, r.PeriodOf(t), true)
	return err
}

// Insert adds e to the table of its period; an entity with the same keys in
// that period is entity.ErrAlreadyExists.
func (r *Rotation[T]) Insert(ctx context.Context, e *T) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return r.write(ctx, e, func(ctx context.Context, tbl *entity.Table[T]) error { return tbl.Insert(ctx, e) })
}

// Upsert inserts e into the table of its period or merges or replaces the
// entity with its keys there.
//
// mode is entity.Merge or entity.Replace; any other is a *ConfigError
// before any request.
func (r *Rotation[T]) Upsert(ctx context.Context, e *T, mode entity.UpdateMode) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if mode != entity.Merge && mode != entity.Replace {
		return &ConfigError{Field: "mode", Reason: "UpdateMode(" + strconv.Itoa(int(mode)) + "): want entity.Merge or entity.Replace"}
	}
	return r.write(ctx, e, func(ctx context.Context, tbl *entity.Table[T]) error { return tbl.Upsert(ctx, e, mode) })
}

// BulkWrite writes entities of any periods: it groups them by period and
// writes each group with entity.Table.BulkWrite into its period's table.
// It returns one Outcome per entity in input order; entities of an expired
// period fail with ErrExpired.
//
// opts.Mode is 0 (upsert-replace), OpInsert, OpUpsertMerge or
// OpUpsertReplace; any other is a *ConfigError before any request. One
// entity that cannot be written (its time out of range, its period
// expired, invalid for the service) fails alone, in its Outcome; the
// others are written (TestBulkWriteBadItems).
func (r *Rotation[T]) BulkWrite(ctx context.Context, entities []T, opts entity.BulkOptions) ([]entity.Outcome, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if err := r.ok(); err != nil {
		return nil, err
	}
	switch opts.Mode {
	case 0, entity.OpInsert, entity.OpUpsertMerge, entity.OpUpsertReplace:
	default:
		return nil, &ConfigError{Field: "BulkOptions.Mode", Reason: opts.Mode.String() + ": want 0, OpInsert, OpUpsertMerge or OpUpsertReplace"}
	}
	outcomes := make([]entity.Outcome, len(entities))
	groups := map[time.Time][]int{}
	var order []time.Time
	for i := range entities {
		t, err := r.timeOf(&entities[i])
		if err != nil {
			outcomes[i] = outcomeOf(&entities[i], err)
			continue
		}
		p := r.PeriodOf(t)
		if _, ok := groups[p]; !ok {
			order = append(order, p)
		}
		groups[p] = append(groups[p], i)
	}
	for _, p := range order {
		idx := groups[p]
		for attempt := 0; len(idx) > 0; attempt++ {
			tbl, err := r.tableFor(ctx, p, attempt > 0)
			if err != nil {
				for _, i := range idx {
					outcomes[i] = outcomeOf(&entities[i], err)
				}
				break
			}
			group := make([]T, len(idx))
			for j, i := range idx {
				group[j] = entities[i]
			}
			out, _ := tbl.BulkWrite(ctx, group, opts)
			var again []int
			for j, i := range idx {
				o := out[j]
				if tableGone(o.Err) && attempt == 0 {
					// The table was deleted or never created: look again.
					again = append(again, i)
					continue
				}
				if tableGone(o.Err) {
					o.Err = r.goneErr(ctx, p, tbl.Name(), o.Err)
				}
				outcomes[i] = o
			}
			idx = again
		}
	}
	return outcomes, bulkErr(outcomes)
}

func outcomeOf[T any](e *T, err error) entity.Outcome {
	s, _ := entity.SystemOf(e)
	return entity.Outcome{PartitionKey: s.PartitionKey, RowKey: s.RowKey, Err: err}
}

func bulkErr(outcomes []entity.Outcome) error {
	failed, first := 0, error(nil)
	for _, o := range outcomes {
		if o.Err != nil {
			if failed == 0 {
				first = o.Err
			}
			failed++
		}
	}
	if failed == 0 {
		return nil
	}
	return &entity.BulkError{Failed: failed, Total: len(outcomes), First: first}
}

// write runs op on the table of e's period. When the table is gone —
// deleted by Expire, or never created by a writer that crashed after
// claiming the period — it looks at the catalog again: an expired period is
// ErrExpired, a period whose table is missing gets it created, and op runs
// once more.
func (r *Rotation[T]) write(ctx context.Context, e *T, op func(context.Context, *entity.Table[T]) error) error {
	if err := r.ok(); err != nil {
		return err
	}
	t, err := r.timeOf(e)
	if err != nil {
		return err
	}
	p := r.PeriodOf(t)
	tbl, err := r.tableFor(ctx, p, false)
	if err != nil {
		return err
	}
	if err = op(ctx, tbl); !tableGone(err) {
		return err
	}
	if tbl, err = r.tableFor(ctx, p, true); err != nil {
		return err
	}
	if err = op(ctx, tbl); tableGone(err) {
		return r.goneErr(ctx, p, tbl.Name(), err)
	}
	return err
}

// goneErr explains a table that vanished under a write: ErrExpired when
// the period has expired since, else the error itself.
func (r *Rotation[T]) goneErr(ctx context.Context, p time.Time, table string, err error) error {
	if snap, rerr := r.readCatalog(ctx, r.between(p, p)); rerr == nil && p.Before(snap.expiredBefore()) {
		err = ErrExpired
	}
	return &PeriodError{Op: "write", Start: p, Table: table, Err: err}
}

// tableFor returns the table of period p from the cache, or loads it from
// the catalog (claiming the period when it is new). refresh skips the cache
// and makes sure the table exists: the cached one was found gone.
//
// A period known only as one created ahead of another is loaded on its
// first write like a new one, so that the periods ahead of it are created
// in turn: every period is created Ahead periods before it is written.
func (r *Rotation[T]) tableFor(ctx context.Context, p time.Time, refresh bool) (*entity.Table[T], error) {
	if !refresh {
		if tbl, err := r.cached(p); tbl != nil || err != nil {
			return tbl, err
		}
	}
	return r.load(ctx, p, refresh)
}

// cached returns the table of period p if this Rotation has loaded it
// (with the periods ahead of it), nil if not.
func (r *Rotation[T]) cached(p time.Time) (*entity.Table[T], error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.Before(r.expiredBefore) {
		return nil, &PeriodError{Op: "write", Start: p, Err: ErrExpired}
	}
	if !r.opened[p.Unix()] {
		return nil, nil
	}
	return r.tables[p.Unix()], nil
}

// load claims period p and the next Ahead periods in the catalog, creates
// the tables of the periods ahead and of p if this call claimed it (all of
// them when create is set; a table that exists counts as created), and
// caches them.
//
// Creating a table races Expire: a period claimed before Expire moved its
// mark may have its table created after Expire deleted it. So after
// creating tables, load reads the mark again, and a table it created for a
// period now expired it deletes itself: either this read sees the mark, or
// the creation came before Expire's deletion, which then removed it.
func (r *Rotation[T]) load(ctx context.Context, p time.Time, create bool) (*entity.Table[T], error) {
	r.claimMu.Lock()
	defer r.claimMu.Unlock()
	if !create {
		// Another goroutine may have loaded it while this one waited.
		if tbl, err := r.cached(p); tbl != nil || err != nil {
			return tbl, err
		}
	}
	starts := []time.Time{p}
	for i := 1; i <= r.cfg.Ahead; i++ {
		if next := p.Add(time.Duration(i) * r.cfg.Period); next.Before(maxTime) {
			starts = append(starts, next)
		}
	}
	rows, inserted, err := r.claim(ctx, starts)
	if err != nil {
		return nil, err
	}
	tables := make([]*entity.Table[T], len(rows))
	var created []int
	for i, c := range rows {
		if tables[i], err = r.table(c.Table); err != nil {
			return nil, err
		}
		if !create && !inserted[c.RowKey] && i == 0 {
			// Another writer claimed the period and created its table
			// (or crashed first: the write finds it missing and loads it
			// again with create). A period ahead is created whoever
			// claimed it: its claimer may have crashed before creating
			// it, and it must be warm before its first write.
			continue
		}
		err := tables[i].CreateTable(ctx)
		switch {
		case err == nil, resentCreateFoundTable(err):
			// A resent create that found the table may have met the one
			// its own lost first try made: it counts as created, so that
			// step 4 deletes it if its period expired meanwhile.
			created = append(created, i)
		case errors.Is(err, entity.ErrAlreadyExists) && serviceCode(err) != "TableBeingDeleted":
		case i > 0:
			// A period ahead can wait for its first write.
		default:
			return nil, r.goneErr(ctx, p, c.Table, err)
		}
	}
	if len(created) > 0 {
		snap, err := r.readCatalog(ctx, r.between(p, p))
		if err != nil {
			return nil, err
		}
		wm := snap.expiredBefore()
		for _, i := range created {
			if rows[i].Start.Before(wm) {
				dctx, cancel := detached(ctx)
				derr := tables[i].DeleteTable(dctx)
				cancel()
				if derr != nil && !tableGone(derr) && !errors.Is(derr, entity.ErrNotFound) {
					return nil, &PeriodError{Op: "delete table of expired period", Start: rows[i].Start.UTC(), Table: rows[i].Table, Err: derr}
				}
			}
		}
		if p.Before(wm) {
			return nil, &PeriodError{Op: "create table", Start: p, Table: rows[0].Table, Err: ErrExpired}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, c := range rows {
		if !c.Start.Before(r.expiredBefore) {
			r.tables[c.Start.UTC().Unix()] = tables[i]
		}
	}
	if p.Before(r.expiredBefore) {
		return nil, &PeriodError{Op: "write", Start: p, Err: ErrExpired}
	}
	r.opened[p.Unix()] = true
	return tables[0], nil
}
