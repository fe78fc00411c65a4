package secondaryindex_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// Customer keeps its email encrypted, with a beacon; its tier in clear.
type Customer struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
	Name         string
	Tier         string
	Email        string `table:",encrypt"`
}

func custid(i int) string { return fmt.Sprintf("cust_%04d", i) }

// custKey is the tests' key-encryption key and beacon key: fixed, so that
// every Set of a test computes the same beacons.
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

// custIndexes are a unique index of the lower-cased encrypted email and a
// non-unique index of the tier in clear, both at placement p.
func custIndexes(p secondaryindex.Placement) []secondaryindex.Index[Customer] {
	email := secondaryindex.Index[Customer]{
		Name: "email", Unique: true, Placement: p, Encrypted: "Email",
		Key: func(c *Customer) (string, bool) { return strings.ToLower(c.Email), c.Email != "" },
	}
	tier := secondaryindex.Index[Customer]{
		Name: "tier", Placement: p,
		Key: func(c *Customer) (string, bool) { return c.Tier, c.Tier != "" },
	}
	if p == secondaryindex.TableWide {
		email.Buckets, tier.Buckets = 2, 2
	}
	return []secondaryindex.Index[Customer]{email, tier}
}

// custSet is the Set of the encrypted table name through e with the
// indexes at placement p, its processor (nil for SamePartition) and the
// function that brings the remote entries in line.
func custSet(t testing.TB, e *integration.Env, name string, qs []eventual.Queue, p secondaryindex.Placement, indexes ...secondaryindex.Index[Customer]) (*secondaryindex.Set[Customer], func()) {
	t.Helper()
	if indexes == nil {
		indexes = custIndexes(p)
	}
	cfg := secondaryindex.Config{PrimaryPrefix: "cust_", Outbox: eventual.OutboxConfig{Grace: -1}}
	settle := func() {}
	if p != secondaryindex.SamePartition {
		proc, err := eventual.New(patterntest.SameQueues(t, e, qs), nil, fast())
		if err != nil {
			t.Fatal(err)
		}
		cfg.Processor = proc
		settle = func() { drainWide(t, proc, qs) }
	}
	s, err := secondaryindex.New(custTable(t, e, name), cfg, indexes...)
	if err != nil {
		t.Fatal(err)
	}
	return s, settle
}

// plaintextIn returns what of secrets the raw scan of the tables finds,
// in clear, hex, base64 or base64url, in any key or property.
func plaintextIn(t testing.TB, secrets []string, tables ...string) []string {
	t.Helper()
	var found []string
	for _, name := range tables {
		pager := env.TableService.NewClient(name).NewListEntitiesPager(&aztables.ListEntitiesOptions{Format: to.Ptr(aztables.MetadataFormatFull)})
		for pager.More() {
			page, err := pager.NextPage(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, body := range page.Entities {
				text := strings.ToLower(string(body))
				for _, s := range secrets {
					for _, form := range []string{s, hex.EncodeToString([]byte(s)), base64.StdEncoding.EncodeToString([]byte(s)), base64.URLEncoding.EncodeToString([]byte(s)), base64.RawStdEncoding.EncodeToString([]byte(s))} {
						if strings.Contains(text, strings.ToLower(form)) {
							found = append(found, name+": "+form+" in "+string(body))
						}
					}
				}
			}
		}
	}
	return found
}

// TestEncryptedIndexes: a Set over an encrypted table (crypt.Table.Entity),
// with a unique index of the encrypted email (Encrypted: its entries keyed
// by the email's beacon) and an index of the tier in clear, in each
// placement. Lookups by the email find the customer, decrypted; the tier's
// lookup returns the customers with their decrypted emails; a duplicate
// email (in another case, the Key lower-cases it) is a *UniqueError whose
// text holds no plaintext; prefix lookups of the email are refused with
// ErrEncrypted before any request; Check finds nothing; and a raw scan of
// every row of the table (primaries, entries, outbox intents) finds none
// of the emails in clear, hex or base64.
func TestEncryptedIndexes(t *testing.T) {
	t.Parallel()
	for _, p := range []secondaryindex.Placement{secondaryindex.SamePartition, secondaryindex.OtherPartition, secondaryindex.TableWide} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			name := patterntest.Table[entity.DynamicEntity](t, env).Name()
			qs := patterntest.Queues(t, env, 1)
			s, settle := custSet(t, env, name, qs, p)
			emails := []string{"ann.secret@contoso.com", "bob.secret@contoso.com", "cy.secret@contoso.com", "dee.secret@contoso.com"}
			for i, m := range emails[:3] {
				c := Customer{PartitionKey: "eu", RowKey: custid(i), Name: fmt.Sprint("c", i), Tier: "gold", Email: m}
				if err := s.Insert(ctx, &c); err != nil {
					t.Fatalf("Insert %d: %v", i, err)
				}
			}
			if _, err := s.Modify(ctx, "eu", custid(2), func(c *Customer) error { c.Email = emails[3]; return nil }, entity.ModifyOptions{}); err != nil {
				t.Fatalf("Modify: %v", err)
			}
			settle()
			dup := Customer{PartitionKey: "eu", RowKey: custid(9), Tier: "gold", Email: strings.ToUpper(emails[0])}
			err := s.Insert(ctx, &dup)
			var ue *secondaryindex.UniqueError
			if !errors.As(err, &ue) || ue.Holder.RowKey != custid(0) {
				t.Fatalf("duplicate email: %v, want a *UniqueError naming %s", err, custid(0))
			}
			if strings.Contains(strings.ToLower(err.Error()), emails[0]) {
				t.Errorf("the error holds the plaintext: %v", err)
			}
			find := func(m string) (Customer, error) {
				if p == secondaryindex.TableWide {
					return s.LookupValue(ctx, "email", m, secondaryindex.LookupOptions{})
				}
				return s.Lookup(ctx, "email", "eu", m, secondaryindex.LookupOptions{})
			}
			for i, m := range []string{emails[0], emails[1], emails[3]} {
				want := []string{custid(0), custid(1), custid(2)}[i]
				got, err := find(m)
				if err != nil || got.RowKey != want || got.Email != m || got.ETag == "" {
					t.Errorf("lookup of email %d: %+v, %v; want %s with its email decrypted and its ETag", i, got, err, want)
				}
			}
			if _, err := find(emails[2]); !errors.Is(err, entity.ErrNotFound) {
				t.Errorf("lookup of the replaced email: %v, want ErrNotFound", err)
			}
			var tiers []Customer
			if p == secondaryindex.TableWide {
				tiers = patterntest.Collect(t, s.LookupValueAll(ctx, "tier", "gold", secondaryindex.LookupOptions{}))
			} else {
				tiers = patterntest.Collect(t, s.LookupAll(ctx, "tier", "eu", "gold", secondaryindex.LookupOptions{}))
			}
			if len(tiers) != 3 || tiers[2].Email != emails[3] || tiers[0].Email != emails[0] {
				t.Errorf("the tier's lookup: %+v, want the 3 customers with their emails", tiers)
			}
			var perr error
			if p == secondaryindex.TableWide {
				for _, err := range s.LookupValuePrefix(ctx, "email", "ann", secondaryindex.LookupOptions{}) {
					perr = err
				}
			} else {
				for _, err := range s.LookupPrefix(ctx, "email", "eu", "ann", secondaryindex.LookupOptions{}) {
					perr = err
				}
			}
			if !errors.Is(perr, secondaryindex.ErrEncrypted) || !errors.Is(perr, entity.ErrInvalid) {
				t.Errorf("a prefix lookup of the encrypted email: %v, want ErrEncrypted", perr)
			}
			if fs := patterntest.Collect(t, s.Check(ctx, secondaryindex.CheckOptions{})); len(fs) != 0 {
				t.Errorf("drift: %v", fs)
			}
			ks, all := rawScan(t, name)
			entries := 0
			for _, k := range ks {
				if _, rk, _ := strings.Cut(k, "/"); strings.HasPrefix(rk, "email_") {
					entries++
					if len(rk) != len("email_")+32 {
						t.Errorf("entry %s is not keyed by a 16-byte beacon in hex", k)
					}
					if _, ok := all[k]["Email"]; ok {
						t.Errorf("entry %s copies the encrypted Email", k)
					}
				}
			}
			if entries != 3 {
				t.Errorf("%d entries of the email, want 3: %q", entries, ks)
			}
			if leaks := plaintextIn(t, emails, name); len(leaks) != 0 {
				t.Errorf("plaintext in the table: %q", leaks)
			}
			if err := s.Delete(ctx, "eu", custid(1), ""); err != nil {
				t.Fatal(err)
			}
			settle()
			if _, err := find(emails[1]); !errors.Is(err, entity.ErrNotFound) {
				t.Errorf("lookup of a deleted customer's email: %v", err)
			}
		})
	}
}

// collide returns n values whose beacons in tbl (a beacon is keyed by
// the table's name too), cut to 1 byte, are the same.
func collide(t testing.TB, tbl *entity.Table[Customer], n int) []string {
	t.Helper()
	first := func(v string) byte {
		b, _, err := tbl.Beacon("Email", v)
		if err != nil {
			t.Fatal(err)
		}
		return b[0]
	}
	want := first("v0@x")
	out := []string{"v0@x"}
	for i := 1; len(out) < n; i++ {
		if v := fmt.Sprintf("v%d@x", i); first(v) == want {
			out = append(out, v)
		}
	}
	return out
}

// TestEncryptedBeaconCollisions cuts the index's beacons to one byte
// (TruncateBeacons), so that distinct emails share one: a lookup of each
// returns exactly its own customer, never the other holder of the beacon;
// a unique index refuses the second of two colliding values as a
// duplicate (the documented price of a collision) and never admits two
// holders of one plaintext, even once the first holder moved to another
// value (the reservation it left is taken over, the live one never); a
// non-unique index of the beacon returns only the holders of the value
// looked up.
func TestEncryptedBeaconCollisions(t *testing.T) {
	t.Parallel()
	for _, p := range []secondaryindex.Placement{secondaryindex.SamePartition, secondaryindex.TableWide} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			name := patterntest.Table[entity.DynamicEntity](t, env).Name()
			qs := patterntest.Queues(t, env, 1)
			ixs := custIndexes(p)
			all := secondaryindex.Index[Customer]{
				Name: "emails", Placement: p, Encrypted: "Email", Buckets: ixs[0].Buckets,
				Key: func(c *Customer) (string, bool) { return c.Email, c.Email != "" },
			}
			s, settle := custSet(t, env, name, qs, p, ixs[0])
			secondaryindex.TruncateBeacons(s, 1)
			vs := collide(t, custTable(t, env, name), 2)
			a, b := vs[0], vs[1]
			if err := s.Insert(ctx, &Customer{PartitionKey: "eu", RowKey: custid(1), Email: a}); err != nil {
				t.Fatal(err)
			}
			settle()
			err := s.Insert(ctx, &Customer{PartitionKey: "eu", RowKey: custid(2), Email: b})
			if !errors.Is(err, secondaryindex.ErrDuplicate) {
				t.Fatalf("a colliding value: %v, want ErrDuplicate", err)
			}
			if err := s.Insert(ctx, &Customer{PartitionKey: "eu", RowKey: custid(3), Email: a}); !errors.Is(err, secondaryindex.ErrDuplicate) {
				t.Fatalf("the same value: %v, want ErrDuplicate", err)
			}
			find := func(m string) (Customer, error) {
				if p == secondaryindex.TableWide {
					return s.LookupValue(ctx, "email", m, secondaryindex.LookupOptions{})
				}
				return s.Lookup(ctx, "email", "eu", m, secondaryindex.LookupOptions{})
			}
			if got, err := find(a); err != nil || got.RowKey != custid(1) {
				t.Errorf("lookup of a: %s, %v", got.RowKey, err)
			}
			if got, err := find(b); !errors.Is(err, entity.ErrNotFound) {
				t.Errorf("lookup of b, which its beacon's holder does not hold: %s, %v", got.RowKey, err)
			}
			// The holder of a moves to a value of another beacon: b is free,
			// and a is b's holder's only.
			other := "w@x"
			for i := 0; ; i++ {
				b1, _, _ := custTable(t, env, name).Beacon("Email", other)
				b0, _, _ := custTable(t, env, name).Beacon("Email", a)
				if b1[0] != b0[0] {
					break
				}
				other = fmt.Sprintf("w%d@x", i)
			}
			if _, err := s.Modify(ctx, "eu", custid(1), func(c *Customer) error { c.Email = other; return nil }, entity.ModifyOptions{}); err != nil {
				t.Fatal(err)
			}
			settle()
			if err := s.Insert(ctx, &Customer{PartitionKey: "eu", RowKey: custid(2), Email: b}); err != nil {
				t.Fatalf("b once free: %v", err)
			}
			settle()
			if err := s.Insert(ctx, &Customer{PartitionKey: "eu", RowKey: custid(4), Email: b}); !errors.Is(err, secondaryindex.ErrDuplicate) {
				t.Errorf("a second holder of b: %v, want ErrDuplicate", err)
			}
			if got, err := find(b); err != nil || got.RowKey != custid(2) {
				t.Errorf("lookup of b: %s, %v", got.RowKey, err)
			}
			if got, err := find(a); !errors.Is(err, entity.ErrNotFound) {
				t.Errorf("lookup of a, held by no one: %s, %v", got.RowKey, err)
			}
			if fs := patterntest.Collect(t, s.Check(ctx, secondaryindex.CheckOptions{})); len(fs) != 0 {
				t.Errorf("drift: %v", fs)
			}
			// The non-unique index alone, in a table of its own: the
			// holders of both values share one beacon's entries.
			name2 := patterntest.Table[entity.DynamicEntity](t, env).Name()
			qs2 := patterntest.Queues(t, env, 1)
			s2, settle2 := custSet(t, env, name2, qs2, p, all)
			secondaryindex.TruncateBeacons(s2, 1)
			vs = collide(t, custTable(t, env, name2), 2) // a beacon is the table's own
			a, b = vs[0], vs[1]
			for i, v := range []string{a, b, a} {
				if err := s2.Insert(ctx, &Customer{PartitionKey: "eu", RowKey: custid(i), Email: v}); err != nil {
					t.Fatal(err)
				}
			}
			settle2()
			for v, want := range map[string]string{a: custid(0) + " " + custid(2), b: custid(1)} {
				var many []Customer
				if p == secondaryindex.TableWide {
					many = patterntest.Collect(t, s2.LookupValueAll(ctx, "emails", v, secondaryindex.LookupOptions{}))
				} else {
					many = patterntest.Collect(t, s2.LookupAll(ctx, "emails", "eu", v, secondaryindex.LookupOptions{}))
				}
				var got []string
				for _, c := range many {
					if c.Email != v {
						t.Errorf("the lookup of %s returned %s, of %s", v, c.RowKey, c.Email)
					}
					got = append(got, c.RowKey)
				}
				if strings.Join(got, " ") != want {
					t.Errorf("the non-unique lookup of %s: %q, want %s", v, got, want)
				}
			}
			if fs := patterntest.Collect(t, s2.Check(ctx, secondaryindex.CheckOptions{})); len(fs) != 0 {
				t.Errorf("drift: %v", fs)
			}
		})
	}
}

// TestEncryptedUniqueRace: writers insert customers of one encrypted
// email at once (TableWide, its entries keyed by the beacon): exactly one
// wins, the others get a *UniqueError, and one entry names the winner.
func TestEncryptedUniqueRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const writers = 6
	name := patterntest.Table[entity.DynamicEntity](t, env).Name()
	qs := patterntest.Queues(t, env, 1)
	s, settle := custSet(t, env, name, qs, secondaryindex.TableWide)
	barrier := crashtest.NewBarrier(writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			if err := barrier.Wait(ctx); err != nil {
				errs[i] = err
				return
			}
			errs[i] = s.Insert(ctx, &Customer{PartitionKey: fmt.Sprint("p", i), RowKey: custid(i), Email: "race.secret@contoso.com"})
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		var ue *secondaryindex.UniqueError
		switch {
		case err == nil && winner >= 0:
			t.Errorf("writers %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !errors.As(err, &ue):
			t.Errorf("writer %d: %v, want a *UniqueError", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no writer won: %v", errs)
	}
	settle()
	got, err := s.LookupValue(ctx, "email", "race.secret@contoso.com", secondaryindex.LookupOptions{})
	if err != nil || got.RowKey != custid(winner) {
		t.Errorf("the email finds %s (%v), want the winner %s", got.RowKey, err, custid(winner))
	}
	ks, _ := rawScan(t, name)
	n := 0
	for _, k := range ks {
		if strings.Contains(k, "/email_") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d entries of the email, want 1: %q", n, ks)
	}
	if fs := patterntest.Collect(t, s.Check(ctx, secondaryindex.CheckOptions{})); len(fs) != 0 {
		t.Errorf("drift: %v", fs)
	}
}

// TestEncryptedLostReplies loses the reply of each write's transaction
// (and of a reservation's insert) on an encrypted table: azcore resends
// it, and every call reports success, the change applied once, nothing
// drifts, and no row holds the plaintext.
func TestEncryptedLostReplies(t *testing.T) {
	t.Parallel()
	for _, p := range []secondaryindex.Placement{secondaryindex.SamePartition, secondaryindex.TableWide} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			name := patterntest.Table[entity.DynamicEntity](t, env).Name()
			f := faults.New(faults.Config{})
			qs := patterntest.Queues(t, env, 1)
			s, settle := custSet(t, env.With(f), name, qs, p)
			write := isTableWrite
			f.LoseNext(2, write)
			if err := s.Insert(ctx, &Customer{PartitionKey: "eu", RowKey: custid(1), Tier: "gold", Email: "lost.secret@contoso.com"}); err != nil {
				t.Fatalf("Insert: %v", err)
			}
			f.LoseNext(2, write)
			if _, err := s.Modify(ctx, "eu", custid(1), func(c *Customer) error { c.Email = "found.secret@contoso.com"; return nil }, entity.ModifyOptions{}); err != nil {
				t.Fatalf("Modify: %v", err)
			}
			settle()
			if fs := patterntest.Collect(t, s.Check(ctx, secondaryindex.CheckOptions{})); len(fs) != 0 {
				t.Errorf("drift: %v", fs)
			}
			got, err := custTable(t, env, name).Get(ctx, "eu", custid(1))
			if err != nil || got.Email != "found.secret@contoso.com" {
				t.Errorf("stored %+v, %v", got, err)
			}
			if leaks := plaintextIn(t, []string{"lost.secret@contoso.com", "found.secret@contoso.com"}, name); len(leaks) != 0 {
				t.Errorf("plaintext in the table: %q", leaks)
			}
			f.LoseNext(1, write)
			if err := s.Delete(ctx, "eu", custid(1), ""); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			settle()
			if ks, _ := rawScan(t, name); len(ks) != 0 {
				t.Errorf("left after Delete: %q", ks)
			}
			if st := f.Stats(); st.LostReplies < 3 {
				t.Errorf("only %d replies lost", st.LostReplies)
			}
		})
	}
}

// TestEncryptedRefusals: what would put an encrypted value in an entry,
// or ask of a beacon more than equality, is refused by New with a
// *DeclarationError matching ErrInvalidConfig and entity.ErrInvalid,
// before any request: Encrypted naming a property the table stores in
// clear, one Config.Encrypt encrypts for some entities only, one without
// a beacon, Encrypted over a plain table, and Properties copying an
// encrypted property.
func TestEncryptedRefusals(t *testing.T) {
	t.Parallel()
	name := "encryptedrefusalsnotcreated"
	enc := custTable(t, env, name)
	key, _ := crypt.NewLocalKey("k", bytes.Repeat([]byte{7}, 32))
	base, err := entity.NewTableFromService[Customer](env.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	noBeacon, err := crypt.New(base, crypt.Config{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	bags, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	maybe, err := crypt.New(bags, crypt.Config{Key: key, Encryptable: []string{"Email"}, Encrypt: func(_, rk, _ string) bool { return rk != "clear" }, Beacons: []string{"Email"}, BeaconKey: bytes.Repeat([]byte{9}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	idx := func(prop string, props ...string) secondaryindex.Index[Customer] {
		return secondaryindex.Index[Customer]{Name: "email", Encrypted: prop, Properties: props, Key: func(c *Customer) (string, bool) { return c.Email, true }}
	}
	cases := []struct {
		name string
		err  error
		say  string
	}{}
	add := func(n string, err error, say string) {
		cases = append(cases, struct {
			name string
			err  error
			say  string
		}{n, err, say})
	}
	_, err = secondaryindex.New(enc, secondaryindex.Config{}, idx("Tier"))
	add("a property in clear", err, "stores in clear")
	_, err = secondaryindex.New(enc, secondaryindex.Config{}, idx("Nope"))
	add("no such property", err, "does not store")
	_, err = secondaryindex.New(noBeacon.Entity(), secondaryindex.Config{}, idx("Email"))
	add("a property without a beacon", err, "Config.Beacons")
	_, err = secondaryindex.New(maybe.Entity(), secondaryindex.Config{}, secondaryindex.Index[entity.DynamicEntity]{Name: "email", Encrypted: "Email", Key: func(d *entity.DynamicEntity) (string, bool) { return entity.Prop[string](d, "Email") }})
	add("a property encrypted for some entities", err, "some entities only")
	_, err = secondaryindex.New(base, secondaryindex.Config{}, idx("Email"))
	add("Encrypted on a plain table", err, "not encrypted")
	_, err = secondaryindex.New(enc, secondaryindex.Config{}, idx("Email", "Name", "Email"))
	add("Properties copying the encrypted property", err, "encrypts")
	_, err = secondaryindex.New(enc, secondaryindex.Config{}, idx("", "Email"))
	add("Properties copying it from a plain index", err, "encrypts")
	for _, c := range cases {
		var de *secondaryindex.DeclarationError
		if !errors.As(c.err, &de) || !errors.Is(c.err, entity.ErrInvalid) || !strings.Contains(c.err.Error(), c.say) {
			t.Errorf("%s: %v, want a *DeclarationError matching entity.ErrInvalid that says %q", c.name, c.err, c.say)
		}
	}
	if _, err := secondaryindex.New(enc, secondaryindex.Config{}, idx("Email", "Name")); err != nil {
		t.Errorf("an index of the encrypted email copying the clear name: %v", err)
	}
}

// TestEncryptedUndeclared: an index of the encrypted email that does not
// declare Encrypted would key its entries by the plaintext; a write whose
// index value holds the value of a property the table encrypts is
// refused, before any request (the table does not exist), with a
// *KeyError matching entity.ErrInvalid that names the property and holds
// no plaintext (an index of a clear property on the same kind of table is
// taken: TestEncryptedIndexes' tier).
func TestEncryptedUndeclared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := custTable(t, env, "encryptedundeclarednotcreated")
	s, err := secondaryindex.New(tbl, secondaryindex.Config{}, secondaryindex.Index[Customer]{
		Name: "email", Unique: true,
		Key: func(c *Customer) (string, bool) { return "x-" + strings.ToLower(c.Email), c.Email != "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Insert(ctx, &Customer{PartitionKey: "eu", RowKey: custid(1), Email: "Hidden.Secret@contoso.com"})
	var ke *secondaryindex.KeyError
	if !errors.As(err, &ke) || !errors.Is(err, entity.ErrInvalid) || !strings.Contains(err.Error(), "Index.Encrypted") {
		t.Fatalf("an undeclared index of the encrypted email: %v, want a *KeyError matching entity.ErrInvalid", err)
	}
	if strings.Contains(strings.ToLower(err.Error()), "hidden.secret") {
		t.Errorf("the error holds the plaintext: %v", err)
	}
	err = s.Update(ctx, &Customer{PartitionKey: "eu", RowKey: custid(1), Email: "Hidden.Secret@contoso.com", ETag: "W/\"x\""})
	if !errors.As(err, &ke) {
		t.Errorf("Update: %v, want a *KeyError", err)
	}
}

// TestEncryptedCrashAtEveryStep changes a customer's encrypted email,
// indexed unique and TableWide by its beacon, and kills the process after
// each storage request in turn (the writer's read, reservation,
// transaction with the outbox intent, enqueue, then the worker's). Before
// recovery a lookup of the old or new email never returns a customer that
// does not hold it; recovery (the call again, the relay, a worker that
// drains) leaves no drift, the new email found, the old one free, and no
// row holding either in clear.
func TestEncryptedCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	const oldEmail, newEmail = "old.secret@contoso.com", "new.secret@contoso.com"
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Timeout: time.Minute, Prepare: func(t *testing.T) crashtest.Run {
		ctx := context.Background()
		name := patterntest.Table[entity.DynamicEntity](t, env).Name()
		qs := patterntest.Queues(t, env, 1)
		s, settle := custSet(t, env, name, qs, secondaryindex.TableWide)
		if err := s.Insert(ctx, &Customer{PartitionKey: "eu", RowKey: custid(0), Tier: "gold", Email: oldEmail}); err != nil {
			t.Fatal(err)
		}
		settle()
		change := func(c *Customer) error { c.Email = newEmail; return nil }
		var wrote bool
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				done := make(chan struct{})
				var once sync.Once
				cfg := crashy()
				cfg.Hooks.Outcome = func(o eventual.Outcome) {
					if o.Result == eventual.Done {
						once.Do(func() { close(done) })
					}
				}
				kp, err := eventual.New(patterntest.SameQueues(t, kenv, qs), nil, cfg)
				if err != nil {
					return err
				}
				ks, err := secondaryindex.New(custTable(t, kenv, name), secondaryindex.Config{PrimaryPrefix: "cust_", Processor: kp, Outbox: eventual.OutboxConfig{Grace: -1}}, custIndexes(secondaryindex.TableWide)...)
				if err != nil {
					return err
				}
				if _, err := ks.Modify(ctx, "eu", custid(0), change, entity.ModifyOptions{}); err != nil {
					return err
				}
				wrote = true
				rctx, cancel := context.WithCancel(ctx)
				ran := make(chan error, 1)
				go func() { ran <- kp.Run(rctx) }()
				select {
				case <-done:
				case <-ctx.Done():
				}
				cancel()
				return <-ran
			},
			Crashed: func(t *testing.T, passed int) {
				for _, m := range []string{oldEmail, newEmail} {
					c, err := s.LookupValue(context.Background(), "email", m, secondaryindex.LookupOptions{})
					if err == nil && c.Email != m {
						t.Errorf("after %d requests a lookup of %s returned %s holding %s", passed, m, c.RowKey, c.Email)
					}
				}
			},
			Recover: func(ctx context.Context) error {
				if !wrote {
					if _, err := s.Modify(ctx, "eu", custid(0), change, entity.ModifyOptions{}); err != nil {
						return err
					}
				}
				if _, err := s.Relay(ctx); err != nil {
					return err
				}
				settle()
				return nil
			},
			Check: func(t *testing.T) {
				ctx := context.Background()
				if fs := patterntest.Collect(t, s.Check(ctx, secondaryindex.CheckOptions{})); len(fs) != 0 {
					t.Errorf("drift: %v", fs)
				}
				if c, err := s.LookupValue(ctx, "email", newEmail, secondaryindex.LookupOptions{}); err != nil || c.RowKey != custid(0) {
					t.Errorf("lookup of the new email: %+v, %v", c, err)
				}
				if _, err := s.LookupValue(ctx, "email", oldEmail, secondaryindex.LookupOptions{}); !errors.Is(err, entity.ErrNotFound) {
					t.Errorf("the old email: %v", err)
				}
				if err := s.Insert(ctx, &Customer{PartitionKey: "us", RowKey: custid(1), Email: oldEmail}); err != nil {
					t.Errorf("the old email, free again: %v", err)
				}
				if leaks := plaintextIn(t, []string{oldEmail, newEmail}, name); len(leaks) != 0 {
					t.Errorf("plaintext in the table: %q", leaks)
				}
			},
		}
	}})
	if n < 8 {
		t.Errorf("the scenario made %d requests", n)
	}
}

// TestEncryptedEntriesTable: Config.Entries may be an encrypted table
// too: the entries, which hold beacons and clear properties only, are
// written to it as they are, found by lookups and checked by Check, and
// neither table holds the email in clear.
func TestEncryptedEntriesTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	name, entriesName := patterntest.Table[entity.DynamicEntity](t, env).Name(), patterntest.Table[entity.DynamicEntity](t, env).Name()
	key, err := crypt.NewLocalKey("entries", bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	bags, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, entriesName)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := crypt.New(bags, crypt.Config{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	qs := patterntest.Queues(t, env, 1)
	p, err := eventual.New(qs, nil, fast())
	if err != nil {
		t.Fatal(err)
	}
	s, err := secondaryindex.New(custTable(t, env, name), secondaryindex.Config{PrimaryPrefix: "cust_", Processor: p, Entries: entries.Entity(), Outbox: eventual.OutboxConfig{Grace: -1}}, custIndexes(secondaryindex.OtherPartition)...)
	if err != nil {
		t.Fatal(err)
	}
	const email = "entries.secret@contoso.com"
	if err := s.Insert(ctx, &Customer{PartitionKey: "eu", RowKey: custid(1), Tier: "gold", Email: email}); err != nil {
		t.Fatal(err)
	}
	drainWide(t, p, qs)
	if c, err := s.Lookup(ctx, "email", "eu", email, secondaryindex.LookupOptions{}); err != nil || c.RowKey != custid(1) || c.Email != email {
		t.Errorf("lookup: %+v, %v", c, err)
	}
	if fs := patterntest.Collect(t, s.Check(ctx, secondaryindex.CheckOptions{})); len(fs) != 0 {
		t.Errorf("drift: %v", fs)
	}
	if ks, _ := rawScan(t, entriesName); len(ks) != 2 {
		t.Errorf("the entries' table holds %q, want the email's and the tier's entries", ks)
	}
	if leaks := plaintextIn(t, []string{email}, name, entriesName); len(leaks) != 0 {
		t.Errorf("plaintext: %q", leaks)
	}
}
