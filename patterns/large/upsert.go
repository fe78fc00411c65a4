package large

import (
	"context"

	"github.com/tablekit/tablekit/internal/argerr"
)

// Upsert writes e whatever is stored under its keys, or inserts it: Replace
// on the version it reads, or Insert when there is none, starting again
// from the read when another writer gets in between (Config.Retry).
func (t *Table[T]) Upsert(ctx context.Context, e *T) error {
	if err := t.ok(); err != nil {
		return err
	}
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	return t.write(ctx, "upsert", e, condUpsert, "")
}
