package crypt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/filter"
)

// rawEntity reads one stored entity through aztables alone, in minimal
// metadata (annotations for the types a value's JSON does not say), as a
// map to change as someone with write access to the table could.
func rawEntity(t testing.TB, c *aztables.Client, pk, rk string) body {
	t.Helper()
	format := aztables.MetadataFormatMinimal
	resp, err := c.GetEntity(t.Context(), pk, rk, &aztables.GetEntityOptions{Format: &format})
	if err != nil {
		t.Fatal(err)
	}
	m := parseBody(t, resp.Value)
	for k := range m {
		if k == "Timestamp" || k == "Timestamp@odata.type" || bytes.HasPrefix([]byte(k), []byte("odata.")) {
			delete(m, k)
		}
	}
	return m
}

// putRaw replaces the stored entity by m, through aztables alone.
func putRaw(t testing.TB, c *aztables.Client, m body) {
	t.Helper()
	if _, err := c.UpsertEntity(t.Context(), m.bytes(t), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
		t.Fatal(err)
	}
}

// storedTypeOf says how the service now stores a property: its annotation
// in full metadata, or Edm.String for an unannotated string.
func storedTypeOf(t testing.TB, c *aztables.Client, pk, rk, name string) string {
	t.Helper()
	format := aztables.MetadataFormatFull
	resp, err := c.GetEntity(t.Context(), pk, rk, &aztables.GetEntityOptions{Format: &format})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(resp.Value, &m); err != nil {
		t.Fatal(err)
	}
	if at, ok := m[name+"@odata.type"].(string); ok {
		return at
	}
	if _, ok := m[name].(string); ok {
		return "Edm.String"
	}
	return "?"
}

// TestProtectedValueOfWrongStoredType removes the Edm.Binary annotation
// from a ciphertext, from the metadata and from a beacon, one at a time,
// with a raw aztables client: the service then stores the same base64 text
// as an Edm.String. Every read (Get, Query, a beacon query) refuses the
// entity with ErrTampered, as entity refuses a plain value of the wrong
// type; the untouched entity reads.
func TestProtectedValueOfWrongStoredType(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ct, raw := onAzurite[beaconed](t, env, crypt.Config{Beacons: []string{"Email"}, BeaconKey: bytes.Repeat([]byte{5}, 32)})
	for _, rk := range []string{"ok", "Secret", crypt.MetadataProperty, crypt.BeaconPrefix + "Email"} {
		e := beaconed{PartitionKey: "p", RowKey: rk, Email: "same@contoso.com", Age: 40, Secret: "s3cr3t", Level: 2}
		if err := ct.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
		if rk == "ok" {
			continue
		}
		// The entity named after the property loses that property's
		// annotation.
		m := rawEntity(t, raw, "p", rk)
		if m[rk+"@odata.type"] != "Edm.Binary" {
			t.Fatalf("%s stored as %v", rk, m[rk+"@odata.type"])
		}
		delete(m, rk+"@odata.type")
		putRaw(t, raw, m)
		if got := storedTypeOf(t, raw, "p", rk, rk); got != "Edm.String" {
			t.Fatalf("%s is stored as %s after the raw write", rk, got)
		}
	}
	for _, rk := range []string{"Secret", crypt.MetadataProperty, crypt.BeaconPrefix + "Email"} {
		_, err := ct.Get(ctx, "p", rk)
		var re *crypt.ReadError
		if !errors.Is(err, crypt.ErrTampered) || !errors.As(err, &re) || re.RowKey != rk || re.Property != rk || re.Op != "Get" ||
			!strings.Contains(err.Error(), `crypt: Get of PartitionKey "p", RowKey `+strconv.Quote(rk)+" property "+rk+": ") {
			t.Errorf("Get of the entity whose %s is a String: %v, want ErrTampered naming Get, the entity and the property", rk, err)
		}
		// A query reads it the same way; a beacon query too, when the
		// service matches it (not when the beacon itself is a String: the
		// service never finds a String equal to a Binary).
		queries := []filter.Expr{filter.PK("p").And(filter.RK(rk)), filter.PK("p").And(filter.RK(rk), filter.Eq("Email", "same@contoso.com"))}
		for i, f := range queries {
			n := 0
			for e, err := range ct.Query(ctx, entity.Query{Filter: f}) {
				n++
				if !errors.Is(err, crypt.ErrTampered) {
					t.Errorf("query %d of the entity whose %s is a String: %+v %v, want ErrTampered", i, rk, e, err)
				}
			}
			if n == 0 && (i == 0 || rk != crypt.BeaconPrefix+"Email") {
				t.Errorf("query %d did not find the entity whose %s is a String", i, rk)
			}
		}
	}
	if e, err := ct.Get(ctx, "p", "ok"); err != nil || e.Secret != "s3cr3t" {
		t.Fatalf("untouched entity: %+v %v", e, err)
	}
}

// TestStoredTypeVariants changes the stored type of each protected value
// of a body (the annotation removed, or naming another type) and of the
// signed values: every change fails closed with ErrTampered, naming the
// property.
func TestStoredTypeVariants(t *testing.T) {
	ctx := t.Context()
	ct := newOffline[beaconed](t, crypt.Config{Beacons: []string{"Email"}, BeaconKey: bytes.Repeat([]byte{5}, 32)})
	in := beaconed{PartitionKey: "Sales", RowKey: "1", Email: "a@contoso.com", Age: 40, Secret: "s", Level: 2}
	b, err := ct.Marshal(ctx, &in)
	if err != nil {
		t.Fatal(err)
	}
	orig := parseBody(t, b)
	for _, prop := range []string{"Email", "Secret", crypt.MetadataProperty, crypt.BeaconPrefix + "Email"} {
		for _, at := range []any{nil, "Edm.String", "Edm.Guid", "Edm.Int64"} {
			m := orig.clone()
			if at == nil {
				delete(m, prop+"@odata.type")
			} else {
				m[prop+"@odata.type"] = at
			}
			err := readErr(t, ct, m.bytes(t))
			wantKind(t, err, crypt.ErrTampered)
			var re *crypt.ReadError
			if errors.As(err, &re); re.Property != prop {
				t.Errorf("%s as %v: the error names %q", prop, at, re.Property)
			}
		}
	}
	// Signed values carry their type into the signature.
	for _, change := range []func(body){
		func(m body) { m["Level"] = "2" },
		func(m body) { m["Level@odata.type"] = "Edm.Int64"; m["Level"] = "2" },
		func(m body) { m["Level"] = 2.0; m["Level@odata.type"] = "Edm.Double" },
	} {
		m := orig.clone()
		change(m)
		wantKind(t, readErr(t, ct, m.bytes(t)), crypt.ErrTampered)
	}
	var out beaconed
	if err := ct.Unmarshal(ctx, orig.bytes(t), &out); err != nil || out != in {
		t.Fatalf("untouched body: %+v %v", out, err)
	}
	// The legacy format: a ciphertext or the encrypted name list stored as
	// a String is refused the same way.
	legacy := newOffline[legacyPerson](t, crypt.Config{Key: legacyKey(t), Legacy: true})
	b, err = os.ReadFile("testdata/legacy/dotnet.json")
	if err != nil {
		t.Fatal(err)
	}
	dotnet := parseBody(t, b)
	for _, prop := range []string{"Email", "_ClientEncryptionMetadata2"} {
		m := dotnet.clone()
		delete(m, prop+"@odata.type")
		wantKind(t, readErr(t, legacy, m.bytes(t)), crypt.ErrTampered)
	}
	var lp legacyPerson
	if err := legacy.Unmarshal(ctx, b, &lp); err != nil || lp.Email != "jonesj@contoso.com" {
		t.Fatalf("untouched legacy body: %+v %v", lp, err)
	}
}
