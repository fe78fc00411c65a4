package crypt_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/filter"
)

// TestQueryContinuesPastTamperedRow: whoever can write one row must not
// block every listing of its partition. A row whose ciphertext was
// swapped for another row's fails authentication: by default it ends a
// query, as any error does; with entity.Query.ContinueOnRowError it is
// yielded as an *entity.RowError naming its keys (matching
// crypt.ErrTampered), with the zero value, and the rows after it follow —
// through Query, QueryPage and QueryPartitions.
func TestQueryContinuesPastTamperedRow(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ct, raw := onAzurite[refEncrypted](t, env, crypt.Config{})
	for i := range 6 {
		e := refEncrypted{PartitionKey: "Sales", RowKey: fmt.Sprint("r", i), FirstName: fmt.Sprint("first", i), Age: int32(i + 1), Hired: refValue().Hired}
		if err := ct.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	// r2 gets r3's FirstName ciphertext, written with a raw client.
	rows := map[string]map[string]any{}
	for _, b := range rawBodies(t, raw) {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		rows[m["RowKey"].(string)] = m
	}
	tampered := map[string]any{}
	for k, v := range rows["r2"] {
		if !strings.HasPrefix(k, "odata.") && k != "Timestamp" && k != "Timestamp@odata.type" {
			tampered[k] = v
		}
	}
	tampered["FirstName"] = rows["r3"]["FirstName"]
	body, err := json.Marshal(tampered)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
		t.Fatal(err)
	}

	type result struct {
		rk  string
		err error
	}
	isBad := func(r result, e refEncrypted) bool {
		var re *entity.RowError
		return errors.As(r.err, &re) && errors.Is(r.err, crypt.ErrTampered) && errors.Is(r.err, entity.ErrDecode) &&
			re.PartitionKey == "Sales" && re.RowKey == "r2" && reflect.ValueOf(e).IsZero()
	}
	run := func(what string, q entity.Query, seq func(entity.Query) func(func(refEncrypted, error) bool)) []result {
		var out []result
		for e, err := range seq(q) {
			r := result{e.RowKey, err}
			switch {
			case err == nil && e.FirstName != "first"+e.RowKey[1:]:
				t.Fatalf("%s: %+v", what, e)
			case err != nil && !isBad(r, e):
				t.Fatalf("%s: %+v %v", what, e, err)
			}
			out = append(out, r)
		}
		return out
	}
	query := func(q entity.Query) func(func(refEncrypted, error) bool) { return ct.Query(ctx, q) }
	fanOut := func(q entity.Query) func(func(refEncrypted, error) bool) {
		return ct.QueryPartitions(ctx, []string{"Sales", "Other"}, q, entity.FanOutOptions{})
	}
	for name, seq := range map[string]func(entity.Query) func(func(refEncrypted, error) bool){"Query": query, "QueryPartitions": fanOut} {
		got := run(name, entity.Query{Filter: filter.PK("Sales")}, seq)
		if len(got) != 3 || got[2].err == nil {
			t.Fatalf("%s without ContinueOnRowError: %v", name, got)
		}
		got = run(name, entity.Query{Filter: filter.PK("Sales"), PageSize: 2, ContinueOnRowError: true}, seq)
		if len(got) != 6 || got[2].err == nil || got[3].rk != "r3" || got[5].rk != "r5" {
			t.Fatalf("%s with ContinueOnRowError: %v", name, got)
		}
	}

	page, err := ct.QueryPage(ctx, entity.Query{Filter: filter.PK("Sales"), ContinueOnRowError: true}, "")
	if err != nil || len(page.Items) != 5 || len(page.RowErrors) != 1 || !isBad(result{"", page.RowErrors[0]}, refEncrypted{}) {
		t.Fatalf("QueryPage: %d items, row errors %v, %v", len(page.Items), page.RowErrors, err)
	}
	if _, err := ct.QueryPage(ctx, entity.Query{Filter: filter.PK("Sales")}, ""); !errors.Is(err, crypt.ErrTampered) {
		t.Fatalf("QueryPage without ContinueOnRowError: %v", err)
	}
	// Get stays fail-closed.
	if e, err := ct.Get(ctx, "Sales", "r2"); !errors.Is(err, crypt.ErrTampered) || !reflect.ValueOf(e).IsZero() {
		t.Fatalf("Get of the tampered row: %+v %v", e, err)
	}
}
