package bucket_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/bucket"
	"github.com/tablekit/tablekit/throttle"
)

// rawCount counts the entities of table name per PartitionKey, read
// through env's own client (no Limiter, no Simulator, no decoding).
func rawCount(t *testing.T, name string) map[string]int {
	t.Helper()
	sel := "PartitionKey"
	pager := env.TableService.NewClient(name).NewListEntitiesPager(&aztables.ListEntitiesOptions{Select: &sel})
	got := map[string]int{}
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Entities {
			var e struct{ PartitionKey string }
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			got[e.PartitionKey]++
		}
	}
	return got
}

// TestLimiterPacesBucketWrites: four Writes of 200 events each to a
// spread of 4 buckets, through the clients of an Account whose Options
// share one Limiter, against a Simulator serving 50 entities/s per
// partition (a bucket's transaction takes about a second's worth): with
// the Limiter every try goes through it, fewer are throttled than by the
// same Writes without it, and every event is stored, read back raw.
func TestLimiterPacesBucketWrites(t *testing.T) {
	const rate, writes, per, buckets = 50, 4, 200, 4
	run := func(t *testing.T, lim *throttle.Limiter) (throttle.SimStats, string) {
		acct, sim := env.ThrottledAccount(t, lim, throttle.SimConfig{PartitionRate: rate})
		name := env.TableName(t)
		if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
			t.Fatal(err)
		}
		svc, err := acct.TableService()
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := entity.NewTableFromService[Event](svc, name)
		if err != nil {
			t.Fatal(err)
		}
		spread := newSpread(t, tbl, bucket.Config{Buckets: buckets})
		for w := range writes {
			events := make([]*Event, per)
			for i := range events {
				events[i] = &Event{RowKey: fmt.Sprintf("%02d-%04d", w, i), Writer: int32(w), N: int32(i)}
			}
			if err := spread.Write(t.Context(), "log", events...); err != nil && lim != nil {
				t.Fatalf("Write %d: %v", w, err)
			}
		}
		return sim.Stats(), name
	}

	lim, err := throttle.NewLimiter(throttle.Config{PartitionRate: rate})
	if err != nil {
		t.Fatal(err)
	}
	with, name := run(t, lim)
	without, _ := run(t, nil)
	t.Logf("with the Limiter: %d of %d tries throttled; without: %d of %d", with.Throttled, with.Requests, without.Throttled, without.Requests)
	if got := lim.Stats().Requests; got != with.Requests {
		t.Errorf("the Limiter paced %d tries, the Simulator saw %d: some went around it", got, with.Requests)
	}
	if without.Throttled == 0 {
		t.Fatalf("without the Limiter no try was throttled: the load does not exceed the simulated rate")
	}
	if with.Throttled >= without.Throttled {
		t.Errorf("%d tries throttled with the Limiter, %d without: want fewer with it", with.Throttled, without.Throttled)
	}
	counts := rawCount(t, name)
	total := 0
	for _, n := range counts {
		total += n
	}
	if total != writes*per || len(counts) != buckets {
		t.Errorf("stored %d events in %d partitions, want %d in %d: %v", total, len(counts), writes*per, buckets, counts)
	}
}
