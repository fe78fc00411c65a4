package eventual_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// reviveWorld is a table holding one set-aside intent, "x" in partition
// "a", and the queue its message goes to.
type reviveWorld struct {
	accounts *entity.Table[Account]
	qs       []eventual.Queue
}

func newReviveWorld(t *testing.T) reviveWorld {
	t.Helper()
	w := reviveWorld{accounts: patterntest.Table[Account](t, env), qs: patterntest.Queues(t, env, 1)}
	m, err := noteKind.Message(Note{"revive me"})
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"PartitionKey": "a", "RowKey": eventual.UnsendablePrefix + "x",
		"Reason": "by hand", "SetAside": "2024-05-01T11:00:00.0000000Z", "SetAside@odata.type": "Edm.DateTime"}
	for k, v := range intentProps(noteKind.Name(), "x", "", m.Payload) {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.TableService.NewClient(w.accounts.Name()).AddEntity(context.Background(), b, nil); err != nil {
		t.Fatal(err)
	}
	return w
}

// outbox is an Outbox over w's table and queue through e's clients.
func (w reviveWorld) outbox(t *testing.T, e *integration.Env) *eventual.Outbox[Account] {
	t.Helper()
	p, err := eventual.New(patterntest.SameQueues(t, e, w.qs), nil, patterntest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	o, err := eventual.NewOutbox(p, patterntest.View[Account](t, e, w.accounts), eventual.OutboxConfig{Grace: eventual.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// rows counts w's intent rows of "x" and its set-aside rows, read raw; an
// intent row must not keep the set-aside reason.
func (w reviveWorld) rows(t *testing.T) (intents, setAside int) {
	t.Helper()
	for _, r := range rawRows(t, w.accounts) {
		switch r.rk() {
		case eventual.OutboxPrefix + "x":
			intents++
			if r["Reason"] != nil || r["SetAside"] != nil {
				t.Errorf("the revived intent keeps its set-aside properties: %v", r)
			}
		case eventual.UnsendablePrefix + "x":
			setAside++
		}
	}
	return intents, setAside
}

// Revive killed at each of its requests, before it is sent and after the
// service executed it, and run again by a fresh Outbox: the intent ends
// waiting exactly once and the set-aside row is gone (read raw); the
// second Revive reports ErrNotFound only when the first one's transaction
// was applied.
func TestReviveSurvivesACrashAtEveryRequest(t *testing.T) {
	t.Parallel()
	crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		w := newReviveWorld(t)
		return crashtest.Run{
			Work: func(ctx context.Context, e *integration.Env) error {
				return w.outbox(t, e).Revive(ctx, "a", "x")
			},
			Crashed: func(t *testing.T, _ int) {
				// The transaction moves the row whole, or not at all.
				if intents, setAside := w.rows(t); intents+setAside != 1 {
					t.Errorf("after the crash: %d intents, %d set-aside rows; want one of them", intents, setAside)
				}
			},
			Recover: func(ctx context.Context) error {
				_, before := w.rows(t)
				err := w.outbox(t, env).Revive(ctx, "a", "x")
				if before == 0 && errors.Is(err, entity.ErrNotFound) {
					return nil // revived by the crashed run
				}
				return err
			},
			Check: func(t *testing.T) {
				if intents, setAside := w.rows(t); intents != 1 || setAside != 0 {
					t.Errorf("%d intents, %d set-aside rows; want 1, 0", intents, setAside)
				}
			},
		}
	}})
}

// Revive with the reply of each of its requests lost and, inside azcore's
// retry window, another process working on the same rows: a second Revive
// of the same intent (seamtest.Insert: it inserts the intent), or a Relay
// that sends the revived intent and deletes it (seamtest.Delete). A Revive
// whose transaction was executed reports success or ErrOutcomeUnknown,
// never a refusal; the set-aside row is gone and the intent is waiting
// once, or was relayed (read raw).
func TestReviveBesideAnotherWriter(t *testing.T) {
	t.Parallel()
	seamtest.EveryReply(t, env, seamtest.Race{Parallel: 8, Competitors: []string{seamtest.Insert, seamtest.Delete}, Prepare: func(t *testing.T) seamtest.RaceRun {
		w := newReviveWorld(t)
		batchLost, relayed := false, false
		return seamtest.RaceRun{
			Work: func(ctx context.Context, e *integration.Env) error {
				return w.outbox(t, e).Revive(ctx, "a", "x")
			},
			Compete: func(ctx context.Context, kind string, req *http.Request) error {
				batchLost = req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "$batch")
				other := w.outbox(t, env)
				if kind == seamtest.Insert {
					return other.Revive(ctx, "a", "x")
				}
				n, err := other.Relay(ctx, "a")
				relayed = n > 0
				return err
			},
			Check: func(t *testing.T, kind string, err error) {
				t.Logf("Revive: %v", err)
				if batchLost {
					seamtest.Truthful(t, "Revive", err, true)
				} else if err != nil && !errors.Is(err, entity.ErrNotFound) && !errors.Is(err, entity.ErrOutcomeUnknown) {
					t.Errorf("Revive: %v", err)
				}
				intents, setAside := w.rows(t)
				if setAside != 0 || intents+btoi(relayed) != 1 {
					t.Errorf("%d intents, %d set-aside rows, relayed %v; want the intent waiting once or relayed", intents, setAside, relayed)
				}
			},
		}
	}})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
