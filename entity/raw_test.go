package entity_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

// bodies is a policy that keeps every response body, to check that a
// Table[json.RawMessage] yields objects exactly as the service sent them.
type bodies struct {
	mu  sync.Mutex
	all [][]byte
}

func (b *bodies) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err == nil {
		if p, err := runtime.Payload(resp); err == nil {
			b.mu.Lock()
			b.all = append(b.all, p)
			b.mu.Unlock()
		}
	}
	return resp, err
}

// sent reports whether raw is, byte for byte, part of a response body.
func (b *bodies) sent(raw []byte) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, body := range b.all {
		if bytes.Contains(body, raw) {
			return true
		}
	}
	return false
}

// samePerson compares what the service stores of a Person.
func samePerson(a, b Person) bool {
	return a.Dept == b.Dept && a.ID == b.ID && a.ETag == b.ETag && a.Timestamp.Equal(b.Timestamp) &&
		a.Name == b.Name && a.Email == b.Email && a.Age == b.Age
}

// TestRawTableReads reads rows as JSON objects through every read path
// (Get, Query, QueryPage, QueryPartitions), across pages and through the
// empty PartitionKey: each object is what the service sent, and decodes
// to the entity that was written.
func TestRawTableReads(t *testing.T) {
	ctx := context.Background()
	sent := &bodies{}
	client := env.With(sent).Table(t)
	people, err := entity.NewTable[Person](client)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := entity.NewTable[json.RawMessage](client)
	if err != nil {
		t.Fatal(err)
	}
	var want []Person // in the service's order: "" < "A" < "B"
	for _, pk := range []string{"", "A", "B"} {
		for i := range 5 {
			p := Person{Dept: pk, ID: fmt.Sprintf("%02d", i), Name: "name " + pk, Email: `"quoted" \ é`, Age: int32(i)}
			if err := people.Insert(ctx, &p); err != nil {
				t.Fatal(err)
			}
			if p.Timestamp.IsZero() { // Cosmos DB: the ETag carries no time
				if p, err = people.Get(ctx, p.Dept, p.ID); err != nil {
					t.Fatal(err)
				}
			}
			want = append(want, p)
		}
	}
	check := func(what string, got []json.RawMessage, want []Person) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
		}
		for i, raw := range got {
			var p Person
			err := entity.Unmarshal(raw, &p)
			w := want[i]
			if env.Cosmos() { // no order: the row of the same keys
				for _, o := range want {
					if o.Dept == p.Dept && o.ID == p.ID {
						w = o
					}
				}
			}
			if err != nil || !samePerson(p, w) {
				t.Fatalf("%s: row %d decodes to %+v (%v), want %+v", what, i, p, err, w)
			}
			if !sent.sent(raw) {
				t.Fatalf("%s: row %d is not in any response body: %s", what, i, raw)
			}
		}
	}

	// Get, also of an empty PartitionKey (which is read with a query).
	for _, w := range []Person{want[0], want[7]} {
		raw, err := rows.Get(ctx, w.Dept, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("Get(%q, %q)", w.Dept, w.ID), []json.RawMessage{raw}, []Person{w})
	}
	if _, err := rows.Get(ctx, "A", "nobody"); !errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("Get of a missing entity: %v", err)
	}

	// Query follows continuations across pages of two.
	var all []json.RawMessage
	for raw, err := range rows.Query(ctx, entity.Query{PageSize: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, raw)
	}
	check("Query", all, want)

	// QueryPage, page by page from each token, in a fresh table as another
	// process would.
	var paged []json.RawMessage
	pages := 0
	for token := ""; ; {
		fresh, err := entity.NewTable[json.RawMessage](client)
		if err != nil {
			t.Fatal(err)
		}
		p, err := fresh.QueryPage(ctx, entity.Query{PageSize: 2}, token)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, p.Items...)
		pages++
		if token = p.Next; token == "" {
			break
		}
	}
	check("QueryPage", paged, want)
	if pages < len(want)/2 {
		t.Errorf("QueryPage: %d pages of at most 2 rows for %d rows", pages, len(want))
	}

	// The empty partition alone, across pages.
	var empty []json.RawMessage
	for raw, err := range rows.Query(ctx, entity.Query{Filter: filter.PK(""), PageSize: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		empty = append(empty, raw)
	}
	check(`Query of PK("")`, empty, want[:5])

	// QueryPartitions, in the service's order and merged by RowKey (which
	// reads each object's keys).
	for _, opts := range []entity.FanOutOptions{{}, {ByRowKey: true}} {
		var got []json.RawMessage
		for raw, err := range rows.QueryPartitions(ctx, []string{"B", ""}, entity.Query{PageSize: 2}, opts) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, raw)
		}
		w := slices.Concat(want[:5], want[10:])
		if opts.ByRowKey {
			w = nil
			for i := range 5 {
				w = append(w, want[i], want[10+i])
			}
		}
		check(fmt.Sprintf("QueryPartitions %+v", opts), got, w)
	}

	// Each object is a copy: growing one leaves its neighbours, which
	// followed it in the response body, as they were.
	p, err := rows.QueryPage(ctx, entity.Query{PageSize: 3}, "")
	if err != nil || len(p.Items) != 3 {
		t.Fatalf("page: %d rows, %v", len(p.Items), err)
	}
	before := string(p.Items[1])
	_ = append(p.Items[0], bytes.Repeat([]byte{'x'}, 256)...)
	if string(p.Items[1]) != before {
		t.Fatalf("an object shares its bytes with the next: %s", p.Items[1])
	}
}

// TestRawTableRefusesWrites: every write of a Table[json.RawMessage] is a
// *TypeError, and no request is sent.
func TestRawTableRefusesWrites(t *testing.T) {
	ctx := context.Background()
	meter := cost.NewMeter()
	client := env.With(meter.Policy()).Table(t)
	rows, err := entity.NewTable[json.RawMessage](client)
	if err != nil {
		t.Fatal(err)
	}
	obj := json.RawMessage(`{"PartitionKey":"p","RowKey":"r","Name":"n"}`)
	tagged := json.RawMessage(`{"odata.etag":"W/\"datetime'2024-05-01T10%3A00%3A00.1234567Z'\"","PartitionKey":"p","RowKey":"r"}`)
	start := meter.Snapshot()
	writes := map[string]func() error{
		"Insert":       func() error { return rows.Insert(ctx, &obj) },
		"Upsert":       func() error { return rows.Upsert(ctx, &obj, entity.Merge) },
		"Update":       func() error { return rows.Update(ctx, &tagged, entity.Replace) },
		"UpdateAny":    func() error { return rows.UpdateAny(ctx, &obj, entity.Merge) },
		"Delete":       func() error { return rows.Delete(ctx, "p", "r", entity.AnyETag) },
		"DeleteEntity": func() error { return rows.DeleteEntity(ctx, &tagged) },
		"DeleteIfExists": func() error {
			_, err := rows.DeleteIfExists(ctx, "p", "r")
			return err
		},
		"BulkWrite": func() error {
			_, err := rows.BulkWrite(ctx, []json.RawMessage{obj}, entity.BulkOptions{})
			return err
		},
		"Modify": func() error {
			_, err := rows.Modify(ctx, "p", "r", func(*json.RawMessage) error { return nil }, entity.ModifyOptions{})
			return err
		},
		"Submit": func() error {
			b := rows.NewBatch()
			b.Delete("p", "r", entity.AnyETag)
			_, err := rows.Submit(ctx, b)
			return err
		},
	}
	for _, name := range slices.Sorted(maps.Keys(writes)) {
		err := writes[name]()
		var te *entity.TypeError
		if !errors.As(err, &te) || te.Type != reflect.TypeFor[json.RawMessage]() {
			t.Errorf("%s: %v, want a *TypeError of json.RawMessage", name, err)
		}
	}
	if d := meter.Snapshot().Sub(start); d.Total() != 0 {
		t.Errorf("refused writes sent %d requests: %v", d.Total(), d)
	}
	if _, err := rows.Get(ctx, "p", "r"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("after the refused writes: %v, want ErrNotFound", err)
	}
}
