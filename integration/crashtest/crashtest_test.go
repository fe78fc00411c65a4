package crashtest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/integration"
)

func TestBarrier(t *testing.T) {
	b := NewBarrier(3)
	var wg sync.WaitGroup
	var passed atomic.Int32
	for range 2 {
		wg.Go(func() {
			if b.Wait(context.Background()) == nil {
				passed.Add(1)
			}
		})
	}
	for b.Arrived() < 2 {
		time.Sleep(time.Millisecond)
	}
	if passed.Load() != 0 {
		t.Fatal("the barrier opened with 2 of 3")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if passed.Load() != 2 {
		t.Errorf("%d waiters passed, want 2", passed.Load())
	}
	short, cancelShort := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancelShort()
	if err := NewBarrier(2).Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait alone = %v, want the context's error", err)
	}
}

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// EveryStep runs Parallel crash runs at once, whatever go test's -parallel,
// and never more: the first three runs' recoveries meet at a barrier of
// three (which never opens if fewer run at once), and a gauge sees at most
// three in flight. Each run is killed at its crash point and recovered.
func TestEveryStepRunsCrashPointsAtOnce(t *testing.T) {
	const width = 3
	meet := NewBarrier(width)
	var mu sync.Mutex
	inFlight, most, recovered := 0, 0, 0
	n := EveryStep(t, env, Scenario{Parallel: width, Timeout: 30 * time.Second, Prepare: func(t *testing.T) Run {
		if t.Name() != "TestEveryStepRunsCrashPointsAtOnce/no_crash" {
			mu.Lock()
			inFlight++
			most = max(most, inFlight)
			mu.Unlock()
			t.Cleanup(func() {
				mu.Lock()
				inFlight--
				mu.Unlock()
			})
		}
		return Run{
			Work: func(ctx context.Context, e *integration.Env) error {
				for range 3 {
					if _, err := e.TableService.GetProperties(ctx, nil); err != nil {
						return err
					}
				}
				return nil
			},
			Recover: func(ctx context.Context) error {
				if t.Name() == "TestEveryStepRunsCrashPointsAtOnce/no_crash" {
					return nil
				}
				mu.Lock()
				recovered++
				mu.Unlock()
				return meet.Wait(ctx)
			},
			Check: func(t *testing.T) {},
		}
	}})
	if n != 3 {
		t.Fatalf("the scenario made %d requests, want 3", n)
	}
	if most > width || recovered != 2*n {
		t.Errorf("%d runs at once at most (want %d), %d recovered (want %d)", most, width, recovered, 2*n)
	}
}
