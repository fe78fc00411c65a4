package eventual_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// Replay of two poison messages with the reply of each of its requests
// lost and, inside azcore's retry window, another process working on the
// same queues: a second Replay (seamtest.Insert) or a worker that now
// handles the kind and drains the work queue (seamtest.Delete). Replay
// reports success or an unknown outcome, never a failure of a move that
// was made; once a healthy Replay and worker have run, each message ran,
// both queues are empty and no record blob is left.
func TestReplayBesideAnotherWriter(t *testing.T) {
	t.Parallel()
	kind := eventual.NewKind[json.RawMessage]("Unknown.v9")
	byReason := eventual.ReplayOptions{Filter: func(r eventual.PoisonRecord) bool { return r.Reason == eventual.ReasonUnknownKind }}
	seamtest.EveryReply(t, env, seamtest.Race{Parallel: 8, Competitors: []string{seamtest.Insert, seamtest.Delete}, Prepare: func(t *testing.T) seamtest.RaceRun {
		ctx := context.Background()
		w := newPoisonWorld(t)
		second := strings.Replace(w.original, `"u1"`, `"u2"`, 1)
		if _, err := w.qs[0].Work.EnqueueMessage(ctx, second, nil); err != nil {
			t.Fatal(err)
		}
		if rep, err := w.processor(t, env, patterntest.Crashy()).Drain(ctx); err != nil || rep.Poisoned < 2 { // a message seen again before its delete (1 s visibility, a loaded machine) is poisoned twice
			t.Fatalf("poisoning: %+v, %v", rep, err)
		}
		var mu sync.Mutex
		ran := map[string]int{}
		worker := func() *eventual.Processor {
			p := w.processor(t, env, patterntest.Crashy())
			if err := eventual.Handle(p, kind, func(ctx context.Context, _ json.RawMessage) error {
				d, _ := eventual.DeliveryFrom(ctx)
				mu.Lock()
				ran[d.ID]++
				mu.Unlock()
				return nil
			}, eventual.HandleOptions{}); err != nil {
				t.Fatal(err)
			}
			return p
		}
		return seamtest.RaceRun{
			Work: func(ctx context.Context, e *integration.Env) error {
				_, err := w.processor(t, e, patterntest.Crashy()).Replay(ctx, byReason)
				return err
			},
			Compete: func(ctx context.Context, kind string, _ *http.Request) error {
				if kind == seamtest.Insert {
					_, err := w.processor(t, env, patterntest.Crashy()).Replay(ctx, byReason)
					return err
				}
				_, err := worker().Drain(ctx)
				return err
			},
			Check: func(t *testing.T, kind string, err error) {
				if err != nil && !errors.Is(err, entity.ErrOutcomeUnknown) {
					t.Errorf("Replay beside a %q: %v", kind, err)
				}
				ctx := t.Context()
				p := worker()
				for range 100 {
					if _, err := p.Replay(ctx, byReason); err != nil {
						t.Fatal(err)
					}
					if count(t, w.qs[0].Poison) == 0 {
						break
					}
					time.Sleep(200 * time.Millisecond) // copies hidden by a Replay reappear
				}
				if _, err := p.Drain(ctx); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				defer mu.Unlock()
				if ran["u1"] == 0 || ran["u2"] == 0 {
					t.Errorf("ran %v, want u1 and u2", ran)
				}
				if n := count(t, w.qs[0].Poison) + count(t, w.qs[0].Work); n != 0 {
					t.Errorf("%d messages left", n)
				}
				if records := blobNames(t, env.BlobService.ServiceClient().NewContainerClient(w.blobs)); len(records) != 0 {
					t.Errorf("records left: %v", records)
				}
			},
		}
	}})
}
