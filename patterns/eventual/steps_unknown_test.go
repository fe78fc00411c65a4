package eventual_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestStepsNeverCompleteOnAnUnknownOutcome runs every table step of the
// package where each write is executed and its reply lost, on every try,
// and each read fails before it is sent: no step can tell what it did.
// Each returns an error (never nil, which would complete its message),
// the writes' matching entity.ErrOutcomeUnknown; and a handler made of
// such a step leaves its message in the queue for a retry (Outcome Retry,
// never Done).
func TestStepsNeverCompleteOnAnUnknownOutcome(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	writes := faults.New(faults.Config{LoseReply: 1, Match: func(r *http.Request) bool { return r.Method != http.MethodGet }})
	reads := faults.New(faults.Config{FailBefore: 1, Match: func(r *http.Request) bool { return r.Method == http.MethodGet }})
	writes.SetEnabled(false)
	reads.SetEnabled(false)
	faulty := env.WithOptions(func(o *azcore.ClientOptions) {
		o.Retry.MaxRetries = 1
		o.Retry.RetryDelay = time.Millisecond
		o.Retry.MaxRetryDelay = time.Millisecond
	}).With(writes, reads)
	src := patterntest.Table[Employee](t, env)
	dst := patterntest.Table[Employee](t, env)
	if err := src.Upsert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000123", Name: "Jones"}, entity.Replace); err != nil {
		t.Fatal(err)
	}
	fsrc, fdst := patterntest.View[Employee](t, faulty, src), patterntest.View[Employee](t, faulty, dst)
	steps := map[string]func(ctx context.Context) error{
		"Insert": func(ctx context.Context) error {
			return eventual.Insert(ctx, fdst, &Employee{PartitionKey: "Sales", RowKey: "000124", Name: "New"})
		},
		"Upsert": func(ctx context.Context) error {
			return eventual.Upsert(ctx, fdst, &Employee{PartitionKey: "Sales", RowKey: "000125", Name: "New"})
		},
		"Delete": func(ctx context.Context) error { return eventual.Delete(ctx, fsrc, "Sales", "000123") },
		"Move": func(ctx context.Context) error {
			return eventual.Move(ctx, fsrc, fdst, "Sales", "000123", nil)
		},
		"Once": func(ctx context.Context) error {
			_, err := eventual.Once(ctx, fdst, "Sales", "count", func(context.Context, *entity.Batch) error { return nil })
			return err
		},
	}
	qs := patterntest.Queues(t, env, 1)
	rec := newOutcomes()
	cfg := patterntest.Fast()
	cfg.Workers, cfg.BatchSize = 1, 1
	cfg.RetryDelay = time.Hour // one delivery each: a retried message stays hidden
	cfg.MaxRetryDelay = time.Hour
	cfg.Hooks = rec.hooks()
	p, err := eventual.New(qs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stepKind := eventual.NewKind[string]("Step.v1")
	errs := map[string]error{}
	if err := eventual.Handle(p, stepKind, func(ctx context.Context, name string) error {
		writes.SetEnabled(true)
		reads.SetEnabled(true)
		defer writes.SetEnabled(false)
		defer reads.SetEnabled(false)
		err := steps[name](ctx)
		errs[name] = err
		return err
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	for name := range steps {
		m, _ := stepKind.Message(name)
		if err := p.Enqueue(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	stop := run(t, p)
	waitFor(t, "a delivery of every step", func() bool { return len(rec.list()) == len(steps) })
	stop()
	for name := range steps {
		err := errs[name]
		switch {
		case err == nil:
			t.Errorf("%s: nil with every reply lost and every read failed: its message would be deleted", name)
		case name != "Move" && !errors.Is(err, entity.ErrOutcomeUnknown):
			t.Errorf("%s: %v, want entity.ErrOutcomeUnknown", name, err)
		default:
			t.Logf("%s: %v", name, err)
		}
	}
	for _, o := range rec.list() {
		if o.Result != eventual.Retry {
			t.Errorf("a step's delivery ended %v (%v), want retry", o.Result, o.Err)
		}
	}
	if n := count(t, qs[0].Work); n != len(steps) {
		t.Errorf("%d messages left in the queue, want all %d", n, len(steps))
	}
}
