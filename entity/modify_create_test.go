package entity_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
)

// Tests of ModifyOptions.Create: a read-modify-write that creates the
// entity it does not find. Every test reads the final state with a raw
// aztables client.

// rawCounter reads the counter pk, rk with a raw aztables client: its N,
// and whether it exists.
func rawCounter(t *testing.T, client *aztables.Client, pk, rk string) (n int64, etag string, found bool) {
	t.Helper()
	resp, err := client.GetEntity(context.Background(), pk, rk, nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == 404 {
		return 0, "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(resp.Value, &m); err != nil {
		t.Fatal(err)
	}
	switch v := m["N"].(type) {
	case string: // Int64 travels as a string
		n, err = strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
	case float64:
		n = int64(v)
	case nil:
	default:
		t.Fatalf("N is %T", v)
	}
	return n, string(resp.ETag), true
}

// rawClient is a raw aztables client of tbl's table, without any policy
// of the test's.
func rawClient(tbl interface{ Name() string }) *aztables.Client {
	return env.TableService.NewClient(tbl.Name())
}

// TestModifyCreate: with Create, a missing entity is created from T's
// zero value with the keys set and no ETag, changed, and inserted; an
// existing one is modified as without it; without Create a missing
// entity is still ErrNotFound. A change that edits the keys or gives up
// leaves nothing stored.
func TestModifyCreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	counters, err := entity.NewTable[Counter](env.TableWith(t, entity.ClientOptions(env.ClientOptions())))
	if err != nil {
		t.Fatal(err)
	}
	raw := rawClient(counters)
	inc := func(seen *Counter) func(*Counter) error {
		return func(c *Counter) error { *seen = *c; c.N++; return nil }
	}

	var seen Counter
	if _, err := counters.Modify(ctx, "c", "1", inc(&seen), entity.ModifyOptions{}); !errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("without Create: %v, want ErrNotFound", err)
	}
	for _, tbl := range []*entity.Table[Counter]{counters, counters.WithWriteTokens()} {
		rk := fmt.Sprint("tokens-", tbl != counters)
		for i := range 2 {
			got, err := tbl.Modify(ctx, "c", rk, inc(&seen), entity.ModifyOptions{Create: true})
			if err != nil {
				t.Fatalf("%s, call %d: %v", rk, i, err)
			}
			if i == 0 && seen != (Counter{PartitionKey: "c", RowKey: rk}) {
				t.Fatalf("%s: change got %+v to create, want the zero value with the keys", rk, seen)
			}
			if i == 1 && (seen.ETag == "" || seen.N != 1) {
				t.Fatalf("%s: change got %+v to modify, want the stored entity", rk, seen)
			}
			n, etag, found := rawCounter(t, raw, "c", rk)
			if !found || n != int64(i+1) || got.N != n || got.ETag != etag {
				t.Fatalf("%s, call %d: returned %+v, stored N=%d %q (found %v)", rk, i, got, n, etag, found)
			}
		}
	}

	// A property bag starts with an empty map to fill.
	bags, err := entity.NewTable[entity.DynamicEntity](env.TableService.NewClient(counters.Name()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bags.Modify(ctx, "c", "bag", func(d *entity.DynamicEntity) error {
		d.Properties["N"] = int64(7)
		return nil
	}, entity.ModifyOptions{Create: true}); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := rawCounter(t, raw, "c", "bag"); n != 7 {
		t.Fatalf("bag: N=%d", n)
	}

	// Refused changes create nothing.
	giveUp := errors.New("no")
	if _, err := counters.Modify(ctx, "c", "refused", func(*Counter) error { return giveUp }, entity.ModifyOptions{Create: true}); err != giveUp {
		t.Fatalf("a change that gives up: %v", err)
	}
	if _, err := counters.Modify(ctx, "c", "refused", func(c *Counter) error { c.RowKey = "other"; return nil }, entity.ModifyOptions{Create: true}); !errors.Is(err, entity.ErrInvalid) {
		t.Fatalf("a change that edits the keys: %v, want ErrInvalid", err)
	}
	for _, rk := range []string{"refused", "other"} {
		if _, _, found := rawCounter(t, raw, "c", rk); found {
			t.Fatalf("%q was stored", rk)
		}
	}
}

// TestModifyCreateRacingCreators: 20 goroutines create and increment the
// same missing counter at once, with default options, with and without
// write tokens: each increment is counted exactly once — a writer whose
// insert finds the entity another created changes theirs instead.
func TestModifyCreateRacingCreators(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	counters, err := entity.NewTable[Counter](env.TableWith(t, entity.ClientOptions(env.ClientOptions())))
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 20, 3
	for _, tbl := range []*entity.Table[Counter]{counters, counters.WithWriteTokens()} {
		rk := fmt.Sprint("tokens-", tbl != counters)
		var creates atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		start := make(chan struct{})
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for range each {
					_, err := tbl.Modify(ctx, "c", rk, func(c *Counter) error {
						if c.ETag == "" {
							creates.Add(1)
						}
						c.N++
						return nil
					}, entity.ModifyOptions{Create: true})
					if err != nil {
						errs <- err
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("%s: %v", rk, err)
		}
		if n, _, _ := rawCounter(t, rawClient(counters), "c", rk); n != writers*each {
			t.Fatalf("%s: stored N=%d, want %d", rk, n, writers*each)
		}
		if creates.Load() < 2 {
			t.Logf("%s: only %d round(s) tried to create: the race was not run", rk, creates.Load())
		}
		t.Logf("%s: %d rounds tried to create", rk, creates.Load())
	}
}

// TestModifyCreateLostReply: the insert of a Modify that creates has its
// reply lost, so azcore's resend meets the entity with 409. With write
// tokens the read that follows proves the insert was applied: Modify
// reports success and never applies the change twice, also when another
// writer changed the entity before the resend. Without tokens it cannot
// tell its own insert from a racing creator's identical one, and reports
// ErrOutcomeUnknown, with the change applied once. A resend that meets
// another creator's entity is settled when that entity predates the
// insert (the change is then applied on top of it, once), and is
// ErrOutcomeUnknown otherwise, with the change not applied.
func TestModifyCreateLostReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	plain := faultyTable[Counter](t, f, 2)
	tokens := plain.WithWriteTokens()
	raw := rawClient(plain)
	other, err := entity.NewTable[Counter](raw)
	if err != nil {
		t.Fatal(err)
	}
	inc := func(c *Counter) error { c.N++; return nil }
	create := entity.ModifyOptions{Create: true}
	lost := f.Stats().LostReplies

	// Tokens: the lost insert is found applied.
	f.LoseNext(1, isInsert)
	got, err := tokens.Modify(ctx, "c", "tokens", inc, create)
	n, etag, _ := rawCounter(t, raw, "c", "tokens")
	if err != nil || n != 1 || got.N != 1 || got.ETag != etag {
		t.Fatalf("tokens: %+v %v; stored N=%d %q", got, err, n, etag)
	}

	// Tokens, and another writer's increment lands before the resend: the
	// insert is still found applied, and the entity returned as read.
	f.LoseNextThen(1, isInsert, func(*http.Request) {
		if _, err := other.Modify(ctx, "c", "theirs", func(c *Counter) error { c.N += 100; return nil }, entity.ModifyOptions{}); err != nil {
			t.Error(err)
		}
	})
	got, err = tokens.Modify(ctx, "c", "theirs", inc, create)
	if n, _, _ := rawCounter(t, raw, "c", "theirs"); err != nil || n != 101 || got.N != 101 {
		t.Fatalf("tokens, another writer before the resend: %+v %v; stored N=%d", got, err, n)
	}

	// No tokens: never applied twice, and said to be unknown.
	f.LoseNext(1, isInsert)
	_, err = plain.Modify(ctx, "c", "plain", inc, create)
	if n, _, _ := rawCounter(t, raw, "c", "plain"); !errors.Is(err, entity.ErrOutcomeUnknown) || errors.Is(err, entity.ErrAlreadyExists) || n != 1 {
		t.Fatalf("no tokens: %v (want ErrOutcomeUnknown only); stored N=%d, want 1", err, n)
	}

	// Another creator's entity, created just before the insert, which
	// then meets it on its first try, whose reply is lost: the resend's
	// 409 cannot be told from the insert's own.
	for _, tbl := range []*entity.Table[Counter]{plain, tokens} {
		rk := fmt.Sprint("fresh-", tbl == tokens)
		calls := 0
		_, err := tbl.Modify(ctx, "c", rk, func(c *Counter) error {
			if calls++; calls == 1 {
				if err := other.Insert(ctx, &Counter{PartitionKey: "c", RowKey: rk, N: 100}); err != nil {
					return err
				}
				f.LoseNext(1, isInsert)
			}
			c.N++
			return nil
		}, create)
		if n, _, _ := rawCounter(t, raw, "c", rk); !errors.Is(err, entity.ErrOutcomeUnknown) || n != 100 {
			t.Fatalf("%s: %v, stored N=%d; want ErrOutcomeUnknown and 100", rk, err, n)
		}
	}

	// The same with an entity stamped well before the insert's first try:
	// certainly not the insert's, so the next round increments it.
	calls := 0
	got, err = tokens.Modify(ctx, "c", "old", func(c *Counter) error {
		if calls++; calls == 1 {
			if err := other.Insert(ctx, &Counter{PartitionKey: "c", RowKey: "old", N: 100}); err != nil {
				return err
			}
			if !env.Cosmos() {
				// The service's clock stamps the entity; the margin is 1 s.
				time.Sleep(2500 * time.Millisecond)
			}
			f.LoseNext(1, isInsert)
		}
		c.N++
		return nil
	}, create)
	n, _, _ = rawCounter(t, raw, "c", "old")
	switch {
	case env.Cosmos():
		// An ETag without a time cannot show the entity predates the
		// insert.
		if !errors.Is(err, entity.ErrOutcomeUnknown) || n != 100 {
			t.Fatalf("old entity under Cosmos DB: %v, N=%d", err, n)
		}
	case err != nil || n != 101 || got.N != 101 || calls != 2:
		t.Fatalf("old entity: %+v %v after %d calls; stored N=%d, want 101", got, err, calls, n)
	}
	if s := f.Stats(); s.LostReplies-lost != 6 {
		t.Fatalf("faults: %+v", s)
	}
}

// TestModifyCreateRacingCreatorsLosingReplies: 20 goroutines create and
// increment one missing counter through write tokens while a tenth of
// the writes' replies are lost: every increment reported done is stored
// once, and only those reported ErrOutcomeUnknown may be missing.
func TestModifyCreateRacingCreatorsLosingReplies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{LoseReply: 0.1, Seed: 7, Match: isWrite})
	counters := faultyTable[Counter](t, f, 3).WithWriteTokens()
	const writers, each = 20, 3
	var done, unknown atomic.Int64
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				_, err := counters.Modify(ctx, "c", "lossy", func(c *Counter) error { c.N++; return nil }, entity.ModifyOptions{Create: true})
				switch {
				case err == nil:
					done.Add(1)
				case errors.Is(err, entity.ErrOutcomeUnknown):
					unknown.Add(1)
				default:
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	n, _, _ := rawCounter(t, rawClient(counters), "c", "lossy")
	if n < done.Load() || n > done.Load()+unknown.Load() {
		t.Fatalf("stored N=%d: %d increments done, %d unknown", n, done.Load(), unknown.Load())
	}
	if f.Stats().LostReplies == 0 {
		t.Fatal("no reply was lost")
	}
	t.Logf("N=%d: %d done, %d unknown, %d replies lost", n, done.Load(), unknown.Load(), f.Stats().LostReplies)
}
