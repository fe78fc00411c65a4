package eventual

import (
	"context"

	"github.com/tablekit/tablekit/entity"
)

// OnceConfig and OnceKey let the tests of the steps run Once's machinery
// under a key of their choosing, with their clock, outside a delivery.
type OnceConfig = onceConfig

func OnceKey[T any](ctx context.Context, t *entity.Table[T], partitionKey, key string, cfg OnceConfig, effect func(ctx context.Context, b *entity.Batch) error) (bool, error) {
	return onceKey(ctx, t, partitionKey, key, cfg, effect)
}
