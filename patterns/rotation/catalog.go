package rotation

import (
	"context"
	"errors"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

// metaKey is the RowKey of the rotation's own catalog entry, which holds
// its period and its expiry mark. Period entries are keyed by their label,
// all digits, so the two never collide.
const metaKey = "meta"

// catalogRow is one entity of the catalog: a period entry (Table, Start,
// End) or the rotation's meta entry (PeriodSeconds, ExpiredBefore).
type catalogRow struct {
	PartitionKey  string     // the rotation's Name
	RowKey        string     // the period's label, or metaKey
	ETag          string     `table:",etag"`
	Table         string     `table:",omitempty"`
	Start         *time.Time `table:",omitempty"`
	End           *time.Time `table:",omitempty"`
	PeriodSeconds int64      `table:",omitempty"`
	// ExpiredBefore is the expiry mark: every period that starts before it
	// is expired, its table deleted or being deleted.
	ExpiredBefore *time.Time `table:",omitempty"`
}

// PeriodTable is one live period: its span [Start, End) and its table.
type PeriodTable struct {
	Start, End time.Time
	Table      string
}

func (c catalogRow) period() PeriodTable {
	var p PeriodTable
	if c.Start != nil {
		p.Start = c.Start.UTC()
	}
	if c.End != nil {
		p.End = c.End.UTC()
	}
	p.Table = c.Table
	return p
}

// snapshot is what one catalog query saw.
type snapshot struct {
	meta *catalogRow  // nil when the rotation has no meta entry yet
	rows []catalogRow // period entries, oldest first
}

// expiredBefore returns the expiry mark (zero when none).
func (s snapshot) expiredBefore() time.Time {
	if s.meta == nil || s.meta.ExpiredBefore == nil {
		return time.Time{}
	}
	return s.meta.ExpiredBefore.UTC()
}

// live returns the period entries that are not expired.
func (s snapshot) live() []catalogRow {
	wm := s.expiredBefore()
	var out []catalogRow
	for _, c := range s.rows {
		if c.Start != nil && !c.Start.Before(wm) {
			out = append(out, c)
		}
	}
	return out
}

// readCatalog reads the meta entry and the period entries that match
// periods, in one query (a scan of the rotation's partition, which holds one
// entity per live period).
func (r *Rotation[T]) readCatalog(ctx context.Context, periods filter.Expr) (snapshot, error) {
	var s snapshot
	q := entity.Query{Filter: filter.PK(r.cfg.Name).And(filter.Or(filter.RK(metaKey), periods))}
	for c, err := range r.catalog.Query(ctx, q) {
		if err != nil {
			return snapshot{}, &PeriodError{Op: "read catalog", Err: err}
		}
		if c.RowKey == metaKey {
			s.meta = &c
			continue
		}
		s.rows = append(s.rows, c)
	}
	if s.meta != nil && s.meta.PeriodSeconds != 0 && s.meta.PeriodSeconds != int64(r.cfg.Period/time.Second) {
		return snapshot{}, &ConfigError{Field: "Period", Reason: "rotation " + r.cfg.Name + " has period " +
			(time.Duration(s.meta.PeriodSeconds) * time.Second).String() + " in its catalog, not " + r.cfg.Period.String()}
	}
	r.observe(s.expiredBefore())
	return s, nil
}

// between selects the period entries from start a to start b, both included.
func (r *Rotation[T]) between(a, b time.Time) filter.Expr {
	return filter.Ge(filter.RowKeyProperty, r.label(a)).And(filter.Le(filter.RowKeyProperty, r.label(b)))
}

// observe raises the cached expiry mark and forgets the expired tables.
func (r *Rotation[T]) observe(wm time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !wm.After(r.expiredBefore) {
		return
	}
	r.expiredBefore = wm
	for k := range r.tables {
		if time.Unix(k, 0).Before(wm) {
			delete(r.tables, k)
			delete(r.opened, k)
		}
	}
}

// claim makes sure the catalog has an entry for every period in starts
// (ascending, consecutive): it reads them and inserts the missing ones in one
// transaction, guarded by the meta entry's ETag so that no period is claimed
// once Expire has marked it expired. It returns the entries and which of
// them this call inserted.
//
// Claiming is idempotent: when a reply is lost, or another writer claims
// first, the next round reads the entries that won and uses them.
func (r *Rotation[T]) claim(ctx context.Context, starts []time.Time) (rows []catalogRow, inserted map[string]bool, err error) {
	err = r.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		rows, inserted = nil, nil
		snap, err := r.readCatalog(ctx, r.between(starts[0], starts[len(starts)-1]))
		if err != nil {
			return err
		}
		if starts[0].Before(snap.expiredBefore()) {
			return &PeriodError{Op: "claim", Start: starts[0], Err: ErrExpired}
		}
		have := map[string]catalogRow{}
		for _, c := range snap.rows {
			have[c.RowKey] = c
		}
		b := r.catalog.NewBatch()
		if snap.meta == nil {
			b.Insert(&catalogRow{PartitionKey: r.cfg.Name, RowKey: metaKey, PeriodSeconds: int64(r.cfg.Period / time.Second)})
		} else {
			// An unchanged merge, conditional on the ETag: the claim fails
			// if Expire moved the mark since the read.
			m := *snap.meta
			m.PeriodSeconds = int64(r.cfg.Period / time.Second)
			b.Update(&m, entity.Merge)
		}
		var claimed map[string]bool
		for _, s := range starts {
			l := r.label(s)
			if c, ok := have[l]; ok {
				rows = append(rows, c)
				continue
			}
			start, end := s, s.Add(r.cfg.Period)
			c := catalogRow{PartitionKey: r.cfg.Name, RowKey: l, Table: r.newTableName(s), Start: &start, End: &end}
			b.Insert(&c)
			rows = append(rows, c)
			if claimed == nil {
				claimed = map[string]bool{}
			}
			claimed[l] = true
		}
		if claimed == nil {
			return nil
		}
		if _, err := r.catalog.Submit(ctx, b); err != nil {
			if errors.Is(err, entity.ErrAlreadyExists) || errors.Is(err, entity.ErrPreconditionFailed) || errors.Is(err, entity.ErrOutcomeUnknown) {
				return errCatalogChanged
			}
			return &PeriodError{Op: "claim", Start: starts[0], Err: err}
		}
		inserted = claimed
		return nil
	})
	return rows, inserted, err
}
