package steps

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

// MarkerPrefix is the RowKey prefix of Once's marker entities unless
// OnceConfig says otherwise.
const MarkerPrefix = "tablekit.once_"

// DefaultMarkerTTL is how long markers are kept unless OnceConfig says
// otherwise: longer than the seven days a queue message lives by default,
// so that no copy of a message can outlive its marker.
const DefaultMarkerTTL = 8 * 24 * time.Hour

// Marker is the entity Once writes next to its change. Expires tells
// Sweep when it may go; Attempt identifies the call that wrote it.
type Marker struct {
	PartitionKey string
	RowKey       string
	Expires      time.Time
	Attempt      string
}

// OnceConfig tunes Once and Sweep.
type OnceConfig struct {
	// Prefix is the RowKey prefix of markers; "" means MarkerPrefix. It must
	// not be the prefix of any other entity's RowKey in the partition.
	Prefix string
	// TTL is how long a marker is kept; 0 means DefaultMarkerTTL.
	TTL time.Duration
	// Now is the time source; nil means time.Now.
	Now func() time.Time
	// Retry bounds the rounds lost to concurrent writers.
	Retry entity.RetryPolicy
}

func (c OnceConfig) withDefaults() OnceConfig {
	if c.Prefix == "" {
		c.Prefix = MarkerPrefix
	}
	if c.TTL == 0 {
		c.TTL = DefaultMarkerTTL
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// MarkerKey returns the RowKey of the marker for key.
func (c OnceConfig) MarkerKey(key string) (string, error) {
	c = c.withDefaults()
	rk := c.Prefix + key
	if err := keys.Validate(rk); err != nil {
		return "", fmt.Errorf("steps: marker key for %q: %w", key, err)
	}
	return rk, nil
}

// Once applies a change exactly once per key, in partition partitionKey of
// t. effect reads what it needs and adds the change's operations to b, a
// transaction that already holds the insert of the marker for key as
// operation 0; Once submits it.
//
//   - If the marker exists, the transaction fails at operation 0 and
//     nothing is changed: the change was applied before under this key.
//   - If the change's own conditions fail (an ETag read by effect is stale),
//     the round starts again with a fresh effect, at most cfg.Retry.Attempts
//     times.
//
// applied is true when this call applied the change, also when azcore resent
// the transaction after its reply was lost (the marker then carries this
// call's attempt id). A nil error with applied false means the change had
// been applied before.
func Once[T any](ctx context.Context, t *entity.Table[T], partitionKey, key string, cfg OnceConfig, effect func(ctx context.Context, b *entity.Batch) error) (applied bool, err error) {
	cfg = cfg.withDefaults()
	rk, err := cfg.MarkerKey(key)
	if err != nil {
		return false, err
	}
	if err := keys.Validate(partitionKey); err != nil {
		return false, fmt.Errorf("steps: Once: %w", err)
	}
	markers, err := entity.NewTable[Marker](t.Client())
	if err != nil {
		return false, err
	}
	attempt := uuid.NewString()
	err = cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		b := t.NewBatch().Insert(&Marker{
			PartitionKey: partitionKey,
			RowKey:       rk,
			Expires:      cfg.Now().Add(cfg.TTL).UTC(),
			Attempt:      attempt,
		})
		if err := effect(ctx, b); err != nil {
			return err
		}
		_, err := t.Submit(ctx, b)
		if err == nil {
			applied = true
			return nil
		}
		var te *entity.TransactionError
		markerExists := errors.As(err, &te) && te.Index == 0 && errors.Is(err, entity.ErrAlreadyExists)
		if !markerExists && !errors.Is(err, entity.ErrOutcomeUnknown) {
			return err
		}
		// The marker tells: there, the change is applied (by this call if it
		// carries this call's attempt id); absent after an unknown outcome,
		// the transaction was not applied and another round is safe, since
		// the marker lets at most one of them commit.
		m, gerr := markers.Get(ctx, partitionKey, rk)
		switch {
		case gerr == nil:
			applied = m.Attempt == attempt
			return nil
		case errors.Is(gerr, entity.ErrNotFound) && !markerExists:
			return errRound
		}
		return fmt.Errorf("steps: Once %q: reading the marker after %v: %w", key, err, gerr)
	})
	return applied, err
}

// Sweep deletes the markers that expired before now: in the given
// partitions, or in the whole table when none are given (a table scan
// limited to the markers' RowKey range, meant for an occasional background
// run). It returns how many expired markers it found: all are gone when
// the error is nil.
func Sweep[T any](ctx context.Context, t *entity.Table[T], now time.Time, cfg OnceConfig, partitions ...string) (int, error) {
	cfg = cfg.withDefaults()
	markers, err := entity.NewTable[Marker](t.Client())
	if err != nil {
		return 0, err
	}
	q := entity.Query{
		Filter: filter.RowKeyPrefix(cfg.Prefix).And(filter.Lt("Expires", now.UTC())),
		Select: []string{"Expires"},
	}
	var found func(yield func(Marker, error) bool)
	if len(partitions) == 0 {
		found = markers.Query(ctx, q)
	} else {
		found = markers.QueryPartitions(ctx, partitions, q, entity.FanOutOptions{})
	}
	deleted := 0
	var pk string
	var pending []string
	flush := func() error {
		if err := DeleteAll(ctx, markers, pk, pending); err != nil {
			return err
		}
		deleted += len(pending)
		pending = pending[:0]
		return nil
	}
	for m, err := range found {
		if err != nil {
			return deleted, err
		}
		if len(pending) > 0 && pk != m.PartitionKey {
			if err := flush(); err != nil {
				return deleted, err
			}
		}
		pk = m.PartitionKey
		pending = append(pending, m.RowKey)
	}
	if len(pending) > 0 {
		if err := flush(); err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}
