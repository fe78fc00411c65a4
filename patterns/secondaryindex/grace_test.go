package secondaryindex_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestGraceChecked: New refuses a Config.Grace that the processor's
// messages cannot wait for — not shorter than its redelivery window, or
// any Grace (the default too) of a processor that redelivers at once —
// with a *ConfigError naming Config.Grace that matches entity.ErrInvalid
// and ErrInvalidConfig, before any request, when an index is unique and
// OtherPartition or TableWide; a Grace inside the window, the default
// (the processor's DefaultGrace), and Sets whose reservations need no
// Grace are accepted.
func TestGraceChecked(t *testing.T) {
	t.Parallel()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	qs := patterntest.Queues(t, env, 1)
	tbl := employees(t, env)
	processor := func(cfg eventual.Config) *eventual.Processor {
		p, err := eventual.New(patterntest.SameQueues(t, metered, qs), nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A processor per Set: each registers its kind.
	windowed, atOnce := func() *eventual.Processor { return processor(fast()) }, func() *eventual.Processor { return processor(patterntest.Fast()) }
	window := windowed().RedeliveryWindow()
	if window <= 0 || atOnce().RedeliveryWindow() != 0 {
		t.Fatalf("redelivery windows %v and %v, want positive and 0", window, atOnce().RedeliveryWindow())
	}
	view := patterntest.View[Employee](t, metered, tbl)
	for _, c := range []struct {
		name    string
		p       func() *eventual.Processor
		grace   time.Duration
		indexes []secondaryindex.Index[Employee]
		refused bool
	}{
		{"window", windowed, window, []secondaryindex.Index[Employee]{emailIndex(secondaryindex.OtherPartition)}, true},
		{"above window", windowed, window + time.Second, []secondaryindex.Index[Employee]{emailIndex(secondaryindex.TableWide)}, true},
		{"default of a processor without window", atOnce, 0, []secondaryindex.Index[Employee]{emailIndex(secondaryindex.OtherPartition)}, true},
		{"set, processor without window", atOnce, time.Second, []secondaryindex.Index[Employee]{emailIndex(secondaryindex.TableWide)}, true},
		{"inside window", windowed, window - time.Second, []secondaryindex.Index[Employee]{emailIndex(secondaryindex.OtherPartition)}, false},
		{"default", windowed, 0, []secondaryindex.Index[Employee]{emailIndex(secondaryindex.TableWide)}, false},
		{"unique in the partition", atOnce, 0, []secondaryindex.Index[Employee]{emailIndex(secondaryindex.SamePartition), nameIndex(secondaryindex.OtherPartition)}, false},
	} {
		_, err := secondaryindex.New(view, secondaryindex.Config{Processor: c.p(), Grace: c.grace, PrimaryPrefix: "empid_"}, c.indexes...)
		var ce *secondaryindex.ConfigError
		switch {
		case !c.refused && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.refused && (!errors.As(err, &ce) || ce.Field != "Config.Grace" || !errors.Is(err, entity.ErrInvalid) || !errors.Is(err, secondaryindex.ErrInvalidConfig)):
			t.Errorf("%s: %v, want a *ConfigError naming Config.Grace that matches entity.ErrInvalid and ErrInvalidConfig", c.name, err)
		}
	}
	if n := meter.Snapshot().Total(); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

// slowPolicy holds up the first request that match selects: for before
// ahead of sending it, for after once its reply came (the request then
// executed), or until the request's context ends.
type slowPolicy struct {
	match         func(*http.Request) bool
	before, after time.Duration
	hits          atomic.Int32
}

func (p *slowPolicy) Do(req *policy.Request) (*http.Response, error) {
	if !p.match(req.Raw()) || p.hits.Add(1) != 1 {
		return req.Next()
	}
	ctx := req.Raw().Context()
	wait := func(d time.Duration) error {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := wait(p.before); err != nil {
		return nil, err
	}
	resp, err := req.Next()
	if err != nil {
		return resp, err
	}
	if err := wait(p.after); err != nil {
		_ = resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// TestSlowInsert: on a slow account, an insert with a unique
// OtherPartition value misses its deadline (its transaction is sent within
// Config.Grace/2 of the reservation, or not at all). Its reservation held
// up past the deadline, the insert fails unsent (context.DeadlineExceeded,
// nothing applied); its transaction held up after the service executed
// it, the insert fails with entity.ErrOutcomeUnknown and was applied, and
// a repeated Insert answers ErrAlreadyExists. Either way no other writer
// takes the value while the claim may apply, and once the queue drained
// (read raw) the value's entry is exactly the stored primary's, or none,
// Check finds nothing and no message is poisoned.
func TestSlowInsert(t *testing.T) {
	t.Parallel()
	// A window of 6 s: Grace 4 s, the insert's deadline 2 s.
	pcfg := fast()
	pcfg.RetryDelay, pcfg.MaxRetryDelay, pcfg.MaxDeliveries = time.Second, time.Second, 7
	for _, c := range []struct {
		name    string
		applied bool
		slow    *slowPolicy
	}{
		{"reservation late", false, &slowPolicy{before: 3 * time.Second, match: func(r *http.Request) bool {
			return r.Method == http.MethodPost && !strings.Contains(r.URL.Path, "$batch")
		}}},
		{"reply late", true, &slowPolicy{after: 3 * time.Second, match: func(r *http.Request) bool {
			return r.Method == http.MethodPost && strings.Contains(r.URL.Path, "$batch")
		}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tbl := employees(t, env)
			qs := patterntest.Queues(t, env, 1)
			open := func(e *integration.Env) (*secondaryindex.Set[Employee], *eventual.Processor) {
				p, err := eventual.New(patterntest.SameQueues(t, e, qs), nil, pcfg)
				if err != nil {
					t.Fatal(err)
				}
				s, err := secondaryindex.New(patterntest.View[Employee](t, e, tbl), withProcessor(remoteConfig(nil), p), emailIndex(secondaryindex.OtherPartition))
				if err != nil {
					t.Fatal(err)
				}
				return s, p
			}
			slow, _ := open(env.With(c.slow))
			other, p := open(env)
			e := Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: "j@contoso.com"}
			err := slow.Insert(ctx, &e)
			var se *secondaryindex.StepError
			if !errors.As(err, &se) || !strings.Contains(se.Step, "Grace/2") {
				t.Fatalf("slow insert: %v, want a *StepError naming the deadline", err)
			}
			if c.applied != errors.Is(err, entity.ErrOutcomeUnknown) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("slow insert: %v, want ErrOutcomeUnknown %v", err, c.applied)
			}
			raw := rawTable(t, tbl.Name())
			if stored := rawGet(t, raw, "Sales", empid(1)) != nil; stored != c.applied {
				t.Fatalf("primary stored %v, want %v", stored, c.applied)
			}
			// Another writer cannot take the value while the claim may apply.
			rival := Employee{PartitionKey: "Sales", RowKey: empid(2), Email: "j@contoso.com"}
			var ue *secondaryindex.UniqueError
			if err := other.Insert(ctx, &rival); !errors.As(err, &ue) || ue.Holder.RowKey != empid(1) {
				t.Fatalf("rival insert: %v, want a *UniqueError naming %s", err, empid(1))
			}
			if c.applied {
				again := Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: "j@contoso.com"}
				if err := other.Insert(ctx, &again); !errors.Is(err, entity.ErrAlreadyExists) {
					t.Fatalf("repeated insert: %v, want ErrAlreadyExists", err)
				}
				if _, err := other.Relay(ctx); err != nil {
					t.Fatal(err)
				}
			}
			drainWide(t, p, qs)
			if n := poisoned(t, qs); n != 0 {
				t.Errorf("%d messages poisoned", n)
			}
			var want []string
			if c.applied {
				want = []string{"email_Sales/email_j@contoso.com"}
			}
			if got := indexRows(t, tbl.Name()); !slices.Equal(got, want) {
				t.Errorf("entries and intents %v, want %v", got, want)
			}
			if c.applied {
				if m := rawGet(t, raw, "email_Sales", "email_j@contoso.com"); m[secondaryindex.PropPrimaryRK] != empid(1) || m[secondaryindex.PropClaim] != nil {
					t.Errorf("entry %v, want %s's, without a claim", m, empid(1))
				}
			}
			if fs := findings(t, other, secondaryindex.CheckOptions{}); len(fs) != 0 {
				t.Errorf("drift: %v", fs)
			}
			if !c.applied {
				// The claim passed: the value is free for the rival.
				if err := other.Insert(ctx, &rival); err != nil {
					t.Errorf("rival insert after the drain: %v", err)
				}
			}
		})
	}
}
