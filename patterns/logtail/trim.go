package logtail

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/keys"
)

// trimRounds bounds the re-reads of one delete transaction that kept
// meeting entries deleted meanwhile.
const trimRounds = 5

// Trim deletes the entries of partition made before `before` (to the 100 ns
// tick; a time past year 9999 means every entry) and returns how many
// entries it found and saw removed.
//
// It deletes the oldest entries first, in the order a reader loses them
// from the old end of the log, so that a reader during a Trim, and the log
// a crash leaves, is missing only its oldest part, never a stretch in the
// middle. The service lists keys newest first, so Trim lists before it
// deletes. Steps: range queries list the RowKeys of the entries to delete,
// up to 1,000 per request (keys only, no properties), remembering the
// first key of each page and the keys of the last (the oldest); then, page
// by page from the oldest, transactions of up to 100 deletes remove them,
// oldest first, and each page but the last is listed again (one query)
// when its turn comes. A Trim of up to 1,000 entries is one query and one
// transaction per 100; of n more, about 2n/1,000 queries. (Design guide
// §6.8 notes that a table per period deletes faster; Trim is for a log
// that lives in one table.) On a backend without key order
// (Config.Unsorted, Cosmos DB), whose pages hold no key range, Trim lists
// every RowKey to delete first (one string each in memory), sorts them and
// deletes oldest first the same way (TestCosmosTrimUnsorted).
//
// A delete transaction fails as a whole when one of its entries is already
// gone (another Trim got there first), and its outcome is unknown when
// azcore resent it after a lost reply (the first try may have been
// applied). Either way Trim lists what is left of that transaction's entries
// and deletes those, so it neither stops early nor reports an error for
// work that was done. Entries it counted may
// therefore have been removed by a concurrent Trim, never twice by this one.
// A crash leaves a partly trimmed log, oldest entries gone first; running
// Trim again, in this process or a fresh one, finishes it. An entry
// appended during a Trim with an instant before `before` (a writer's clock
// behind) may be kept.
func (l *Log[T]) Trim(ctx context.Context, partition string, before time.Time) (int, error) {
	if err := l.ok(); err != nil {
		return 0, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return 0, err
	}
	if err := checkPartition("Trim", partition); err != nil {
		return 0, err
	}
	f := rangeFilter(partition, 0, keys.Ticks(before))
	if l.cfg.Unsorted {
		return l.trimUnsorted(ctx, partition, f)
	}
	q := entity.Query{Filter: f, Select: []string{"RowKey"}, PageSize: l.trimPage}
	// The first key of each page, newest page first; the last page's rows.
	var starts []string
	var oldest []entity.DynamicEntity
	token := ""
	for {
		page, err := l.rows.QueryPage(ctx, q, token)
		if err != nil {
			return 0, wrap("Trim", partition, err)
		}
		if len(page.Items) > 0 {
			starts = append(starts, page.Items[0].RowKey)
			oldest = page.Items
		}
		if page.Next == "" {
			break
		}
		token = page.Next
	}
	removed := 0
	for i := len(starts) - 1; i >= 0; i-- {
		rows := oldest
		if i < len(starts)-1 {
			var err error
			if rows, err = l.listRange(ctx, f, starts[i], starts[i+1]); err != nil {
				return removed, wrap("Trim", partition, err)
			}
		}
		n, err := l.deleteOldestFirst(ctx, partition, rows)
		removed += n
		if err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// deleteOldestFirst deletes rows, which sort newest first, from the end,
// in transactions of up to 100.
func (l *Log[T]) deleteOldestFirst(ctx context.Context, partition string, rows []entity.DynamicEntity) (int, error) {
	removed := 0
	for end := len(rows); end > 0; end -= entity.MaxBatchOperations {
		n, err := l.deleteRows(ctx, partition, rows[max(0, end-entity.MaxBatchOperations):end])
		removed += n
		if err != nil {
			return removed, wrap("Trim", partition, err)
		}
	}
	return removed, nil
}

// trimUnsorted is Trim on a backend without key order (Config.Unsorted):
// its pages hold no key range, so it lists every RowKey f selects (keys
// only), sorts them, and deletes oldest first as Trim does.
func (l *Log[T]) trimUnsorted(ctx context.Context, partition string, f filter.Expr) (int, error) {
	var rows []entity.DynamicEntity
	for r, err := range l.rows.Query(ctx, entity.Query{Filter: f, Select: []string{"RowKey"}, PageSize: l.trimPage}) {
		if err != nil {
			return 0, wrap("Trim", partition, err)
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b entity.DynamicEntity) int { return keys.Compare(a.RowKey, b.RowKey) })
	return l.deleteOldestFirst(ctx, partition, rows)
}

// listRange lists the RowKeys of the entries f selects from `from` up to
// (not including) `to`, in key order.
func (l *Log[T]) listRange(ctx context.Context, f filter.Expr, from, to string) ([]entity.DynamicEntity, error) {
	q := entity.Query{
		Filter: f.And(filter.Ge(filter.RowKeyProperty, from), filter.Lt(filter.RowKeyProperty, to)),
		Select: []string{"RowKey"}, PageSize: l.trimPage,
	}
	var rows []entity.DynamicEntity
	for r, err := range l.rows.Query(ctx, q) {
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// deleteRows deletes rows, at most 100 of one partition, in one
// transaction, and reports how many of them are gone.
func (l *Log[T]) deleteRows(ctx context.Context, partition string, rows []entity.DynamicEntity) (int, error) {
	all := len(rows) // each round deletes what is left of them
	for range trimRounds {
		b := l.tbl.NewBatch()
		for _, r := range rows {
			b.Delete(partition, r.RowKey, entity.AnyETag)
		}
		_, err := l.tbl.Submit(ctx, b)
		if err == nil {
			return all, nil
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
			return all, nil
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
