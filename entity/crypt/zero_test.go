package crypt_test

import (
	"errors"
	"os"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/filter"
)

// TestFailedReadsReturnZero stores one entity for every way a read can
// fail — each crypt error kind, a plain value of the wrong type, a legacy
// ciphertext that does not decrypt — with raw aztables writes, and reads
// each through every read of a Table: Get, Query, QueryPage,
// QueryPartitions, Modify and Unmarshal. Each fails with its kind and
// returns the zero value: never the keys and a valid ETag that would invite
// a conditional overwrite.
func TestFailedReadsReturnZero(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ct, raw := onAzurite[person](t, env, crypt.Config{})
	// Legacy entities are read by a table with Config.Legacy.
	legacy := cryptOver[person](t, raw, ct.Name(), crypt.Config{Key: crypt.Keyring(newLocalKey(t, "kek-1", 1), legacyKey(t)), Legacy: true})
	write := func(rk string) body {
		e := personValue(rk)
		if err := ct.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
		return rawEntity(t, raw, "Sales", rk)
	}
	other := func(cfg crypt.Config) *crypt.Table[person] { return cryptOver[person](t, raw, ct.Name(), cfg) }
	cases := []struct {
		rk    string
		table *crypt.Table[person]
		kind  error
		store func(rk string)
	}{
		{"policy", ct, crypt.ErrPolicy, func(rk string) {
			// First stored in clear (written through a type that has it
			// so), which person asks encrypted.
			twin := cryptOver[personPlainFirst](t, raw, ct.Name(), crypt.Config{})
			e := personPlainFirst{PartitionKey: "Sales", RowKey: rk, First: "J", Last: "J", Email: "e", Level: 1, Dept: "Sales"}
			if err := twin.Insert(ctx, &e); err != nil {
				t.Fatal(err)
			}
		}},
		{"plainvalue", ct, entity.ErrDecode, func(rk string) {
			m := write(rk)
			m["Dept"] = 5 // a clear property of the wrong type
			putRaw(t, raw, m)
		}},
		{"tampered", ct, crypt.ErrTampered, func(rk string) {
			m := write(rk)
			c := m.binary(t, "Email")
			c[len(c)-1] ^= 1
			m.setBinary("Email", c)
			putRaw(t, raw, m)
		}},
		{"wrongtype", ct, crypt.ErrTampered, func(rk string) {
			m := write(rk)
			delete(m, "Email@odata.type")
			putRaw(t, raw, m)
		}},
		{"metadata", ct, crypt.ErrMetadata, func(rk string) {
			m := write(rk)
			m.setBinary(crypt.MetadataProperty, m.binary(t, crypt.MetadataProperty)[:5])
			putRaw(t, raw, m)
		}},
		{"unknownkey", ct, crypt.ErrUnknownKey, func(rk string) {
			e := personValue(rk)
			if err := other(crypt.Config{Key: newLocalKey(t, "kek-9", 9)}).Insert(ctx, &e); err != nil {
				t.Fatal(err)
			}
		}},
		{"unwrap", ct, crypt.ErrUnwrap, func(rk string) {
			e := personValue(rk)
			if err := other(crypt.Config{Key: newLocalKey(t, "kek-1", 9)}).Insert(ctx, &e); err != nil {
				t.Fatal(err)
			}
		}},
		{"plaintext", ct, crypt.ErrNotEncrypted, func(rk string) {
			b, _ := entity.Marshal(&personPlain{PartitionKey: "Sales", RowKey: rk, First: "J", Last: "K", Email: "e", Level: 1})
			putRaw(t, raw, parseBody(t, b))
		}},
		{"000123", legacy, crypt.ErrTampered, func(rk string) {
			// A .NET client's entity (RowKey 000123: its IVs are bound
			// to its keys) whose Email ciphertext was changed:
			// the legacy format has no signature, so the failure comes
			// when Email is decrypted, after the keys were read.
			b, err := os.ReadFile("testdata/legacy/dotnet.json")
			if err != nil {
				t.Fatal(err)
			}
			m := parseBody(t, b)
			for k := range m {
				if k == "Timestamp" || k == "odata.etag" {
					delete(m, k)
				}
			}
			c := m.binary(t, "Email")
			c[len(c)-1] ^= 0x55
			m.setBinary("Email", c)
			putRaw(t, raw, m)
		}},
	}
	for _, c := range cases {
		c.store(c.rk)
	}
	zero := person{}
	check := func(t *testing.T, kind error, how string, got person, err error) {
		t.Helper()
		if !errors.Is(err, kind) {
			t.Errorf("%s: %v, want %v", how, err, kind)
		}
		if got != zero {
			t.Errorf("%s returned a partly filled value with its error: %+v", how, got)
		}
	}
	for _, c := range cases {
		t.Run(c.rk, func(t *testing.T) {
			got, err := c.table.Get(ctx, "Sales", c.rk)
			check(t, c.kind, "Get", got, err)

			q := entity.Query{Filter: filter.PK("Sales").And(filter.RK(c.rk))}
			n := 0
			for got, err := range c.table.Query(ctx, q) {
				n++
				check(t, c.kind, "Query", got, err)
			}
			if n == 0 {
				t.Error("Query yielded nothing")
			}
			page, err := c.table.QueryPage(ctx, q, "")
			if !errors.Is(err, c.kind) || len(page.Items) != 0 || page.Next != "" {
				t.Errorf("QueryPage: %d items, next %q, %v", len(page.Items), page.Next, err)
			}
			n = 0
			for got, err := range c.table.QueryPartitions(ctx, []string{"Sales"}, entity.Query{Filter: filter.RK(c.rk)}, entity.FanOutOptions{}) {
				n++
				check(t, c.kind, "QueryPartitions", got, err)
			}
			if n == 0 {
				t.Error("QueryPartitions yielded nothing")
			}
			changed := false
			got, err = c.table.Modify(ctx, "Sales", c.rk, func(p *person) error { changed = true; return nil }, entity.ModifyOptions{})
			check(t, c.kind, "Modify", got, err)
			if changed {
				t.Error("Modify called change with an entity that failed to read")
			}

			// Unmarshal of the stored body (minimal metadata, as the
			// service returns it) leaves the target zero.
			m := rawEntity(t, raw, "Sales", c.rk)
			m["odata.etag"] = `W/"datetime'2026-01-01T00%3A00%3A00Z'"`
			into := person{PartitionKey: "x", RowKey: "y", ETag: "z", First: "kept"}
			err = c.table.Unmarshal(ctx, m.bytes(t), &into)
			check(t, c.kind, "Unmarshal", into, err)
		})
	}
	// What the service stores was not changed by any of the reads.
	for _, c := range cases[:1] {
		b := rawEntity(t, raw, "Sales", c.rk)
		if b["First"] != "J" {
			t.Errorf("the stored %s changed: %v", c.rk, b)
		}
	}
}

// cryptOver opens the stored table raw as a crypt table of type T under
// the tests' default key.
func cryptOver[T any](t testing.TB, raw *aztables.Client, name string, cfg crypt.Config) *crypt.Table[T] {
	t.Helper()
	if cfg.Key == nil {
		cfg.Key = newLocalKey(t, "kek-1", 1)
	}
	cfg.Table = name
	c, err := crypt.New(entityTable[T](t, raw), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
