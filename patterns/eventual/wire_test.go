package eventual_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

var (
	wireNow = time.Date(2024, 5, 1, 10, 0, 0, 123456700, time.UTC)
	uuidRE  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

const wireID = "7d0e5c1a-2f4b-4c7e-9a31-5b8f0e6d2c44"

// docExamples returns the example lines of doc.go's "Wire format"
// section, in order.
func docExamples(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "// # Wire format\n")
	if !ok {
		t.Fatal(`doc.go has no "Wire format" section`)
	}
	section, _, _ = strings.Cut(section, "\n// # ")
	var out []string
	for _, line := range strings.Split(section, "\n") {
		if ex, ok := strings.CutPrefix(line, "//\t"); ok {
			out = append(out, ex)
		}
	}
	return out
}

// member is one member of a JSON object, in order.
type member struct {
	name  string
	value json.RawMessage
}

// members reads a JSON object's members in order.
func members(t *testing.T, doc []byte) []member {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", doc)
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, member{tok.(string), v})
	}
	return out
}

// sameObject compares a JSON object the code wrote with a documented one:
// the same members in the same order (any order when ordered is false),
// the same values except the volatile members, whose values got must
// pass.
func sameObject(t *testing.T, what string, got []byte, want string, ordered bool, volatile map[string]func(string) bool) {
	t.Helper()
	g, w := members(t, got), members(t, []byte(want))
	if !ordered {
		index := map[string]member{}
		for _, m := range g {
			index[m.name] = m
		}
		g = g[:0]
		for _, m := range w {
			if x, ok := index[m.name]; ok {
				g = append(g, x)
				delete(index, m.name)
			}
		}
		for name, m := range index {
			g = append(g, member{name, m.value})
		}
	}
	if len(g) != len(w) {
		t.Errorf("%s: %d members, want %d:\n got %s\nwant %s", what, len(g), len(w), got, want)
		return
	}
	for i := range w {
		if g[i].name != w[i].name {
			t.Errorf("%s: member %d is %q, want %q", what, i, g[i].name, w[i].name)
			continue
		}
		if check, ok := volatile[w[i].name]; ok {
			var s string
			if json.Unmarshal(g[i].value, &s) != nil || !check(s) {
				t.Errorf("%s: %s is %s", what, w[i].name, g[i].value)
			}
			continue
		}
		if string(g[i].value) != string(w[i].value) {
			t.Errorf("%s: %s is %s, want %s", what, w[i].name, g[i].value, w[i].value)
		}
	}
}

// rawEntity returns the entity of tbl with the keys, as the service returns
// it, without its system properties.
func rawEntity[T any](t *testing.T, tbl *entity.Table[T], pk, rk string) []byte {
	t.Helper()
	for _, r := range rawRows(t, tbl) {
		if r.pk() == pk && r.rk() == rk {
			for _, sys := range []string{"odata.etag", "Timestamp", "Timestamp@odata.type"} {
				delete(r, sys)
			}
			b, err := json.Marshal(map[string]any(r))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("no entity %s/%s in %v", pk, rk, rawKeys(t, tbl))
	return nil
}

// TestWireFormatExamples checks each example of the "Wire format" section
// of the package documentation against what the code writes, read back
// with raw clients: the envelope as plain JSON, in base64 and with a claim
// check; a poison record; Once's marker; an outbox intent, one set
// aside, and one an inline processor set aside after MaxDeliveries runs.
func TestWireFormatExamples(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ex := docExamples(t)
	if len(ex) != 8 {
		t.Fatalf("%d examples in the Wire format section, want 8", len(ex))
	}
	cfg := patterntest.Fast()
	cfg.Now = func() time.Time { return wireNow }
	anyString := func(s string) bool { return s != "" }
	isUUID := uuidRE.MatchString
	isTime := func(s string) bool { _, err := time.Parse(time.RFC3339Nano, s); return err == nil }

	// The envelope, plain and base64, and with a claim check.
	archive, err := archiveKind.Message(ArchiveEmployee{"Sales", "000123"})
	if err != nil {
		t.Fatal(err)
	}
	archive.ID = wireID
	for i, enc := range []eventual.Encoding{eventual.PlainText, eventual.Base64} {
		qs := patterntest.Queues(t, env, 1)
		c := cfg
		c.Encoding = enc
		p, err := eventual.New(qs, nil, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Enqueue(ctx, archive); err != nil {
			t.Fatal(err)
		}
		if got := rawPeek(t, qs[0].Work); len(got) != 1 || *got[0].MessageText != ex[i] {
			t.Errorf("%v envelope:\n got %q\nwant %q", enc, *got[0].MessageText, ex[i])
		}
	}
	{
		qs := patterntest.Queues(t, env, 1)
		blobs := env.Container(t)
		c := cfg
		c.Encoding = eventual.PlainText
		p, err := eventual.New(qs, blobs, c)
		if err != nil {
			t.Fatal(err)
		}
		photo, err := photoKind.Message(Photo{Employee: "000123", Data: strings.Repeat("x", 70<<10)})
		if err != nil {
			t.Fatal(err)
		}
		photo.ID = "p-000123"
		if err := p.Enqueue(ctx, photo); err != nil {
			t.Fatal(err)
		}
		if got := rawPeek(t, qs[0].Work); len(got) != 1 || *got[0].MessageText != ex[2] {
			t.Errorf("claim-check envelope:\n got %q\nwant %q", *got[0].MessageText, ex[2])
		}
		resp, err := blobs.NewBlobClient("StorePhoto.v1/p-000123").DownloadStream(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Equal(data, photo.Payload) {
			t.Error("the claimed blob does not hold the payload's JSON")
		}
	}

	// A poison record.
	{
		qs := patterntest.Queues(t, env, 1)
		blobs := env.Container(t)
		p, err := eventual.New(qs, blobs, cfg)
		if err != nil {
			t.Fatal(err)
		}
		original := `{"kind":"Unknown.v9","id":"u1","created":"2024-05-01T10:00:00.0000000Z","payload":{}}`
		if _, err := qs[0].Work.EnqueueMessage(ctx, original, nil); err != nil {
			t.Fatal(err)
		}
		if rep, err := p.Drain(ctx); err != nil || rep.Poisoned != 1 {
			t.Fatalf("Drain = %+v, %v", rep, err)
		}
		poisoned := rawPeek(t, qs[0].Poison)
		names := blobNames(t, blobs)
		if len(poisoned) != 1 || len(names) != 1 || *poisoned[0].MessageText != original {
			t.Fatalf("%d poison messages, records %v", len(poisoned), names)
		}
		name := eventual.PoisonRecordPrefix + queueName(t, qs[0]) + eventual.PoisonSuffix + "/" + *poisoned[0].MessageID
		if names[0] != name {
			t.Errorf("record blob %q, want %q", names[0], name)
		}
		resp, err := blobs.NewBlobClient(name).DownloadStream(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sameObject(t, "poison record", data, ex[3], true, map[string]func(string) bool{
			"queue":           func(s string) bool { return s == queueName(t, qs[0]) },
			"messageId":       anyString,
			"inserted":        isTime,
			"poisonMessageId": func(s string) bool { return s == *poisoned[0].MessageID },
		})
	}

	// Once's marker.
	{
		qs := patterntest.Queues(t, env, 1)
		depts := patterntest.Table[Department](t, env)
		p, err := eventual.New(qs, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := eventual.Handle(p, archiveKind, func(ctx context.Context, _ ArchiveEmployee) error {
			_, err := eventual.Once(ctx, depts, "Sales", "raise", func(context.Context, *entity.Batch) error { return nil })
			return err
		}, eventual.HandleOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := p.Enqueue(ctx, archive); err != nil {
			t.Fatal(err)
		}
		if rep, err := p.Drain(ctx); err != nil || rep.Done != 1 {
			t.Fatalf("Drain = %+v, %v", rep, err)
		}
		sameObject(t, "Once marker", rawEntity(t, depts, "Sales", eventual.MarkerPrefix+wireID+" raise"), ex[4], false, map[string]func(string) bool{"Attempt": isUUID})
	}

	// An outbox intent (its writer dies after the transaction), and an
	// intent set aside.
	{
		qs := patterntest.Queues(t, env, 1)
		accounts := patterntest.Table[Account](t, env)
		killer := crashtest.NewKiller(1)
		kenv := env.With(killer)
		p, err := eventual.New(patterntest.SameQueues(t, kenv, qs), nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		o, err := eventual.NewOutbox(p, patterntest.View[Account](t, kenv, accounts), eventual.OutboxConfig{})
		if err != nil {
			t.Fatal(err)
		}
		raised, err := raiseKind.Message(RaiseRecorded{"Sales"})
		if err != nil {
			t.Fatal(err)
		}
		raised.ID = wireID
		if err := o.Submit(ctx, "Sales", nil, raised); err != nil || !killer.Fired() {
			t.Fatalf("Submit = %v (killed %v)", err, killer.Fired())
		}
		sameObject(t, "outbox intent", rawEntity(t, accounts, "Sales", eventual.OutboxPrefix+wireID), ex[5], false, map[string]func(string) bool{"Attempt": isUUID})

		rawIntent(t, accounts, "Sales", "bad-1", map[string]any{
			"Kind": "Bad Kind", "ID": "bad-1", "Attempt": "by-hand",
			"Created": "2024-05-01T10:00:00Z", "Created@odata.type": "Edm.DateTime",
			"Payload": "e30=", "Payload@odata.type": "Edm.Binary",
		})
		clean, err := eventual.New(qs, nil, patterntest.Fast()) // the real clock: the intent is older than now
		if err != nil {
			t.Fatal(err)
		}
		co, err := eventual.NewOutbox(clean, accounts, eventual.OutboxConfig{Grace: eventual.NoGrace})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := co.Relay(ctx, "Sales"); err == nil {
			t.Fatal("Relay reported no unsendable intent")
		}
		sameObject(t, "intent set aside", rawEntity(t, accounts, "Sales", eventual.UnsendablePrefix+"bad-1"), ex[6], false, map[string]func(string) bool{"SetAside": isTime})
	}

	// An intent whose handler failed on every run of an inline processor
	// (MaxDeliveries 2: Submit's run and a Relay's).
	{
		accounts := patterntest.Table[Account](t, env)
		icfg := cfg
		icfg.MaxDeliveries = 2
		p, err := eventual.NewInline(icfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := eventual.Handle(p, raiseKind, func(context.Context, RaiseRecorded) error { return errors.New("the ledger is closed") }, eventual.HandleOptions{}); err != nil {
			t.Fatal(err)
		}
		o, err := eventual.NewOutbox(p, accounts, eventual.OutboxConfig{Grace: eventual.NoGrace})
		if err != nil {
			t.Fatal(err)
		}
		raised, err := raiseKind.Message(RaiseRecorded{"Sales"})
		if err != nil {
			t.Fatal(err)
		}
		raised.ID = wireID
		if err := o.Submit(ctx, "Sales", nil, raised); err != nil {
			t.Fatal(err)
		}
		if _, err := o.Relay(ctx, "Sales"); !errors.Is(err, eventual.ErrPoisoned) {
			t.Fatalf("Relay: %v, want the intent set aside", err)
		}
		sameObject(t, "intent set aside after its runs", rawEntity(t, accounts, "Sales", eventual.UnsendablePrefix+wireID), ex[7], false, map[string]func(string) bool{"Attempt": isUUID, "SetAside": isTime})
	}
}
