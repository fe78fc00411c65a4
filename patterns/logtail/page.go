package logtail

import (
	"context"
	"strconv"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// Page reads one page of at most size entries of partition, newest first,
// starting at token ("" for the newest). Page.Next, stored anywhere (a
// link's query string, a user's session), resumes with the next older page
// later, in this process or another; it is "" after the oldest entry.
// Entries appended meanwhile are newer and never shift a page. One request
// per page; a page may come back short, or even empty with a Next, when the
// service ends it early.
func (l *Log[T]) Page(ctx context.Context, partition string, size int, token string) (entity.Page[T], error) {
	if err := l.ok(); err != nil {
		return entity.Page[T]{}, err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return entity.Page[T]{}, err
	}
	if err := checkPartition("Page", partition); err != nil {
		return entity.Page[T]{}, err
	}
	if size < 1 || size > entity.MaxPageSize {
		return entity.Page[T]{}, &ArgError{Op: "Page", Arg: "size", Value: strconv.Itoa(size), Reason: "want 1 to 1000"}
	}
	if l.cfg.Unsorted {
		return entity.Page[T]{}, &Error{Op: "Page", Partition: partition, Err: ErrUnsorted}
	}
	q := entity.Query{Filter: rangeFilter(partition, 0, noUpper), PageSize: size}
	p, err := l.tbl.QueryPage(ctx, q, token)
	return p, wrap("Page", partition, err)
}
