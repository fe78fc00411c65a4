package secondaryindex_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// rotCust opens the encrypted customers table name under the
// key-encryption key wrap and the beacon key of byte b; plain reads
// entities without encryption metadata as plaintext.
func rotCust(t *testing.T, name string, wrap crypt.KeyWrapper, b byte, plain bool) *crypt.Table[Customer] {
	t.Helper()
	base, err := entity.NewTableFromService[Customer](env.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := crypt.New(base, crypt.Config{Key: wrap, Beacons: []string{"Email"}, BeaconKey: bytes.Repeat([]byte{b}, 32), ReadPlaintext: plain})
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

// TestEncryptedIndexAcrossRotation: a SamePartition unique index of the
// encrypted email lives in the customers' table. Rotate (rewrap), Rotate
// with Reencrypt, and Rotate with Reencrypt by a table that reads
// plaintext entities (which would read an entry as a Customer and rewrite
// it without its primary's keys) move the customers to a new
// key-encryption key and leave the index's entries exactly as they were:
// lookups with the new key alone find every customer, Check finds no
// drift, and no entry property changed. Opened with another beacon key,
// the index finds none of them.
func TestEncryptedIndexAcrossRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	name := patterntest.Table[entity.DynamicEntity](t, env).Name()
	oldKey, err := crypt.NewLocalKey("old", bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	newKey, err := crypt.NewLocalKey("new", bytes.Repeat([]byte{8}, 32))
	if err != nil {
		t.Fatal(err)
	}
	set := func(ct *crypt.Table[Customer]) *secondaryindex.Set[Customer] {
		s, err := secondaryindex.New(ct.Entity(), secondaryindex.Config{PrimaryPrefix: "cust_"}, custIndexes(secondaryindex.SamePartition)...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	emails := []string{"ann.rot@contoso.com", "bob.rot@contoso.com", "cy.rot@contoso.com"}
	s := set(rotCust(t, name, oldKey, 9, false))
	for i, m := range emails {
		if err := s.Insert(ctx, &Customer{PartitionKey: "eu", RowKey: custid(i), Name: fmt.Sprint("c", i), Tier: "gold", Email: m}); err != nil {
			t.Fatal(err)
		}
	}
	_, before := rawScan(t, name)
	for _, c := range []struct {
		name             string
		reencrypt, plain bool
	}{{"rewrap", false, false}, {"reencrypt", true, false}, {"reencrypt, reading plaintext", true, true}} {
		reencrypt := c.name
		res, err := rotCust(t, name, crypt.Keyring(newKey, oldKey), 9, c.plain).Rotate(ctx, crypt.RotateOptions{Reencrypt: c.reencrypt})
		if err != nil {
			t.Fatalf("Rotate (%s): %v", c.name, err)
		}
		want := crypt.RotateResult{Scanned: 9, Rewrapped: 3, Skipped: 6}
		if c.reencrypt {
			want = crypt.RotateResult{Scanned: 9, Reencrypted: 3, Skipped: 6, Kept: 6}
		}
		if res.Scanned != want.Scanned || res.Rewrapped != want.Rewrapped || res.Reencrypted != want.Reencrypted || res.Skipped != want.Skipped || res.Kept != want.Kept {
			t.Errorf("Rotate (%s): %+v, want %+v", c.name, res, want)
		}
		after := set(rotCust(t, name, newKey, 9, false))
		for i, m := range emails {
			got, err := after.Lookup(ctx, "email", "eu", m, secondaryindex.LookupOptions{})
			if err != nil || got.RowKey != custid(i) || got.Email != m {
				t.Errorf("%s: lookup of email %d with the new key alone: %+v, %v", reencrypt, i, got, err)
			}
		}
		if fs := patterntest.Collect(t, after.Check(ctx, secondaryindex.CheckOptions{})); len(fs) != 0 {
			t.Errorf("%s: drift: %v", reencrypt, fs)
		}
		_, now := rawScan(t, name)
		for k, e := range before {
			if _, isEntry := e["Email"]; isEntry {
				continue
			}
			for p, v := range e {
				if p == "Timestamp" || p == "odata.etag" || p == "Timestamp@odata.type" {
					continue
				}
				if fmt.Sprint(now[k][p]) != fmt.Sprint(v) {
					t.Errorf("%s: entry %s: %s is %v, was %v", reencrypt, k, p, now[k][p], v)
				}
			}
			if len(now[k]) != len(e) {
				t.Errorf("%s: entry %s: %v, was %v", reencrypt, k, now[k], e)
			}
		}
	}
	// Another beacon key computes other beacons: the index finds none of
	// the customers (and never a wrong one).
	other := set(rotCust(t, name, newKey, 10, false))
	for i, m := range emails {
		if got, err := other.Lookup(ctx, "email", "eu", m, secondaryindex.LookupOptions{}); !errors.Is(err, entity.ErrNotFound) {
			t.Errorf("lookup of email %d under another beacon key: %+v, %v; want ErrNotFound", i, got, err)
		}
	}
}
