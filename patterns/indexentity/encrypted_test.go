package indexentity_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// Customer keeps its email encrypted, with a beacon; its tier in clear.
type Customer struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
	Tier         string
	Email        string `table:",encrypt"`
}

func custid(i int) string { return fmt.Sprintf("cust_%04d", i) }

// custTable is the encrypted table name through e: a fixed key and
// beacon key, so that every Set of a test computes the same beacons.
func custTable(t testing.TB, e *integration.Env, name string) *entity.Table[Customer] {
	t.Helper()
	key, err := crypt.NewLocalKey("customers", bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	base, err := entity.NewTableFromService[Customer](e.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := crypt.New(base, crypt.Config{Key: key, Beacons: []string{"Email"}, BeaconKey: bytes.Repeat([]byte{9}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	return ct.Entity()
}

func emailIndex(p indexentity.Placement) indexentity.Index[Customer] {
	ix := indexentity.Index[Customer]{
		Name: "email", Placement: p, Encrypted: "Email",
		Value: func(c *Customer) (string, bool) { return strings.ToLower(c.Email), c.Email != "" },
	}
	if p == indexentity.TableWide {
		ix.Buckets = 2
	}
	return ix
}

// custSet is the Set of the encrypted table name with the email index at
// placement p, the function that brings remote lists in line, and, for
// Blob, the container of the lists.
func custSet(t testing.TB, name string, p indexentity.Placement) (*indexentity.Set[Customer], func(), *container.Client) {
	t.Helper()
	cfg := indexentity.Config{PrimaryPrefix: "cust_", Outbox: eventual.OutboxConfig{Grace: -1}}
	if p == indexentity.Blob {
		cfg.Blobs = env.Container(t)
	}
	settle := func() {}
	if p != indexentity.SamePartition {
		qs := patterntest.Queues(t, env, 1)
		proc, err := eventual.New(qs, nil, patterntest.Fast())
		if err != nil {
			t.Fatal(err)
		}
		cfg.Processor = proc
		settle = func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := patterntest.Drain(ctx, proc, qs); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, err := indexentity.New(custTable(t, env, name), cfg, emailIndex(p))
	if err != nil {
		t.Fatal(err)
	}
	return s, settle, cfg.Blobs
}

// lookupEmails returns the RowKeys and emails a lookup of value finds.
func lookupEmails(t testing.TB, s *indexentity.Set[Customer], p indexentity.Placement, value string) []string {
	t.Helper()
	ctx := context.Background()
	seq := s.LookupAll(ctx, "email", "eu", value, indexentity.LookupOptions{})
	if p == indexentity.TableWide {
		seq = s.LookupValueAll(ctx, "email", value, indexentity.LookupOptions{})
	}
	var out []string
	for _, c := range patterntest.Collect(t, seq) {
		out = append(out, c.RowKey+" "+c.Email)
	}
	return out
}

// forms are the ways a secret may be stored: as it is, hex, base64.
func forms(s string) []string {
	b := []byte(s)
	return []string{s, hex.EncodeToString(b), base64.StdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b)}
}

// plaintextInBlobs returns what of secrets the names and contents of the
// blobs of c hold, in clear, hex or base64.
func plaintextInBlobs(t testing.TB, c *container.Client, secrets ...string) []string {
	t.Helper()
	ctx := context.Background()
	var found []string
	n := 0
	for pager := c.NewListBlobsFlatPager(nil); pager.More(); {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Segment.BlobItems {
			n++
			resp, err := c.NewBlobClient(*b.Name).DownloadStream(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			text := strings.ToLower(*b.Name + " " + string(body))
			for _, s := range secrets {
				for _, form := range forms(s) {
					if strings.Contains(text, strings.ToLower(form)) {
						found = append(found, form+" in blob "+*b.Name)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Errorf("no list blob to scan")
	}
	return found
}

// plaintextIn returns what of secrets a raw scan of the table finds, in
// clear, hex or base64, in any key or property.
func plaintextIn(t testing.TB, name string, secrets ...string) []string {
	t.Helper()
	var found []string
	pager := env.TableService.NewClient(name).NewListEntitiesPager(&aztables.ListEntitiesOptions{Format: to.Ptr(aztables.MetadataFormatFull)})
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range page.Entities {
			text := strings.ToLower(string(body))
			for _, s := range secrets {
				for _, form := range forms(s) {
					if strings.Contains(text, strings.ToLower(form)) {
						found = append(found, form+" in "+string(body))
					}
				}
			}
		}
	}
	return found
}

// TestEncryptedLists: a Set over an encrypted table (crypt.Table.Entity)
// whose index of the encrypted email declares Encrypted, in each
// placement (Blob: lists in blobs): its lists are kept under the email's beacon, a lookup
// returns the customers holding the email, decrypted, and none that held it before; Check finds nothing;
// and a raw scan of every row (primaries, index entities, outbox intents)
// and of every list blob (its name and content) finds no email in clear,
// hex or base64.
func TestEncryptedLists(t *testing.T) {
	t.Parallel()
	for _, p := range []indexentity.Placement{indexentity.SamePartition, indexentity.OtherPartition, indexentity.TableWide, indexentity.Blob} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			name := patterntest.Table[entity.DynamicEntity](t, env).Name()
			s, settle, blobs := custSet(t, name, p)
			emails := []string{"ann.secret@contoso.com", "bob.secret@contoso.com"}
			for i, m := range []string{emails[0], emails[1], emails[0]} {
				if err := s.Insert(ctx, &Customer{PartitionKey: "eu", RowKey: custid(i), Tier: "gold", Email: m}); err != nil {
					t.Fatalf("Insert %d: %v", i, err)
				}
			}
			if _, err := s.Modify(ctx, "eu", custid(1), func(c *Customer) error { c.Email = emails[0]; return nil }, entity.ModifyOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, "eu", custid(2), ""); err != nil {
				t.Fatal(err)
			}
			settle()
			got := strings.Join(lookupEmails(t, s, p, emails[0]), ", ")
			if want := custid(0) + " " + emails[0] + ", " + custid(1) + " " + emails[0]; got != want {
				t.Errorf("lookup: %s, want %s", got, want)
			}
			if got := lookupEmails(t, s, p, emails[1]); len(got) != 0 {
				t.Errorf("lookup of the replaced email: %q", got)
			}
			noDrift(t, s)
			if leaks := plaintextIn(t, name, emails...); len(leaks) != 0 {
				t.Errorf("plaintext in the table: %q", leaks)
			}
			if blobs != nil {
				if leaks := plaintextInBlobs(t, blobs, emails...); len(leaks) != 0 {
					t.Errorf("plaintext in the lists' blobs: %q", leaks)
				}
			}
		})
	}
}

// collide returns two values whose beacons in tbl, cut to 1 byte, are the
// same.
func collide(t testing.TB, tbl *entity.Table[Customer]) (string, string) {
	t.Helper()
	first := func(v string) byte {
		b, _, err := tbl.Beacon("Email", v)
		if err != nil {
			t.Fatal(err)
		}
		return b[0]
	}
	for i := 1; ; i++ {
		if v := fmt.Sprintf("v%d@x", i); first(v) == first("v0@x") {
			return "v0@x", v
		}
	}
}

// TestEncryptedListCollisions cuts the beacons to one byte
// (TruncateBeacons), so that two emails share one list: a lookup of each
// returns exactly its own holders, Check finds nothing (the holders of
// the other value belong on the list), and a lookup with Repair removes
// none of them.
func TestEncryptedListCollisions(t *testing.T) {
	t.Parallel()
	for _, p := range []indexentity.Placement{indexentity.SamePartition, indexentity.TableWide} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			name := patterntest.Table[entity.DynamicEntity](t, env).Name()
			s, settle, _ := custSet(t, name, p)
			indexentity.TruncateBeacons(s, 1)
			a, b := collide(t, custTable(t, env, name))
			for i, v := range []string{a, b, a} {
				if err := s.Insert(ctx, &Customer{PartitionKey: "eu", RowKey: custid(i), Email: v}); err != nil {
					t.Fatal(err)
				}
			}
			settle()
			for range 2 {
				if got, want := strings.Join(lookupEmails(t, s, p, a), ", "), custid(0)+" "+a+", "+custid(2)+" "+a; got != want {
					t.Errorf("lookup of a: %s, want %s", got, want)
				}
				if got, want := strings.Join(lookupEmails(t, s, p, b), ", "), custid(1)+" "+b; got != want {
					t.Errorf("lookup of b: %s, want %s", got, want)
				}
				for range s.LookupAll(ctx, "email", "eu", a, indexentity.LookupOptions{Repair: true}) {
				}
				for range s.LookupValueAll(ctx, "email", b, indexentity.LookupOptions{Repair: true}) {
				}
				settle()
			}
			noDrift(t, s)
		})
	}
}

// TestEncryptedListRefusals: New refuses Encrypted over a plain table and
// naming a property stored in clear, with a *DeclarationError matching
// entity.ErrInvalid; a write whose value in an index not declared
// Encrypted holds the encrypted email is refused before any request (the
// table does not exist) with a *KeyError naming the property, not the
// value.
func TestEncryptedListRefusals(t *testing.T) {
	t.Parallel()
	name := "encryptedlistsnotcreated"
	enc := custTable(t, env, name)
	plain, err := entity.NewTableFromService[Customer](env.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	tier := emailIndex(indexentity.SamePartition)
	tier.Encrypted = "Tier"
	for what, err := range map[string]error{
		"Encrypted over a plain table": func() error {
			_, err := indexentity.New(plain, indexentity.Config{}, emailIndex(indexentity.SamePartition))
			return err
		}(),
		"Encrypted naming a clear property": func() error { _, err := indexentity.New(enc, indexentity.Config{}, tier); return err }(),
	} {
		var de *indexentity.DeclarationError
		if !errors.As(err, &de) || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%s: %v, want a *DeclarationError", what, err)
		}
	}
	undeclared := emailIndex(indexentity.SamePartition)
	undeclared.Encrypted = ""
	s, err := indexentity.New(enc, indexentity.Config{}, undeclared)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Insert(context.Background(), &Customer{PartitionKey: "eu", RowKey: custid(1), Email: "Hidden.Secret@contoso.com"})
	var ke *indexentity.KeyError
	if !errors.As(err, &ke) || !errors.Is(err, entity.ErrInvalid) || strings.Contains(strings.ToLower(err.Error()), "hidden.secret") {
		t.Errorf("an undeclared index of the encrypted email: %v, want a *KeyError without the plaintext", err)
	}
}
