package eventual_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

func isBatch(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/$batch") }

// TestSubmitLostReplyWithARelayInTheWindow: Submit's transaction is
// applied and its reply lost; inside azcore's retry window a Relay (no
// grace) sends the intent and deletes it. The resend then applies the
// transaction again — the intent is gone, the merge is idempotent — and
// Submit returns nil and sends a second copy of the message, with the same
// id. Once counts the raise exactly once; no intent is left (read back
// with raw clients).
func TestSubmitLostReplyWithARelayInTheWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pr := newPayroll(t)
	f := faults.New(faults.Config{})
	_, clean := pr.on(t, env, patterntest.Fast())
	relayed := 0
	f.LoseNextThen(1, isBatch, func(*http.Request) {
		n, err := clean.Relay(ctx, "Sales")
		if err != nil {
			t.Error(err)
		}
		relayed = n
	})
	_, lossy := pr.on(t, env.With(f), patterntest.Fast())
	if err := pr.raise(ctx, lossy); err != nil && !errors.Is(err, entity.ErrOutcomeUnknown) {
		t.Fatalf("Submit = %v, want nil or ErrOutcomeUnknown", err)
	}
	if f.Stats().LostReplies != 1 || relayed != 1 {
		t.Fatalf("lost %d replies, relayed %d in the window; want 1 and 1", f.Stats().LostReplies, relayed)
	}
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := pr.recover(dctx, t); err != nil {
		t.Fatal(err)
	}
	if !pr.check(t) {
		t.Error("the raise was not committed")
	}
	if ks := rawKeys(t, pr.emps); len(ks) != 1 {
		t.Errorf("the partition holds %v", ks)
	}
}

// TestSubmitLostReplyWithAWriterInTheWindow: Submit's transaction is
// applied and its reply lost; inside the retry window another writer
// replaces the employee. The resend fails at the intent's insert (the
// first try wrote it): Submit reports success — the change was applied —
// not a conflict. The other writer's salary stands, and the raise is
// counted once.
func TestSubmitLostReplyWithAWriterInTheWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pr := newPayroll(t)
	f := faults.New(faults.Config{})
	f.LoseNextThen(1, isBatch, func(*http.Request) {
		if err := pr.emps.Upsert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000123", Name: "Jones", Salary: 3000}, entity.Replace); err != nil {
			t.Error(err)
		}
	})
	_, lossy := pr.on(t, env.With(f), patterntest.Fast())
	if err := pr.raise(ctx, lossy); err != nil {
		t.Fatalf("Submit = %v, want nil: the transaction was applied", err)
	}
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := pr.recover(dctx, t); err != nil {
		t.Fatal(err)
	}
	rows := rawRows(t, pr.emps)
	if len(rows) != 1 || rows[0]["Salary"] != "3000" {
		t.Errorf("the partition holds %v, want the employee with the other writer's salary", rows)
	}
	d, err := pr.depts.Get(ctx, "Sales", "dept")
	if err != nil || d.Archived != 1 {
		t.Errorf("%d raises counted (%v), want 1", d.Archived, err)
	}
}

// relayWorld is an outbox table whose partitions hold intents left by
// writers that died: "a" one that can never be sent by a processor
// without a container, "b" and "c" one each that can.
type relayWorld struct {
	accounts *entity.Table[Account]
	qs       []eventual.Queue
	bigID    string
}

func newRelayWorld(t *testing.T) relayWorld {
	w := relayWorld{accounts: patterntest.Table[Account](t, env), qs: patterntest.Queues(t, env, 1), bigID: "a-big"}
	big, _ := json.Marshal(Note{strings.Repeat("n", 50<<10)})
	rawIntent(t, w.accounts, "a", w.bigID, intentProps(noteKind.Name(), w.bigID, "", big))
	for _, pk := range []string{"b", "c"} {
		rawIntent(t, w.accounts, pk, "to-"+pk, intentProps(noteKind.Name(), "to-"+pk, "", []byte(`{"text":"`+pk+`"}`)))
	}
	return w
}

func (w relayWorld) outbox(t testing.TB, e *integration.Env) *eventual.Outbox[Account] {
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

// relay runs Relay and returns its error unless every failure is an
// intent set aside.
func relay(ctx context.Context, o *eventual.Outbox[Account], partitions ...string) error {
	_, err := o.Relay(ctx, partitions...)
	for _, e := range unjoin(err) {
		if !errors.Is(e, eventual.ErrUnsendable) {
			return err
		}
	}
	return nil
}

// sentIDs receives the messages of the world's queue (raw) and returns
// their envelope ids, sorted.
func (w relayWorld) sentIDs(t testing.TB) []string {
	var ids []string
	for _, m := range rawMessages(t, w.qs[0].Work) {
		var env struct{ ID string }
		if err := json.Unmarshal([]byte(decodeB64(t, *m.MessageText)), &env); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, env.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestRelayCrashAtEveryStep kills Relay after each of its requests (the
// scan, a's set-aside transaction, b's and c's enqueue and delete). At
// every instant a sendable intent is in its partition or in the queue,
// and the unsendable one is an intent or a set-aside row, never both or
// neither; a fresh Relay then leaves only a's set-aside row, and b's and
// c's messages are in the queue (a crash between enqueue and delete sends
// a second copy, with the same id).
func TestRelayCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		w := newRelayWorld(t)
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				return relay(ctx, w.outbox(t, kenv))
			},
			Crashed: func(t *testing.T, passed int) {
				keys := rawKeys(t, w.accounts)
				queued := count(t, w.qs[0].Work)
				has := func(k string) bool { return slices.Contains(keys, k) }
				if has("a/"+eventual.OutboxPrefix+w.bigID) == has("a/"+eventual.UnsendablePrefix+w.bigID) {
					t.Errorf("after %d requests a's intent is %v", passed, keys)
				}
				for _, pk := range []string{"b", "c"} {
					if !has(pk+"/"+eventual.OutboxPrefix+"to-"+pk) && queued == 0 {
						t.Errorf("after %d requests %s's message is neither an intent nor queued", passed, pk)
					}
				}
			},
			Recover: func(ctx context.Context) error { return relay(ctx, w.outbox(t, env)) },
			Check: func(t *testing.T) {
				if keys := rawKeys(t, w.accounts); !slices.Equal(keys, []string{"a/" + eventual.UnsendablePrefix + w.bigID}) {
					t.Errorf("table holds %v, want a's set-aside row only", keys)
				}
				ids := slices.Compact(w.sentIDs(t))
				if !slices.Equal(ids, []string{"to-b", "to-c"}) {
					t.Errorf("queue holds %v, want to-b and to-c", ids)
				}
			},
		}
	}})
	if n != 6 {
		t.Errorf("Relay made %d requests, want 6 (scan, set aside, 2 × enqueue and delete)", n)
	}
}

// TestRelaySetAsideLostReply: the transaction that sets a's intent aside
// is applied and its reply lost, and a second Relay runs inside the retry
// window (it finds nothing left to do). The resend fails, the read-back
// tells the intent was set aside: Relay reports it so, once.
func TestRelaySetAsideLostReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newRelayWorld(t)
	f := faults.New(faults.Config{})
	clean := w.outbox(t, env)
	f.LoseNextThen(1, isBatch, func(*http.Request) {
		if err := relay(ctx, clean, "a"); err != nil {
			t.Error(err)
		}
	})
	_, err := w.outbox(t, env.With(f)).Relay(ctx, "a")
	if f.Stats().LostReplies != 1 {
		t.Fatal("no reply was lost")
	}
	var re *eventual.RelayError
	if !errors.As(err, &re) || !re.SetAside || re.ID != w.bigID || len(unjoin(err)) != 1 {
		t.Errorf("Relay = %v, want a's intent reported set aside", err)
	}
	if keys := rawKeys(t, w.accounts); !slices.Contains(keys, "a/"+eventual.UnsendablePrefix+w.bigID) || slices.Contains(keys, "a/"+eventual.OutboxPrefix+w.bigID) {
		t.Errorf("table holds %v", keys)
	}
}

// TestRelayLostDeleteReplyWithANewIntentInTheWindow: Relay sends b's
// message and deletes its intent; the delete's reply is lost, and inside
// the retry window a writer commits a new intent with the same message id
// (and dies before sending it). The resend must not delete the new intent
// unsent: Relay deletes on the ETag it read, so the new intent stays, and
// the next Relay sends it.
func TestRelayLostDeleteReplyWithANewIntentInTheWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newRelayWorld(t)
	f := faults.New(faults.Config{})
	f.LoseNextThen(1, isBatch, func(*http.Request) {
		rawIntent(t, w.accounts, "b", "to-b", intentProps(noteKind.Name(), "to-b", "", []byte(`{"text":"second"}`)))
	})
	n, err := w.outbox(t, env.With(f)).Relay(ctx, "b")
	if n != 1 || err != nil || f.Stats().LostReplies != 1 {
		t.Fatalf("Relay = %d, %v (lost %d); want 1, nil", n, err, f.Stats().LostReplies)
	}
	if keys := rawKeys(t, w.accounts); !slices.Contains(keys, "b/"+eventual.OutboxPrefix+"to-b") {
		t.Fatalf("table holds %v: the new intent was deleted unsent", keys)
	}
	if n, err := w.outbox(t, env).Relay(ctx, "b"); n != 1 || err != nil {
		t.Errorf("next Relay = %d, %v; want 1", n, err)
	}
	msgs := rawMessages(t, w.qs[0].Work)
	if len(msgs) != 2 || !strings.Contains(decodeB64(t, *msgs[1].MessageText), `"payload":{"text":"second"}`) {
		t.Errorf("queue holds %d messages, want the first and the second intent's", len(msgs))
	}
}

// poisonWorld is a queue holding one message of a kind nobody handles,
// and a processor configuration with a container for its record.
type poisonWorld struct {
	qs       []eventual.Queue
	blobs    string // container name
	original string
}

func newPoisonWorld(t *testing.T) poisonWorld {
	w := poisonWorld{qs: patterntest.Queues(t, env, 1), original: `{"kind":"Unknown.v9","id":"u1","created":"` + recentCreated + `","payload":{"n":1}}`}
	c := env.Container(t)
	w.blobs = c.URL()[strings.LastIndex(c.URL(), "/")+1:]
	if _, err := w.qs[0].Work.EnqueueMessage(context.Background(), w.original, nil); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w poisonWorld) processor(t testing.TB, e *integration.Env, cfg eventual.Config) *eventual.Processor {
	p, err := eventual.New(patterntest.SameQueues(t, e, w.qs), e.BlobService.ServiceClient().NewContainerClient(w.blobs), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPoisonCrashAtEveryStep kills the worker that poisons a message after
// each of its requests (receive, copy to the poison queue, record blob,
// delete). A fresh worker then finishes: the work queue is empty, every
// copy in the poison queue is the original byte for byte, at least one
// has a record (a crash after the copy leaves a second copy, poisoned
// again with its record), and every record names a copy in the poison
// queue.
func TestPoisonCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		w := newPoisonWorld(t)
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				cfg := patterntest.Crashy()
				cfg.Workers, cfg.BatchSize = 1, 1
				done := make(chan struct{}, 1)
				cfg.Hooks.Outcome = func(o eventual.Outcome) {
					if o.Result == eventual.Poison {
						done <- struct{}{}
					}
				}
				p := w.processor(t, kenv, cfg)
				rctx, cancel := context.WithCancel(ctx)
				ran := make(chan error, 1)
				go func() { ran <- p.Run(rctx) }()
				select {
				case <-done:
				case <-ctx.Done():
				}
				cancel()
				return <-ran
			},
			Recover: func(ctx context.Context) error {
				_, err := w.processor(t, env, patterntest.Crashy()).Drain(ctx)
				return err
			},
			Check: func(t *testing.T) {
				if n := count(t, w.qs[0].Work); n != 0 {
					t.Errorf("%d messages left in the work queue", n)
				}
				copies := rawPeek(t, w.qs[0].Poison)
				ids := map[string]bool{}
				for _, c := range copies {
					ids[*c.MessageID] = true
					if *c.MessageText != w.original {
						t.Errorf("poison copy %q, want the original", *c.MessageText)
					}
				}
				records := blobNames(t, env.BlobService.ServiceClient().NewContainerClient(w.blobs))
				for _, r := range records {
					if !ids[r[strings.LastIndex(r, "/")+1:]] {
						t.Errorf("record %s names no poison copy", r)
					}
				}
				if len(copies) == 0 || len(records) == 0 {
					t.Errorf("%d poison copies, %d records; want at least one of each", len(copies), len(records))
				}
			},
		}
	}})
	if n < 4 {
		t.Errorf("poisoning made %d requests, want at least 4", n)
	}
}

// TestReplayCrashAtEveryStep poisons two messages (records kept), then
// kills Replay — filtered by reason, so it reads the records — after each
// of its requests. A fresh Replay and a worker that now handles the kind
// finish: each message ran, and both queues are empty. A record is left
// only by a crash between a poison copy's delete and its record's (it
// names a message no longer in the poison queue).
func TestReplayCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	kind := eventual.NewKind[json.RawMessage]("Unknown.v9")
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		ctx := context.Background()
		w := newPoisonWorld(t)
		second := strings.Replace(w.original, `"u1"`, `"u2"`, 1)
		if _, err := w.qs[0].Work.EnqueueMessage(ctx, second, nil); err != nil {
			t.Fatal(err)
		}
		// Poisoned with Fast's long visibility: a message must not reappear
		// while it is poisoned (and be poisoned twice) on a loaded machine;
		// the crashes are Replay's.
		if rep, err := w.processor(t, env, patterntest.Fast()).Drain(ctx); err != nil || rep.Poisoned != 2 {
			t.Fatalf("poisoning: %+v, %v", rep, err)
		}
		byReason := eventual.ReplayOptions{Filter: func(r eventual.PoisonRecord) bool { return r.Reason == eventual.ReasonUnknownKind }}
		var mu sync.Mutex
		ran := map[string]int{}
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				n, err := w.processor(t, kenv, patterntest.Crashy()).Replay(ctx, byReason)
				if err == nil && n != 2 {
					return fmt.Errorf("Replay moved %d, want 2", n)
				}
				return err
			},
			Recover: func(ctx context.Context) error {
				p := w.processor(t, env, patterntest.Crashy())
				if err := eventual.Handle(p, kind, func(ctx context.Context, _ json.RawMessage) error {
					d, _ := eventual.DeliveryFrom(ctx)
					mu.Lock()
					ran[d.ID]++
					mu.Unlock()
					return nil
				}, eventual.HandleOptions{}); err != nil {
					return err
				}
				// Copies hidden by the killed Replay reappear after the
				// visibility timeout: replay until the poison queue is empty.
				for {
					if _, err := p.Replay(ctx, byReason); err != nil {
						return err
					}
					if n, err := patterntest.MessageCount(ctx, w.qs[0].Poison); err != nil || n == 0 {
						break
					}
					time.Sleep(200 * time.Millisecond)
				}
				_, err := p.Drain(ctx)
				return err
			},
			Check: func(t *testing.T) {
				mu.Lock()
				defer mu.Unlock()
				if ran["u1"] == 0 || ran["u2"] == 0 {
					t.Errorf("ran %v, want u1 and u2", ran)
				}
				if n := count(t, w.qs[0].Poison) + count(t, w.qs[0].Work); n != 0 {
					t.Errorf("%d messages left", n)
				}
				if records := blobNames(t, env.BlobService.ServiceClient().NewContainerClient(w.blobs)); len(records) > 1 {
					t.Errorf("records left: %v; a crash leaves at most one", records)
				}
			},
		}
	}})
	if n < 8 {
		t.Errorf("Replay made %d requests, want at least 8", n)
	}
}

// photoWorld sends a small message and one whose payload is claim-checked.
type photoWorld struct {
	qs    []eventual.Queue
	blobs string
	msgs  []eventual.Message
	mu    sync.Mutex
	ran   map[string]int
}

func newPhotoWorld(t *testing.T) *photoWorld {
	w := &photoWorld{qs: patterntest.Queues(t, env, 1), ran: map[string]int{}}
	c := env.Container(t)
	w.blobs = path.Base(c.URL())
	for i, size := range []int{10, 100 << 10} {
		m, err := photoKind.Message(Photo{Employee: fmt.Sprint(i), Data: strings.Repeat("x", size)})
		if err != nil {
			t.Fatal(err)
		}
		w.msgs = append(w.msgs, m)
	}
	return w
}

func (w *photoWorld) processor(t testing.TB, e *integration.Env, cfg eventual.Config) *eventual.Processor {
	cfg.EnqueueConcurrency = 1 // the same requests in the same order every run
	p, err := eventual.New(patterntest.SameQueues(t, e, w.qs), e.BlobService.ServiceClient().NewContainerClient(w.blobs), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := eventual.Handle(p, photoKind, func(_ context.Context, ph Photo) error {
		w.mu.Lock()
		w.ran[ph.Employee]++
		w.mu.Unlock()
		return nil
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *photoWorld) check(t *testing.T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ran["0"] == 0 || w.ran["1"] == 0 {
		t.Errorf("handled %v, want both messages", w.ran)
	}
	if n := count(t, w.qs[0].Work) + count(t, w.qs[0].Poison); n != 0 {
		t.Errorf("%d messages left", n)
	}
	if names := blobNames(t, env.BlobService.ServiceClient().NewContainerClient(w.blobs)); len(names) != 0 {
		t.Errorf("blobs left: %v", names)
	}
}

// TestEnqueueCrashAtEveryStep kills Enqueue of two messages, one of them
// claim-checked, after each of its requests (the blob, the two Put
// Message). The caller, seeing the error, enqueues them again from a
// fresh processor: each is handled, nothing is left in the queues, and
// the claim blob — unreferenced after a crash between the blob and its
// message — is deleted once its message is handled.
func TestEnqueueCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		w := newPhotoWorld(t)
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				return w.processor(t, kenv, patterntest.Fast()).Enqueue(ctx, w.msgs...)
			},
			Recover: func(ctx context.Context) error {
				p := w.processor(t, env, patterntest.Fast())
				if err := p.Enqueue(ctx, w.msgs...); err != nil {
					return err
				}
				_, err := p.Drain(ctx)
				return err
			},
			Check: w.check,
		}
	}})
	if n != 3 {
		t.Errorf("Enqueue made %d requests, want 3", n)
	}
}

// TestEnqueueLostReplyWithAWorkerInTheWindow: the Put Message of a
// claim-checked message is executed and its reply lost; inside the retry
// window a worker handles that message and deletes its blob. azcore's
// resend then leaves a second copy whose blob is gone: it counts as a copy
// of a message done, and the handler does not run twice.
func TestEnqueueLostReplyWithAWorkerInTheWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newPhotoWorld(t)
	f := faults.New(faults.Config{})
	f.LoseNextThen(1, func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages")
	}, func(*http.Request) {
		if rep, err := w.processor(t, env, patterntest.Fast()).Drain(ctx); err != nil || rep.Done != 1 {
			t.Errorf("drain in the window = %+v, %v", rep, err)
		}
	})
	if err := w.processor(t, env.With(f), patterntest.Fast()).Enqueue(ctx, w.msgs[1]); err != nil {
		t.Fatalf("Enqueue = %v", err)
	}
	if f.Stats().LostReplies != 1 {
		t.Fatal("no reply was lost")
	}
	if n := count(t, w.qs[0].Work); n != 1 {
		t.Fatalf("%d messages after the resend, want the second copy", n)
	}
	rep, err := w.processor(t, env, patterntest.Fast()).Drain(ctx)
	if err != nil || rep.Done != 1 {
		t.Fatalf("Drain = %+v, %v", rep, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ran["1"] != 1 {
		t.Errorf("the handler ran %d times, want 1", w.ran["1"])
	}
	if names := blobNames(t, env.BlobService.ServiceClient().NewContainerClient(w.blobs)); len(names) != 0 {
		t.Errorf("blobs left: %v", names)
	}
}
