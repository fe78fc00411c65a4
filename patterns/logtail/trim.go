package logtail

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

// trimRounds bounds the re-reads of one delete transaction that kept
// meeting entries deleted meanwhile.
const trimRounds = 5

// Trim deletes the entries of partition made before `before` (to the 100 ns
// tick) and returns how many entries it found and saw removed.
//
// Steps, repeated page by page: one range query lists up to 1,000 RowKeys
// of the oldest entries (keys only, no properties), then transactions of up
// to 100 deletes remove them (design guide §6.8 notes that a table per
// period deletes faster; Trim is for a log that lives in one table).
//
// A delete transaction fails as a whole when one of its entries is already
// gone (another Trim got there first), and its outcome is unknown when
// azcore resent it after a lost reply (the first try may have been
// applied). Either way Trim lists what is left of that transaction's entries
// and deletes those, so it neither stops early nor reports an error for
// work that was done. Entries it counted may
// therefore have been removed by a concurrent Trim, never twice by this one.
// A crash leaves a partly trimmed log, oldest entries gone first; running
// Trim again finishes it.
func (l *Log[T]) Trim(ctx context.Context, partition string, before time.Time) (int, error) {
	if err := checkPartition("Trim", partition); err != nil {
		return 0, err
	}
	q := entity.Query{Filter: rangeFilter(partition, 0, keys.Ticks(before)), Select: []string{"RowKey"}}
	removed := 0
	token := ""
	for {
		page, err := l.rows.QueryPage(ctx, q, token)
		if err != nil {
			return removed, wrap("Trim", partition, err)
		}
		for chunk := range slices.Chunk(page.Items, entity.MaxBatchOperations) {
			n, err := l.deleteRows(ctx, partition, chunk)
			removed += n
			if err != nil {
				return removed, wrap("Trim", partition, err)
			}
		}
		if page.Next == "" {
			return removed, nil
		}
		token = page.Next
	}
}

// deleteRows deletes rows, at most 100 of one partition, in one
// transaction, and reports how many of them are gone.
func (l *Log[T]) deleteRows(ctx context.Context, partition string, rows []entity.DynamicEntity) (int, error) {
	for range trimRounds {
		b := l.tbl.NewBatch()
		for _, r := range rows {
			b.Delete(partition, r.RowKey, entity.AnyETag)
		}
		_, err := l.tbl.Submit(ctx, b)
		if err == nil {
			return len(rows), nil
		}
		// An entry already gone (404), or an answer that may be about a
		// resent, applied transaction (outcome unknown): what is left of
		// the rows says what to do.
		if !errors.Is(err, entity.ErrNotFound) && !errors.Is(err, entity.ErrOutcomeUnknown) {
			return 0, err
		}
		left, err := l.remaining(ctx, partition, rows)
		if err != nil {
			return 0, err
		}
		if len(left) == 0 {
			return len(rows), nil
		}
		rows = left
	}
	return 0, errors.New("delete transactions kept meeting entries deleted meanwhile")
}

// remaining returns those of rows that still exist: one range query over
// their keys.
func (l *Log[T]) remaining(ctx context.Context, partition string, rows []entity.DynamicEntity) ([]entity.DynamicEntity, error) {
	want := make(map[string]bool, len(rows))
	lo, hi := rows[0].RowKey, rows[0].RowKey
	for _, r := range rows {
		want[r.RowKey] = true
		if keys.Compare(r.RowKey, lo) < 0 {
			lo = r.RowKey
		}
		if keys.Compare(r.RowKey, hi) > 0 {
			hi = r.RowKey
		}
	}
	q := entity.Query{
		Filter: filter.PK(partition).And(filter.Ge(filter.RowKeyProperty, lo), filter.Le(filter.RowKeyProperty, hi)),
		Select: []string{"RowKey"},
	}
	var left []entity.DynamicEntity
	for r, err := range l.rows.Query(ctx, q) {
		if err != nil {
			return nil, err
		}
		if want[r.RowKey] {
			left = append(left, r)
		}
	}
	return left, nil
}
