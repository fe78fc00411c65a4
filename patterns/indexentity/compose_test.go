package indexentity_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// The caller's own messages (WriteOptions.Messages) in the transaction of
// a write: a Note per change, whose handler writes a row per message id
// into a table of its own, read back with a plain client.

// Note is the payload of the caller's message in these tests.
type Note struct {
	Text string `json:"text"`
}

var noteKind = eventual.NewKind[Note]("indexentity.test.Note.v1")

// Delivered is the row a Note's handler writes: partition "effects",
// RowKey the message's id.
type Delivered struct {
	PartitionKey string
	RowKey       string
	Text         string
}

func note(t testing.TB, id, text string) eventual.Message {
	t.Helper()
	m, err := noteKind.Message(Note{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	m.ID = id
	return m
}

// handleNotes registers the Note handler on p, writing into notes.
func handleNotes(t testing.TB, p *eventual.Processor, notes *entity.Table[Delivered]) {
	t.Helper()
	err := eventual.Handle(p, noteKind, func(ctx context.Context, n Note) error {
		d, ok := eventual.DeliveryFrom(ctx)
		if !ok {
			return errors.New("no delivery")
		}
		return eventual.Upsert(ctx, notes, &Delivered{PartitionKey: "effects", RowKey: d.ID, Text: n.Text})
	}, eventual.HandleOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUserMessageCrashAtEveryStep inserts an employee with a Note in the
// same transaction (and the message of its OtherPartition list), and
// kills the writer before and after each storage request in turn. After a
// fresh process relayed the outbox and drained the queue, the Note's
// effect is there exactly when the employee is, the list is exact and the
// drift checker finds nothing.
func TestUserMessageCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		w := newWorld(t, indexentity.OtherPartition, 1)
		w.seedRemote(t, "Jones")
		notes := patterntest.Table[Delivered](t, env)
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				s, _ := w.set(t, kenv, patterntest.Crashy(), indexentity.Config{})
				return s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000009", LastName: "Jones"},
					indexentity.WriteOptions{Messages: []eventual.Message{note(t, "hired-000009", "hired")}})
			},
			Recover: func(ctx context.Context) error {
				s, p := w.set(t, env, patterntest.Crashy(), indexentity.Config{Retry: hot})
				handleNotes(t, p, patterntest.View[Delivered](t, env, notes))
				if _, err := s.Relay(ctx); err != nil {
					return err
				}
				return patterntest.Drain(ctx, p, w.qs)
			},
			Check: func(t *testing.T) {
				inserted := rawGet(t, w.emps.Name(), "Sales", "000009") != nil
				effect := rawGet(t, notes.Name(), "effects", "hired-000009")
				if inserted != (effect != nil) {
					t.Errorf("employee inserted: %v; note's effect: %v", inserted, effect)
				}
				if effect != nil && effect["Text"] != "hired" {
					t.Errorf("note's effect: %v", effect)
				}
				w.check(t, "Jones")
			},
		}
	}})
	// the transaction, the two messages sent, the intents deleted.
	if n < 3 {
		t.Errorf("the scenario made %d requests, want at least 3", n)
	}
}

// TestUserMessageRefused: messages on a Set without a processor (no
// outbox), more than one WriteOptions, and an invalid message are refused
// with typed errors before any request; a Set of SamePartition indexes
// alone given a processor commits the caller's messages with the change.
func TestUserMessageRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	emps := patterntest.Table[Employee](t, env)
	plain, err := indexentity.New(emps, indexentity.Config{}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	e := &Employee{PartitionKey: "Sales", RowKey: "000001", LastName: "Jones"}
	msg := note(t, "n1", "hello")
	var ce *indexentity.ConfigError
	if err := plain.Insert(ctx, e, indexentity.WriteOptions{Messages: []eventual.Message{msg}}); !errors.As(err, &ce) || ce.Field != "WriteOptions.Messages" {
		t.Errorf("messages without an outbox: %v; want a *ConfigError on WriteOptions.Messages", err)
	}
	if err := plain.Delete(ctx, "Sales", "000001", "", indexentity.WriteOptions{}, indexentity.WriteOptions{}); !errors.As(err, &ce) || ce.Field != "WriteOptions" {
		t.Errorf("two WriteOptions: %v; want a *ConfigError on WriteOptions", err)
	}
	if rawGet(t, emps.Name(), "Sales", "000001") != nil {
		t.Error("a refused insert wrote the employee")
	}

	qs := patterntest.Queues(t, env, 1)
	p, err := eventual.New(qs, nil, patterntest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	notes := patterntest.Table[Delivered](t, env)
	handleNotes(t, p, notes)
	s, err := indexentity.New(emps, indexentity.Config{Processor: p}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	bad := msg
	bad.Payload = []byte("{not json")
	var me *eventual.MessageError
	if err := s.Insert(ctx, e, indexentity.WriteOptions{Messages: []eventual.Message{bad}}); !errors.As(err, &me) || !errors.Is(err, eventual.ErrInvalidMessage) {
		t.Errorf("an invalid message: %v; want an *eventual.MessageError matching ErrInvalidMessage", err)
	}
	if err := s.Insert(ctx, e, indexentity.WriteOptions{Messages: []eventual.Message{msg, msg}}); !errors.As(err, &me) {
		t.Errorf("two messages with one id: %v; want an *eventual.MessageError", err)
	}
	if rawGet(t, emps.Name(), "Sales", "000001") != nil {
		t.Error("a refused insert wrote the employee")
	}
	if err := s.Insert(ctx, e, indexentity.WriteOptions{Messages: []eventual.Message{msg}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Modify(ctx, "Sales", "000001", func(e *Employee) error { e.LastName = "Smith"; return nil }, entity.ModifyOptions{},
		indexentity.WriteOptions{Messages: []eventual.Message{note(t, "n2", "renamed")}}); err != nil {
		t.Fatal(err)
	}
	// A delete that finds nothing to delete commits nothing: its message
	// is never sent.
	if err := s.Delete(ctx, "Sales", "000404", "", indexentity.WriteOptions{Messages: []eventual.Message{note(t, "n404", "never")}}); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("deleting a missing employee: %v; want entity.ErrNotFound", err)
	}
	if err := patterntest.Drain(ctx, p, qs); err != nil {
		t.Fatal(err)
	}
	if got := rawGet(t, notes.Name(), "effects", "n404"); got != nil {
		t.Errorf("the message of a delete that deleted nothing was delivered: %v", got)
	}
	for id, text := range map[string]string{"n1": "hello", "n2": "renamed"} {
		if got := rawGet(t, notes.Name(), "effects", id); got == nil || got["Text"] != text {
			t.Errorf("note %s's effect: %v, want text %q", id, got, text)
		}
	}
	if l := rawGet(t, emps.Name(), "Sales", "lastname_Smith"); l == nil || l["Members"] != "000001\n" {
		t.Errorf("Smith's list: %v", l)
	}
	noDrift(t, s)
}
