package logtail

import (
	"context"
	"strconv"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Tail returns the n newest entries of partition, newest first (fewer when
// the log is shorter). On a sorted backend it is the guide's query, one
// request: PartitionKey eq partition with $top=n (n up to 1,000; a larger n
// reads 1,000 per request, and the service may end a page early after 5 s,
// which Tail follows).
func (l *Log[T]) Tail(ctx context.Context, partition string, n int) ([]T, error) {
	if err := l.ok(); err != nil {
		return nil, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return nil, err
	}
	if err := checkPartition("Tail", partition); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, &ArgError{Op: "Tail", Arg: "n", Value: strconv.Itoa(n), Reason: "want 1 or more"}
	}
	q := entity.Query{Filter: rangeFilter(partition, 0, noUpper)}
	if l.cfg.Unsorted {
		out, err := newestOf(l.tbl.Query(ctx, q), n)
		return out, wrap("Tail", partition, err)
	}
	q.PageSize, q.Limit = min(n, entity.MaxPageSize), n
	out := make([]T, 0, min(n, entity.MaxPageSize))
	for e, err := range l.tbl.Query(ctx, q) {
		if err != nil {
			return nil, wrap("Tail", partition, err)
		}
		out = append(out, e)
	}
	return out, nil
}
