package denormalize_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// The caller's own messages (WriteOptions.Messages) in the transaction of
// a write: a Note per change, handled by noteHandler, which records every
// copy of a message it runs (deliveries) and applies its effect once per
// message id (effects). Both are read back with plain clients.

// Note is the payload of the caller's message in these tests.
type Note struct {
	Text string `json:"text"`
}

var noteKind = eventual.NewKind[Note]("denormalize.test.Note.v1")

// Delivered is a row a Note's handler writes: partition "effects" (RowKey
// the message's id, written once per id) or "deliveries" (RowKey the
// message's id and the queue's id of the copy run).
type Delivered struct {
	PartitionKey string
	RowKey       string
	Text         string
}

// note returns the caller's message with id and text.
func note(t testing.TB, id, text string) eventual.Message {
	t.Helper()
	m, err := noteKind.Message(Note{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	m.ID = id
	return m
}

// withNotes is the WriteOptions of one message.
func withNotes(ms ...eventual.Message) denormalize.WriteOptions {
	return denormalize.WriteOptions{Messages: ms}
}

// handleNotes registers the Note handler on p, writing into notes.
func handleNotes(t testing.TB, p *eventual.Processor, notes *entity.Table[Delivered]) {
	t.Helper()
	err := eventual.Handle(p, noteKind, func(ctx context.Context, n Note) error {
		if len(n.Text) > 100 {
			n.Text = n.Text[:100] // a string property holds 32K UTF-16 code units
		}
		d, ok := eventual.DeliveryFrom(ctx)
		if !ok {
			return errors.New("no delivery")
		}
		if err := eventual.Upsert(ctx, notes, &Delivered{PartitionKey: "deliveries", RowKey: d.ID + " " + d.MessageID, Text: n.Text}); err != nil {
			return err
		}
		return eventual.Insert(ctx, notes, &Delivered{PartitionKey: "effects", RowKey: d.ID, Text: n.Text})
	}, eventual.HandleOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// delivered reads, with a plain client, the effects of messages (id →
// text) and how many copies of each were run.
func delivered(t testing.TB, notes string) (effects map[string]string, copies map[string]int) {
	t.Helper()
	effects, copies = map[string]string{}, map[string]int{}
	for _, row := range rawRows(t, notes, "effects", "") {
		effects[row["RowKey"].(string)], _ = row["Text"].(string)
	}
	for _, row := range rawRows(t, notes, "deliveries", "") {
		id, _, _ := strings.Cut(row["RowKey"].(string), " ")
		copies[id]++
	}
	return effects, copies
}

// intentsLeft lists the outbox intents left in partition pk of table,
// read with a plain client.
func intentsLeft(t testing.TB, table, pk string) []string {
	t.Helper()
	var ids []string
	for _, row := range rawRows(t, table, pk, eventual.OutboxPrefix) {
		ids = append(ids, row["RowKey"].(string))
	}
	return ids
}

// queued counts the messages of a work queue and its poison queue.
func queued(t testing.TB, qs []eventual.Queue) (work, poison int) {
	t.Helper()
	for _, q := range qs {
		for i, c := range []*azqueue.QueueClient{q.Work, q.Poison} {
			n, err := patterntest.MessageCount(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				work += n
			} else {
				poison += n
			}
		}
	}
	return work, poison
}

// queuedIDs peeks, with a plain client, at the messages waiting in the
// work queues (none is being handled) and returns their envelopes' ids.
func queuedIDs(t testing.TB, qs []eventual.Queue) []string {
	t.Helper()
	var ids []string
	n := int32(32)
	for _, q := range qs {
		resp, err := q.Work.PeekMessages(context.Background(), &azqueue.PeekMessagesOptions{NumberOfMessages: &n})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range resp.Messages {
			text := *m.MessageText
			body, err := base64.StdEncoding.DecodeString(text)
			if err != nil {
				body = []byte(text)
			}
			var env struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(body, &env); err != nil {
				t.Fatalf("queued message %q: %v", text, err)
			}
			ids = append(ids, env.ID)
		}
	}
	return ids
}

// sameGuide is the guide's partition (a SamePartition relation) with a
// processor, so that writes may commit messages: its Copies built from
// e's clients, its queue and the table the Notes land in.
type sameGuide struct {
	guide
	qs    []eventual.Queue
	notes *entity.Table[Delivered]
}

func newSameGuide(t testing.TB) sameGuide {
	t.Helper()
	g := newGuide(t, env, denormalize.Config{})
	return sameGuide{guide: g, qs: patterntest.Queues(t, env, 1), notes: patterntest.Table[Delivered](t, env)}
}

// over returns the processor and a Copies with clients from e.
func (g sameGuide) over(t testing.TB, e *integration.Env) (*eventual.Processor, *denormalize.Copies[Department, Employee]) {
	t.Helper()
	p, err := eventual.New(patterntest.SameQueues(t, e, g.qs), nil, patterntest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	c, err := denormalize.New(patterntest.View[Department](t, e, g.emps), patterntest.View[Employee](t, e, g.emps), denormalize.Config{Processor: p, Outbox: eventual.OutboxConfig{Grace: -1}}, managerRel())
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

// recover relays what a crashed writer left and drains the queue with a
// fresh processor and Copies over healthy clients, the Notes handled.
func (g sameGuide) recover(ctx context.Context, t testing.TB) error {
	p, c := g.over(t, env)
	handleNotes(t, p, g.notes)
	if _, err := c.Relay(ctx); err != nil {
		return err
	}
	return patterntest.Drain(ctx, p, g.qs)
}

// drainNotes is directory.recover with the Notes handled.
func (d directory) drainNotes(ctx context.Context, t testing.TB, notes *entity.Table[Delivered]) error {
	p, managers, centers := d.over(t, env, patterntest.Fast(), denormalize.Config{})
	handleNotes(t, p, notes)
	if _, err := managers.Relay(ctx); err != nil {
		return err
	}
	if _, err := centers.Relay(ctx); err != nil {
		return err
	}
	return patterntest.Drain(ctx, p, d.qs)
}

// TestUserMessages commits a message of the caller's with every write of
// a SamePartition Copies and of an OtherPartition one whose targets are
// in another table: each is delivered once the writes are done, and no
// intent is left. A change that leaves every copy alone (one operation
// without messages) commits its message too; a DeleteSource that finds
// no source writes nothing and sends nothing.
func TestUserMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("SamePartition", func(t *testing.T) {
		t.Parallel()
		g := newSameGuide(t)
		seedGuide(t, g.guide)
		_, c := g.over(t, env)
		if err := c.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(3), Name: "Cy", Phone: "3"}, withNotes(note(t, "insert-source", "hired Cy"))); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { e.Phone = "new"; return nil }, entity.ModifyOptions{}, withNotes(note(t, "modify-source", "Jeff's phone"))); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { e.Title = "boss"; return nil }, entity.ModifyOptions{}, withNotes(note(t, "modify-uncopied", "Jeff's title"))); err != nil {
			t.Fatal(err)
		}
		if err := c.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "dept C", ManagerID: empID(3)}, withNotes(note(t, "insert-target", "dept C"))); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ModifyTarget(ctx, "Sales", "dept C", func(d *Department) error { d.ManagerID = empID(2); return nil }, entity.ModifyOptions{}, withNotes(note(t, "modify-target", "dept C's manager"))); err != nil {
			t.Fatal(err)
		}
		if err := c.DeleteSource(ctx, "Sales", empID(3), withNotes(note(t, "delete-source", "Cy left"))); err != nil {
			t.Fatal(err)
		}
		// A delete that finds nothing to delete writes nothing, and sends
		// nothing.
		if err := c.DeleteSource(ctx, "Sales", empID(3), withNotes(note(t, "delete-again", "Cy left again"))); err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := g.recover(rctx, t); err != nil {
			t.Fatal(err)
		}
		effects, copies := delivered(t, g.notes.Name())
		want := map[string]string{"insert-source": "hired Cy", "modify-source": "Jeff's phone", "modify-uncopied": "Jeff's title", "insert-target": "dept C", "modify-target": "dept C's manager", "delete-source": "Cy left"}
		for id, text := range want {
			if effects[id] != text || copies[id] != 1 {
				t.Errorf("message %s: effect %q, %d copies run; want %q once", id, effects[id], copies[id], text)
			}
		}
		if len(effects) != len(want) {
			t.Errorf("effects %v, want %v", effects, want)
		}
		if left := intentsLeft(t, g.emps.Name(), "Sales"); len(left) != 0 {
			t.Errorf("intents left: %v", left)
		}
		rawCheckGuide(t, g.emps.Name())
	})

	t.Run("OtherPartition", func(t *testing.T) {
		t.Parallel()
		d := newDirectory(t, env)
		d.seed(t, "Sales", 2, "CC-1")
		notes := patterntest.Table[Delivered](t, env)
		_, managers, _ := d.over(t, env, patterntest.Fast(), denormalize.Config{})
		if _, err := managers.ModifySource(ctx, "Sales", empID(0), func(e *Employee) error { e.Phone = "new"; return nil }, entity.ModifyOptions{}, withNotes(note(t, "modify-source", "phone"))); err != nil {
			t.Fatal(err)
		}
		if _, err := managers.ModifyTarget(ctx, "departments", "Sales", func(e *Entry) error { e.Manager = empID(1); return nil }, entity.ModifyOptions{}, withNotes(note(t, "modify-target", "manager"))); err != nil {
			t.Fatal(err)
		}
		// A target write whose enqueue fails leaves its intent in the
		// targets' table (another table than the sources'): Relay of a
		// fresh Copies sends it.
		noQueue := faults.New(faults.Config{FailBefore: 1, Match: func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/messages") }})
		_, cut, _ := d.over(t, env.With(noQueue), patterntest.Fast(), denormalize.Config{})
		if err := cut.InsertTarget(ctx, &Entry{PartitionKey: "departments", RowKey: "Mkt", Manager: empID(0)}, withNotes(note(t, "insert-target", "Mkt"))); err != nil {
			t.Fatal(err)
		}
		if left := intentsLeft(t, d.entries.Name(), "departments"); len(left) != 1 {
			t.Fatalf("intents in the targets' table after a failed enqueue: %v, want 1", left)
		}
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := d.drainNotes(rctx, t, notes); err != nil {
			t.Fatal(err)
		}
		effects, copies := delivered(t, notes.Name())
		want := map[string]string{"modify-source": "phone", "modify-target": "manager", "insert-target": "Mkt"}
		for id, text := range want {
			if effects[id] != text || copies[id] != 1 {
				t.Errorf("message %s: effect %q, %d copies run; want %q once", id, effects[id], copies[id], text)
			}
		}
		if left := intentsLeft(t, d.entries.Name(), "departments"); len(left) != 0 {
			t.Errorf("intents left in the targets' table: %v", left)
		}
		if left := intentsLeft(t, d.emps.Name(), "Sales"); len(left) != 0 {
			t.Errorf("intents left in the sources' table: %v", left)
		}
		rawCheckDirectory(t, d)
	})
}

// TestUserMessageConfig: messages need an outbox, so a Copies made
// without a processor refuses them with a *ConfigError before any
// request, as it does a second WriteOptions.
func TestUserMessageConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	g := newGuide(t, env, denormalize.Config{})
	seedGuide(t, g)
	c := g.over(t, env.With(meter.Policy()), denormalize.Config{}).copies // no processor
	msg := withNotes(note(t, "n1", "x"))
	writes := map[string]func(opts ...denormalize.WriteOptions) error{
		"InsertSource": func(opts ...denormalize.WriteOptions) error {
			return c.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(9), Name: "N"}, opts...)
		},
		"ModifySource": func(opts ...denormalize.WriteOptions) error {
			_, err := c.ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { e.Edits++; return nil }, entity.ModifyOptions{}, opts...)
			return err
		},
		"DeleteSource": func(opts ...denormalize.WriteOptions) error { return c.DeleteSource(ctx, "Sales", empID(2), opts...) },
		"InsertTarget": func(opts ...denormalize.WriteOptions) error {
			return c.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "dept X"}, opts...)
		},
		"ModifyTarget": func(opts ...denormalize.WriteOptions) error {
			_, err := c.ModifyTarget(ctx, "Sales", "dept Sales", func(d *Department) error { d.Budget++; return nil }, entity.ModifyOptions{}, opts...)
			return err
		},
	}
	for name, w := range writes {
		for _, opts := range [][]denormalize.WriteOptions{{msg}, {{}, {}}} {
			before := meter.Snapshot()
			err := w(opts...)
			var ce *denormalize.ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, entity.ErrInvalid) {
				t.Errorf("%s with %d WriteOptions on a Copies without processor: %v; want a *ConfigError", name, len(opts), err)
			} else if len(opts) == 1 && ce.Field != "WriteOptions.Messages" || len(opts) == 2 && ce.Field != "WriteOptions" {
				t.Errorf("%s: %v names %s", name, err, ce.Field)
			}
			if n := meter.Snapshot().Sub(before).Total(); n != 0 {
				t.Errorf("%s: %d requests sent before the refusal", name, n)
			}
		}
		// Without messages, WriteOptions is harmless.
		if err := w(denormalize.WriteOptions{}); err != nil {
			t.Errorf("%s with empty WriteOptions: %v", name, err)
		}
	}
	rawCheckGuide(t, g.emps.Name())
}

// envelopeSize is the size of a message's JSON envelope as eventual
// writes it (its creation time has a fixed width).
func envelopeSize(t testing.TB, m eventual.Message) int {
	t.Helper()
	b, err := json.Marshal(struct {
		Kind    string          `json:"kind"`
		ID      string          `json:"id"`
		Created string          `json:"created"`
		Payload json.RawMessage `json:"payload"`
	}{m.Kind, m.ID, "2024-05-01T10:00:00.0000000Z", m.Payload})
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// sized returns a Note message whose envelope takes n bytes of JSON.
func sized(t testing.TB, id string, n int) eventual.Message {
	t.Helper()
	m := note(t, id, "")
	m.Payload = json.RawMessage(`{"text":"` + strings.Repeat("x", n-envelopeSize(t, m)) + `"}`)
	if got := envelopeSize(t, m); got != n {
		t.Fatalf("envelope of %d bytes, want %d", got, n)
	}
	return m
}

// largestEnvelope is the longest envelope whose base64 text fits a queue
// message with eventual's poison reserve.
const largestEnvelope = (eventual.MaxMessageBytes - eventual.PoisonReserve) / 4 * 3

// TestUserMessageRefused: a message of the caller's that could not be
// sent — its envelope a byte longer than fits a queue message once
// base64-encoded (the processor has no blob container: eventual's Enqueue
// refuses it too), an invalid kind, id or payload, an id given twice, more
// messages than the transaction holds — refuses the write with a
// *MessageError before any request: nothing is written, no intent, no
// message. One of exactly the largest size is committed and delivered.
// Messages that fit alone but not beside the change's copies are refused
// after the reads, before the transaction.
func TestUserMessageRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newSameGuide(t)
	seedGuide(t, g.guide)
	meter := cost.NewMeter()
	p, c := g.over(t, env.With(meter.Policy()))

	big := sized(t, "too-big", largestEnvelope+1)
	if err := p.Enqueue(ctx, big); !errors.Is(err, eventual.ErrTooLarge) {
		t.Fatalf("eventual's Enqueue of an envelope of %d bytes: %v, want ErrTooLarge", largestEnvelope+1, err)
	}
	bad := func(f func(*eventual.Message)) eventual.Message {
		m := note(t, "bad", "x")
		f(&m)
		return m
	}
	many := make([]eventual.Message, 100)
	for i := range many {
		many[i] = note(t, "many-"+empID(i), "x")
	}
	cases := []struct {
		name string
		msgs []eventual.Message
		want error
	}{
		{"too large", []eventual.Message{note(t, "ok", "x"), big}, eventual.ErrTooLarge},
		{"bad kind", []eventual.Message{bad(func(m *eventual.Message) { m.Kind = "no spaces" })}, eventual.ErrInvalidMessage},
		{"empty kind", []eventual.Message{bad(func(m *eventual.Message) { m.Kind = "" })}, eventual.ErrInvalidMessage},
		{"bad id", []eventual.Message{bad(func(m *eventual.Message) { m.ID = "a/b" })}, eventual.ErrInvalidMessage},
		{"empty id", []eventual.Message{bad(func(m *eventual.Message) { m.ID = "" })}, eventual.ErrInvalidMessage},
		{"bad payload", []eventual.Message{bad(func(m *eventual.Message) { m.Payload = json.RawMessage("{") })}, eventual.ErrInvalidMessage},
		{"id twice", []eventual.Message{note(t, "twice", "a"), note(t, "twice", "b")}, eventual.ErrInvalidMessage},
		{"100 messages", many, eventual.ErrTooLarge},
	}
	writes := map[string]func(opts denormalize.WriteOptions) error{
		"InsertSource": func(opts denormalize.WriteOptions) error {
			return c.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(9), Name: "N"}, opts)
		},
		"ModifySource": func(opts denormalize.WriteOptions) error {
			_, err := c.ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { e.Phone = "new"; e.Edits++; return nil }, entity.ModifyOptions{}, opts)
			return err
		},
		"DeleteSource": func(opts denormalize.WriteOptions) error { return c.DeleteSource(ctx, "Sales", empID(2), opts) },
		"InsertTarget": func(opts denormalize.WriteOptions) error {
			return c.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "dept X", ManagerID: empID(1)}, opts)
		},
		"ModifyTarget": func(opts denormalize.WriteOptions) error {
			_, err := c.ModifyTarget(ctx, "Sales", "dept Sales", func(d *Department) error { d.Budget++; return nil }, entity.ModifyOptions{}, opts)
			return err
		},
	}
	before := rawRows(t, g.emps.Name(), "Sales", "")
	for _, tc := range cases {
		for name, w := range writes {
			m0 := meter.Snapshot()
			err := w(withNotes(tc.msgs...))
			var me *denormalize.MessageError
			if !errors.As(err, &me) || !errors.Is(err, tc.want) || !errors.Is(err, entity.ErrInvalid) || me.Op != name {
				t.Errorf("%s, %s: %v; want a *MessageError of %s matching %v and entity.ErrInvalid", name, tc.name, err, name, tc.want)
			} else if !strings.HasPrefix(err.Error(), "denormalize: "+name+` (PartitionKey "Sales", RowKey "`) {
				t.Errorf("%s, %s: %q does not name the write and its keys", name, tc.name, err)
			}
			if n := meter.Snapshot().Sub(m0).Total(); n != 0 {
				t.Errorf("%s, %s: %d requests sent before the refusal", name, tc.name, n)
			}
		}
	}
	// The envelope of the largest size is committed and delivered.
	largest := sized(t, "largest", largestEnvelope)
	if _, err := c.ModifySource(ctx, "Sales", empID(2), func(e *Employee) error { e.Title = "largest"; return nil }, entity.ModifyOptions{}, withNotes(largest)); err != nil {
		t.Fatalf("a message of the largest size: %v", err)
	}
	// 99 messages fit alone, not beside the source and its copy in the
	// department: refused after the reads, before the transaction.
	_, err := c.ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { e.Phone = "new"; e.Edits++; return nil }, entity.ModifyOptions{}, withNotes(many[:99]...))
	var me *denormalize.MessageError
	if !errors.As(err, &me) || !errors.Is(err, eventual.ErrTooLarge) || me.Index != 98 {
		t.Errorf("99 messages beside a copy: %v; want a *MessageError for message 98 matching ErrTooLarge", err)
	}

	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := g.recover(rctx, t); err != nil {
		t.Fatal(err)
	}
	effects, copies := delivered(t, g.notes.Name())
	if len(effects) != 1 || copies["largest"] != 1 {
		t.Errorf("delivered %v (copies %v), want the largest message once", effects, copies)
	}
	// Nothing of the refused writes: the partition as before (but for the
	// title of the largest message's change), no intent, no message.
	after := rawRows(t, g.emps.Name(), "Sales", "")
	strip := func(rows []map[string]any) []string {
		var out []string
		for _, r := range rows {
			if r["RowKey"] == empID(2) {
				continue
			}
			delete(r, "Timestamp")
			delete(r, "odata.etag")
			b, _ := json.Marshal(r)
			out = append(out, string(b))
		}
		slices.Sort(out)
		return out
	}
	if b, a := strip(before), strip(after); !slices.Equal(b, a) {
		t.Errorf("the refused writes changed the partition:\nbefore %v\nafter  %v", b, a)
	}
	if work, poison := queued(t, g.qs); work+poison != 0 {
		t.Errorf("%d messages queued, %d poisoned", work, poison)
	}
}

// Memo copies an employee's name in the same partition; its Payload, an
// Int64, is a property an outbox intent holds as binary: an intent does
// not decode as a Memo.
type Memo struct {
	PartitionKey string
	RowKey       string
	ETag         string
	About        string // the employee's RowKey
	AboutName    string `table:",omitempty"`
	Payload      int64
}

// TestIntentsAreNotTargets leaves the intent of a message of the caller's
// in a partition whose every entity a relation's Targets names (its
// enqueue failed: the relay will send it), with a target type the intent
// does not decode as: Check and Rebuild report nothing, and a change of a
// source of that partition goes through — the intent is eventual's, not a
// bad target.
func TestIntentsAreNotTargets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rel := denormalize.Relation[Memo, Employee]{
		Name:   "about",
		Fields: []denormalize.Field{{From: "Name", To: "AboutName"}},
		Source: func(m *Memo) (denormalize.Key, bool) {
			return denormalize.Key{PartitionKey: m.PartitionKey, RowKey: m.About}, m.About != ""
		},
		Targets: func(e *Employee) denormalize.Targets {
			return denormalize.Targets{Ranges: []denormalize.Range{{PartitionKey: e.PartitionKey}}}
		},
	}
	emps := patterntest.Table[Employee](t, env)
	qs := patterntest.Queues(t, env, 1)
	build := func(e *integration.Env) *denormalize.Copies[Memo, Employee] {
		p, err := eventual.New(patterntest.SameQueues(t, e, qs), nil, patterntest.Fast())
		if err != nil {
			t.Fatal(err)
		}
		c, err := denormalize.New(patterntest.View[Memo](t, e, emps), patterntest.View[Employee](t, e, emps), denormalize.Config{Processor: p}, rel)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := build(env)
	if err := c.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(1), Name: "Jeff"}); err != nil {
		t.Fatal(err)
	}
	if err := c.InsertTarget(ctx, &Memo{PartitionKey: "Sales", RowKey: "memo 1", About: empID(1)}); err != nil {
		t.Fatal(err)
	}
	noQueue := faults.New(faults.Config{FailBefore: 1, Match: func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/messages") }})
	if _, err := build(env.With(noQueue)).ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { e.Title = "boss"; return nil }, entity.ModifyOptions{}, withNotes(note(t, "waiting", "x"))); err != nil {
		t.Fatal(err)
	}
	if left := intentsLeft(t, emps.Name(), "Sales"); len(left) != 1 {
		t.Fatalf("intents %v, want the one whose enqueue failed", left)
	}
	for f, err := range c.Check(ctx, denormalize.CheckOptions{}) {
		t.Errorf("Check beside a waiting intent: %v, %v", f, err)
	}
	if sum, err := c.Rebuild(ctx, denormalize.CheckOptions{}); err != nil || sum.Drift() != 0 || sum.Scanned != 2 {
		t.Errorf("Rebuild beside a waiting intent: %+v, %v; want 2 scanned, nothing found", sum, err)
	}
	if _, err := c.ModifySource(ctx, "Sales", empID(1), func(e *Employee) error { e.Name = "Jeffrey"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatalf("a change whose targets' range holds a waiting intent: %v", err)
	}
	if err := c.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(2), Name: "Sue"}); err != nil {
		t.Fatalf("an insert whose targets' range holds a waiting intent: %v", err)
	}
	if m, err := patterntest.View[Memo](t, env, emps).Get(ctx, "Sales", "memo 1"); err != nil || m.AboutName != "Jeffrey" {
		t.Errorf("memo 1: %+v, %v", m, err)
	}
	if left := intentsLeft(t, emps.Name(), "Sales"); len(left) != 1 {
		t.Errorf("intents %v, want the waiting one left alone", left)
	}
}
