package entity_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

// hotRun is what a run of hotRow saw.
type hotRun struct {
	rounds     []int // per increment done
	contention int   // increments that failed with ErrContention
	err        error // the first other failure
}

func (r hotRun) roundsPerOp() float64 {
	total := 0
	for _, n := range r.rounds {
		total += n
	}
	return float64(total) / float64(max(len(r.rounds), 1))
}

func (r hotRun) maxRounds() int {
	if len(r.rounds) == 0 {
		return 0
	}
	return slices.Max(r.rounds)
}

// hotRow makes n increments of one row with writers goroutines at once,
// each calling increment, which returns the rounds it took.
func hotRow(ctx context.Context, writers, n int, increment func(ctx context.Context) (rounds int, err error)) hotRun {
	var mu sync.Mutex
	var run hotRun
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range writers {
		share := n / writers
		if w < n%writers {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range share {
				rounds, err := increment(ctx)
				mu.Lock()
				switch {
				case err == nil:
					run.rounds = append(run.rounds, rounds)
				case errors.Is(err, entity.ErrContention):
					run.contention++
				case run.err == nil:
					run.err = err
				}
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	return run
}

// modifyIncrement increments the counter pk, rk with Modify and default
// options.
func modifyIncrement(counters *entity.Table[Counter], pk, rk string) func(ctx context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		rounds := 0
		_, err := counters.Modify(ctx, pk, rk, func(c *Counter) error {
			rounds++
			c.N++
			return nil
		}, entity.ModifyOptions{})
		return rounds, err
	}
}

// TestModifyHotRowConverges: 20 writers make 20 increments each of one
// row at once, with Modify's default options: none gives up with
// ErrContention, and the row read raw counts every one.
func TestModifyHotRowConverges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	counters, err := entity.NewTable[Counter](env.TableWith(t, entity.ClientOptions(env.ClientOptions())))
	if err != nil {
		t.Fatal(err)
	}
	if err := counters.Insert(ctx, &Counter{PartitionKey: "hot", RowKey: "row"}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 20, 20
	run := hotRow(ctx, writers, writers*each, modifyIncrement(counters, "hot", "row"))
	if run.err != nil {
		t.Fatal(run.err)
	}
	if run.contention != 0 {
		t.Fatalf("%d of %d increments failed with ErrContention", run.contention, writers*each)
	}
	if n, _, _ := rawCounter(t, rawClient(counters), "hot", "row"); n != writers*each {
		t.Fatalf("stored N=%d, want %d", n, writers*each)
	}
	t.Logf("%d increments: %.2f rounds each, at most %d", writers*each, run.roundsPerOp(), run.maxRounds())
}
