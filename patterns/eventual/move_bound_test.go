package eventual_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// TestMoveGivesUpUnderEndlessContention: another writer changes the
// source between every read of Move and its conditional delete. Move does
// not loop for ever: after its documented 10 rounds it returns an error
// that names Move and the keys and matches entity.ErrContention (and the
// last round's entity.ErrPreconditionFailed). Read back raw, the writer's
// last version is still in the source — nothing deleted blindly — and the
// target holds nothing: every round found the source changed before its
// copy.
func TestMoveGivesUpUnderEndlessContention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	from, to := newStepTable(t, env), newStepTable(t, env)
	if err := from.Insert(ctx, &stepItem{PartitionKey: "p", RowKey: "r", Value: "v0"}); err != nil {
		t.Fatal(err)
	}
	writer := stepView(t, env, from)
	rounds := 0
	edit := func(e *stepItem) error {
		rounds++
		changed := stepItem{PartitionKey: "p", RowKey: "r", Value: fmt.Sprintf("v%d", rounds)}
		return writer.UpdateAny(ctx, &changed, entity.Replace)
	}
	err := eventual.Move(ctx, from, to, "p", "r", edit)
	if !errors.Is(err, entity.ErrContention) || !errors.Is(err, entity.ErrPreconditionFailed) {
		t.Fatalf("Move = %v, want ErrContention and ErrPreconditionFailed", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "eventual: move") || !strings.Contains(msg, `"p"`) || !strings.Contains(msg, `"r"`) {
		t.Errorf("Move's error %q does not name Move and the keys", msg)
	}
	if rounds != 10 {
		t.Errorf("%d rounds, want 10", rounds)
	}
	raw := env.TableService.NewClient(from.Name())
	got, err := raw.GetEntity(ctx, "p", "r", nil)
	if err != nil || !strings.Contains(string(got.Value), `"Value":"v10"`) {
		t.Errorf("source holds %s (%v), want the writer's v10", got.Value, err)
	}
	if got, err := env.TableService.NewClient(to.Name()).GetEntity(ctx, "p", "r", nil); err == nil {
		t.Errorf("target holds %s, want nothing", got.Value)
	}
}

// TestOnceGivesUpUnderEndlessContention: another writer changes the
// counter between every read of Once's effect and its transaction, so its
// ETag condition fails every round. Once does not loop for ever: after
// its documented 10 rounds it returns an error that names Once and its
// key and matches entity.ErrContention; read raw, no marker was written
// and the counter holds only the writer's ten changes — the change was
// never applied, and a later run of the message applies it.
func TestOnceGivesUpUnderEndlessContention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newStepTable(t, env)
	if err := tbl.Insert(ctx, &stepItem{PartitionKey: "p", RowKey: "counter"}); err != nil {
		t.Fatal(err)
	}
	writer := stepView(t, env, tbl)
	rounds := 0
	effect := func(ctx context.Context, b *entity.Batch) error {
		rounds++
		c, err := tbl.Get(ctx, "p", "counter")
		if err != nil {
			return err
		}
		other := c
		other.Count += 100
		if err := writer.Update(ctx, &other, entity.Merge); err != nil {
			return err
		}
		c.Count++
		b.Update(&c, entity.Merge) // on the ETag read: always stale
		return nil
	}
	applied, err := eventual.OnceKey(ctx, tbl, "p", "msg-c", eventual.OnceConfig{}, effect)
	if applied || !errors.Is(err, entity.ErrContention) {
		t.Fatalf("Once = %v, %v; want not applied and ErrContention", applied, err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "eventual: Once") || !strings.Contains(msg, "msg-c") {
		t.Errorf("Once's error %q does not name Once and its key", msg)
	}
	if rounds != 10 {
		t.Errorf("%d rounds, want 10", rounds)
	}
	raw := env.TableService.NewClient(tbl.Name())
	if _, err := raw.GetEntity(ctx, "p", eventual.MarkerPrefix+"msg-c", nil); err == nil {
		t.Error("a marker was written for a change never applied")
	}
	got, err := raw.GetEntity(ctx, "p", "counter", nil)
	if err != nil || !strings.Contains(string(got.Value), `"Count":"1000"`) {
		t.Errorf("counter holds %s (%v), want the writer's 1000", got.Value, err)
	}
}
