package dataseries_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/dataseries"
)

// With a share of replies lost (the write applied, azcore retrying it) and
// writers racing, every counter ends at exactly the sum of the increments
// reported as done: no retried write is counted twice, and an increment
// whose outcome could not be learned is reported as such
// (entity.ErrOutcomeUnknown), never as a failure that in fact happened.
func TestLostReplies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{LoseReply: 0.1, Seed: 9})
	s := newSeries(t, faultyTable(t, f), dataseries.Config{Retry: entity.RetryPolicy{Attempts: 100, BaseDelay: 5 * time.Millisecond, MaxDelay: 200 * time.Millisecond}})
	const writers, increments = 6, 40
	var mu sync.Mutex
	want := make([]int64, 24)    // increments reported done
	unknown := make([]int64, 24) // increments of unknown outcome
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range increments {
				slot := (w*increments + i) % 24
				_, err := s.Add(ctx, "p", "day", slot, 1)
				mu.Lock()
				switch {
				case err == nil:
					want[slot]++
				case errors.Is(err, entity.ErrOutcomeUnknown):
					unknown[slot]++
				default:
					t.Errorf("Add: %v", err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if f.Stats().LostReplies == 0 {
		t.Fatal("no reply was lost: the test proves nothing")
	}
	f.SetEnabled(false)
	got, err := s.Get(ctx, "p", "day")
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] < want[i] || got[i] > want[i]+unknown[i] {
			t.Fatalf("counters\n%v\nwant the reported increments\n%v\nplus at most the unknown ones\n%v\n(%+v)", got, want, unknown, f.Stats())
		}
	}
	if slices.Max(unknown) > 0 {
		t.Logf("increments of unknown outcome per slot: %v", unknown)
	}
}
