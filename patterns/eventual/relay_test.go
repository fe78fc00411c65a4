package eventual_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// Account is an entity of the relay tests' table.
type Account struct {
	PartitionKey string
	RowKey       string
	Balance      int64
}

// rawIntent writes an intent entity with a plain aztables client, as a
// writer whose processor had a blob container (or an older release, or a
// hand) left it: props are the entity's properties besides the keys.
func rawIntent(t testing.TB, tbl *entity.Table[Account], pk, id string, props map[string]any) {
	t.Helper()
	body := map[string]any{"PartitionKey": pk, "RowKey": eventual.OutboxPrefix + id}
	for k, v := range props {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.TableService.NewClient(tbl.Name()).AddEntity(context.Background(), b, nil); err != nil {
		t.Fatal(err)
	}
}

// intentProps is a well-formed intent's properties in the service's JSON.
func intentProps(kind, id, key string, payload []byte) map[string]any {
	return map[string]any{
		"Kind": kind, "ID": id, "Key": key, "Attempt": "by-hand",
		"Created": "2024-05-01T10:00:00.0000000Z", "Created@odata.type": "Edm.DateTime",
		"Payload": base64.StdEncoding.EncodeToString(payload), "Payload@odata.type": "Edm.Binary",
	}
}

// keyFor returns a message key that keys.Bucket sends to queue i of n.
func keyFor(i, n int) string {
	for k := 0; ; k++ {
		key := fmt.Sprintf("k%d", k)
		if keys.Bucket(key, n) == fmt.Sprint(i) {
			return key
		}
	}
}

// TestRelayGoesOnPastUnsendableIntents: partition "a" holds an intent too
// large for a queue message (its writer's processor had a blob container,
// this one has none) and an intent whose entity does not decode (Payload
// stored as a String); partition "b" holds the intent of a Submit whose
// writer died after its transaction, before enqueueing. One Relay sends
// b's message, sets a's two intents aside with their reasons (raw rows
// with the unsendable prefix, Reason and SetAside), and reports each as a
// *RelayError naming partition and intent and matching ErrUnsendable. The
// next Relay finds nothing to do. Revive on a processor with a container
// puts the large one back, and Relay sends it.
func TestRelayGoesOnPastUnsendableIntents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	accounts := patterntest.Table[Account](t, env)
	qs := patterntest.Queues(t, env, 1)
	p, err := eventual.New(qs, nil, patterntest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	o, err := eventual.NewOutbox(p, accounts, eventual.OutboxConfig{Grace: eventual.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	bigPayload, _ := json.Marshal(Note{strings.Repeat("n", 50<<10)})
	rawIntent(t, accounts, "a", "a-big", intentProps(noteKind.Name(), "a-big", "", bigPayload))
	bad := intentProps(noteKind.Name(), "a-bad", "", []byte(`{"text":"x"}`))
	delete(bad, "Payload@odata.type") // a String now
	rawIntent(t, accounts, "a", "a-bad", bad)

	// b's writer dies after its transaction, before the enqueue.
	killer := crashtest.NewKiller(1)
	kp, err := eventual.New(patterntest.SameQueues(t, env.With(killer), qs), nil, patterntest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	ko, err := eventual.NewOutbox(kp, patterntest.View[Account](t, env.With(killer), accounts), eventual.OutboxConfig{Grace: eventual.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	m, err := noteKind.Message(Note{"b's note"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ko.Submit(ctx, "b", func(b *entity.Batch) error {
		b.Insert(&Account{PartitionKey: "b", RowKey: "acct", Balance: 10})
		return nil
	}, m); err != nil || !killer.Fired() {
		t.Fatalf("Submit = %v (killed %v), want nil: committed, the enqueue killed", err, killer.Fired())
	}

	sent, err := o.Relay(ctx)
	if sent != 1 {
		t.Errorf("Relay sent %d, want 1 (b's)", sent)
	}
	reported := map[string]*eventual.RelayError{}
	for _, e := range unjoin(err) {
		var re *eventual.RelayError
		if !errors.As(e, &re) || re.Partition != "a" || !re.SetAside || !errors.Is(e, eventual.ErrUnsendable) {
			t.Errorf("Relay reported %v, want *RelayErrors of partition a, set aside", e)
			continue
		}
		reported[re.ID] = re
	}
	if len(reported) != 2 || !errors.Is(reported["a-big"], eventual.ErrTooLarge) || reported["a-bad"] == nil || reported["a-bad"].RowKey != eventual.OutboxPrefix+"a-bad" {
		t.Errorf("Relay reported %v, want a-big (too large) and a-bad", err)
	}
	// The queue holds b's message, and only it.
	got := rawMessages(t, qs[0].Work)
	if len(got) != 1 || !strings.Contains(decodeB64(t, *got[0].MessageText), `"id":"`+m.ID+`"`) {
		t.Fatalf("queue holds %d messages, want b's %s", len(got), m.ID)
	}
	wantKeys := []string{"a/" + eventual.UnsendablePrefix + "a-bad", "a/" + eventual.UnsendablePrefix + "a-big", "b/acct"}
	if ks := rawKeys(t, accounts); fmt.Sprint(ks) != fmt.Sprint(wantKeys) {
		t.Errorf("table holds %v, want %v", ks, wantKeys)
	}
	for _, r := range rawRows(t, accounts) {
		if r.pk() == "a" && (r["Reason"] == nil || r["Reason"] == "" || r["SetAside@odata.type"] != "Edm.DateTime" || r["Kind"] != noteKind.Name()) {
			t.Errorf("set-aside row %v lacks its reason, time or message", r)
		}
	}
	if n, err := o.Relay(ctx); n != 0 || err != nil {
		t.Errorf("second Relay = %d, %v; want 0, nil", n, err)
	}
	var listed []string
	for u, err := range o.Unsendable(ctx, "a") {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, u.Message.ID+": "+u.Reason)
	}
	if len(listed) != 2 {
		t.Errorf("Unsendable lists %q, want 2", listed)
	}

	// The cause fixed: a processor with a container sends the large one.
	withBlobs, err := eventual.New(qs, env.Container(t), patterntest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	o2, err := eventual.NewOutbox(withBlobs, accounts, eventual.OutboxConfig{Grace: eventual.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	if err := o2.Revive(ctx, "a", "a-big"); err != nil {
		t.Fatal(err)
	}
	if n, err := o2.Relay(ctx, "a"); n != 1 || err != nil {
		t.Errorf("Relay after Revive = %d, %v; want 1, nil", n, err)
	}
	if n := count(t, qs[0].Work); n != 2 {
		t.Errorf("%d messages in the queue, want 2", n)
	}
}

// TestRelayReportsEachPartitionAndGoesOn: of two queues, the one that
// partition "a"'s message goes to is deleted; Relay of "a" and "b" sends
// b's message, reports a's as a *RelayError naming the partition and the
// intent, not set aside, and leaves a's intent for the next Relay, which
// sends it once the queue exists again.
func TestRelayReportsEachPartitionAndGoesOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	accounts := patterntest.Table[Account](t, env)
	qs := patterntest.Queues(t, env, 2)
	cfg := patterntest.Fast()
	p, err := eventual.New(qs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	o, err := eventual.NewOutbox(p, accounts, eventual.OutboxConfig{Grace: eventual.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	rawIntent(t, accounts, "a", "to-a", intentProps(noteKind.Name(), "to-a", keyFor(0, 2), []byte(`{"text":"a"}`)))
	rawIntent(t, accounts, "b", "to-b", intentProps(noteKind.Name(), "to-b", keyFor(1, 2), []byte(`{"text":"b"}`)))
	if _, err := qs[0].Work.Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	sent, err := o.Relay(ctx, "a", "b")
	var re *eventual.RelayError
	if sent != 1 || !errors.As(err, &re) || re.Partition != "a" || re.ID != "to-a" || re.SetAside || errors.Is(err, eventual.ErrUnsendable) || len(unjoin(err)) != 1 {
		t.Fatalf("Relay = %d, %v; want 1 sent and a's intent reported, not set aside", sent, err)
	}
	if ks := rawKeys(t, accounts); fmt.Sprint(ks) != fmt.Sprint([]string{"a/" + eventual.OutboxPrefix + "to-a"}) {
		t.Errorf("table holds %v, want a's intent only", ks)
	}
	if n := count(t, qs[1].Work); n != 1 {
		t.Errorf("%d messages in b's queue, want 1", n)
	}
	if _, err := qs[0].Work.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := o.Relay(ctx); n != 1 || err != nil {
		t.Errorf("Relay once the queue exists = %d, %v; want 1, nil", n, err)
	}
	if ks := rawKeys(t, accounts); len(ks) != 0 {
		t.Errorf("table holds %v after the relay", ks)
	}
}

func decodeB64(t testing.TB, s string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNewOutboxRefusesOverlappingPrefixes: the intents' prefix and the
// set-aside rows' prefix must not start one another (a set-aside row
// would be read as an intent), refused by NewOutbox with a *ConfigError.
func TestNewOutboxRefusesOverlappingPrefixes(t *testing.T) {
	t.Parallel()
	p, err := eventual.New(eventual.QueuesOf(env.QueueService, "never-used"), nil, eventual.Config{})
	if err != nil {
		t.Fatal(err)
	}
	accounts := patterntest.Table[Account](t, env)
	for _, cfg := range []eventual.OutboxConfig{
		{Prefix: "tablekit.unsendable_x"},
		{UnsendablePrefix: eventual.OutboxPrefix + "dead_"},
		{Prefix: "same_", UnsendablePrefix: "same_"},
		{UnsendablePrefix: "a/b"},
	} {
		var ce *eventual.ConfigError
		if _, err := eventual.NewOutbox(p, accounts, cfg); !errors.Is(err, eventual.ErrInvalidConfig) || !errors.As(err, &ce) {
			t.Errorf("NewOutbox(%+v) = %v, want a *ConfigError", cfg, err)
		}
	}
}
