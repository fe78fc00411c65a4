package large_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/large"
)

// A Replace or Delete of a version another writer has replaced is refused
// with entity.ErrPreconditionFailed, as a *large.Error naming the keys;
// the stored entity, read back, is the other writer's, whole, and the
// refused Replace leaves no blob once the processor has drained.
func TestStaleETagIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	old := stored(t, f)
	e := v2.employee()
	e.ETag = entity.AnyETag
	if err := f.emps.Replace(ctx, &e); err != nil { // another writer
		t.Fatal(err)
	}
	stale := v1.employee()
	stale.Name, stale.ETag = "stale", old.ETag
	stale.Photo = payload(99, 1000) // a new photo: uploaded, then refused
	for name, op := range map[string]func() error{
		"replace": func() error { return f.emps.Replace(ctx, &stale) },
		"delete":  func() error { return f.emps.Delete(ctx, "Sales", "000123", old.ETag) },
	} {
		err := op()
		var le *large.Error
		if !errors.Is(err, entity.ErrPreconditionFailed) || !errors.As(err, &le) || le.PartitionKey != "Sales" || le.RowKey != "000123" {
			t.Errorf("%s of a replaced version: %v, want a *large.Error for Sales/000123 matching entity.ErrPreconditionFailed", name, err)
		}
	}
	if err := f.drain(ctx); err != nil {
		t.Fatal(err)
	}
	readsAs(t, f, false, v2)
	f.checkClean(t)
}

// interfere replaces the employee through another Table just before each
// of this client's entity writes, so that every round of an Upsert loses.
type interfere struct {
	f      *fixture
	rounds atomic.Int64
}

func (i *interfere) Do(req *policy.Request) (*http.Response, error) {
	if op := cost.Classify(req.Raw()).Op; op == cost.OpUpdate || op == cost.OpInsert {
		n := i.rounds.Add(1)
		e := v1.employee()
		e.Name, e.ETag = "other "+strconv.FormatInt(n, 10), entity.AnyETag
		if err := i.f.emps.Replace(req.Raw().Context(), &e); err != nil {
			return nil, err
		}
	}
	return req.Next()
}

// An Upsert that loses every round to another writer gives up after
// Config.Retry.Attempts rounds with an error matching entity.ErrContention
// (joined with the last entity.ErrPreconditionFailed); the entity reads as
// the other writer's last version, whole, and the Upsert's uploads are
// disposed of: no blob is left once the processor has drained.
func TestUpsertThatAlwaysLosesGivesUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig()
	cfg.Retry = entity.RetryPolicy{Attempts: 3, BaseDelay: 1, MaxDelay: 1}
	f := newFixture(t, cfg)
	stored(t, f)
	in := &interfere{f: f}
	g := f.on(t, env.With(in))
	e := v2.employee()
	err := g.emps.Upsert(ctx, &e)
	var le *large.Error
	if !errors.Is(err, entity.ErrContention) || !errors.Is(err, entity.ErrPreconditionFailed) || !errors.As(err, &le) {
		t.Errorf("Upsert that always loses: %v, want a *large.Error matching entity.ErrContention", err)
	}
	if n := in.rounds.Load(); n != 3 {
		t.Errorf("Upsert made %d rounds, want Config.Retry.Attempts = 3", n)
	}
	if err := f.drain(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := f.emps.Get(ctx, "Sales", "000123")
	if err != nil || got.Name != "other 3" {
		t.Errorf("after the Upsert gave up: %q, %v; want the other writer's last version", got.Name, err)
	}
	f.checkClean(t)
}
