package secondaryindex_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// PlainCustomer is Customer with its email in clear.
type PlainCustomer struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
	Name         string
	Tier         string
	Email        string
}

func benchCustomer(i int) Customer {
	return Customer{PartitionKey: "eu", RowKey: custid(i), Name: "Ann", Tier: "gold", Email: fmt.Sprintf("ann%d@contoso.com", i)}
}

// encryptedSet is the Set of a new encrypted table on e with a unique
// SamePartition index of the email (Encrypted: keyed by its beacon).
func encryptedSet(b *testing.B, e *integration.Env) *secondaryindex.Set[Customer] {
	b.Helper()
	s, err := secondaryindex.New(custTable(b, e, patterntest.Table[entity.DynamicEntity](b, e).Name()), secondaryindex.Config{PrimaryPrefix: "cust_"}, custIndexes(secondaryindex.SamePartition)[0])
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// plainSet is the same Set over a plain table, its index keyed by the
// email itself.
func plainSet(b *testing.B, e *integration.Env) *secondaryindex.Set[PlainCustomer] {
	b.Helper()
	s, err := secondaryindex.New(patterntest.Table[PlainCustomer](b, e), secondaryindex.Config{PrimaryPrefix: "cust_"}, secondaryindex.Index[PlainCustomer]{
		Name: "email", Unique: true,
		Key: func(c *PlainCustomer) (string, bool) { return strings.ToLower(c.Email), c.Email != "" },
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkEncryptedInsert inserts customers with a unique SamePartition
// index of their email: encrypted, the entry keyed by the email's beacon
// (/tablekit-encrypted), in clear (/tablekit-plain), and the customer
// alone with aztables (/raw); /paired alternates the three.
func BenchmarkEncryptedInsert(b *testing.B) {
	ctx := context.Background()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	enc := func(s *secondaryindex.Set[Customer], i int) {
		c := benchCustomer(i)
		if err := s.Insert(ctx, &c); err != nil {
			b.Fatal(err)
		}
	}
	plain := func(s *secondaryindex.Set[PlainCustomer], i int) {
		c := PlainCustomer(benchCustomer(i))
		if err := s.Insert(ctx, &c); err != nil {
			b.Fatal(err)
		}
	}
	raw := func(e *integration.Env) func(i int) {
		c := e.Table(b)
		return func(i int) {
			m := benchCustomer(i)
			body := fmt.Appendf(nil, `{"PartitionKey":%q,"RowKey":%q,"Name":%q,"Tier":%q,"Email":%q}`, m.PartitionKey, m.RowKey, m.Name, m.Tier, m.Email)
			if _, err := c.AddEntity(ctx, body, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("tablekit-encrypted", func(b *testing.B) {
		s := encryptedSet(b, metered)
		start := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			enc(s, i)
		}
		perOp(b, meter, start)
	})
	b.Run("tablekit-plain", func(b *testing.B) {
		s := plainSet(b, metered)
		start := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			plain(s, i)
		}
		perOp(b, meter, start)
	})
	b.Run("raw", func(b *testing.B) {
		op := raw(metered)
		start := meter.Snapshot()
		for i := 0; b.Loop(); i++ {
			op(i)
		}
		perOp(b, meter, start)
	})
	b.Run("paired", func(b *testing.B) {
		se, sp, op := encryptedSet(b, env), plainSet(b, env), raw(env)
		paired(b, []string{"encrypted", "plain", "raw"},
			func(i int) { enc(se, i) }, func(i int) { plain(sp, i) }, op)
	})
}

// BenchmarkEncryptedLookup looks customers up by their email in a unique
// SamePartition index: encrypted (/tablekit-encrypted: the beacon's entry,
// then the customer read and decrypted, as every lookup of an encrypted
// table verifies), in clear with Verify (/tablekit-plain-verify: the same
// two reads) and without (/tablekit-plain: the entry's copy), and the
// customer read by its keys with aztables (/raw); /paired alternates
// them.
func BenchmarkEncryptedLookup(b *testing.B) {
	ctx := context.Background()
	meter := cost.NewMeter()
	metered := env.With(meter.Policy())
	const n = 64
	fill := func(b *testing.B, e *integration.Env) (*secondaryindex.Set[Customer], *secondaryindex.Set[PlainCustomer]) {
		se, sp := encryptedSet(b, e), plainSet(b, e)
		for i := range n {
			c := benchCustomer(i)
			p := PlainCustomer(c)
			if err := se.Insert(ctx, &c); err != nil {
				b.Fatal(err)
			}
			if err := sp.Insert(ctx, &p); err != nil {
				b.Fatal(err)
			}
		}
		return se, sp
	}
	email := func(i int) string { return benchCustomer(i % n).Email }
	enc := func(s *secondaryindex.Set[Customer], i int) {
		if c, err := s.Lookup(ctx, "email", "eu", email(i), secondaryindex.LookupOptions{}); err != nil || c.Email != email(i) {
			b.Fatal(c, err)
		}
	}
	plain := func(s *secondaryindex.Set[PlainCustomer], i int, verify bool) {
		if c, err := s.Lookup(ctx, "email", "eu", email(i), secondaryindex.LookupOptions{Verify: verify}); err != nil || c.Email != email(i) {
			b.Fatal(c, err)
		}
	}
	raw := func(e *integration.Env, name string) func(i int) {
		c := e.TableService.NewClient(name)
		return func(i int) {
			if _, err := c.GetEntity(ctx, "eu", custid(i%n), nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	se, sp := fill(b, metered)
	plainTable := patterntest.Table[PlainCustomer](b, metered)
	for i := range n {
		c := PlainCustomer(benchCustomer(i))
		if err := plainTable.Insert(ctx, &c); err != nil {
			b.Fatal(err)
		}
	}
	run := func(name string, op func(i int)) {
		b.Run(name, func(b *testing.B) {
			start := meter.Snapshot()
			for i := 0; b.Loop(); i++ {
				op(i)
			}
			perOp(b, meter, start)
		})
	}
	run("tablekit-encrypted", func(i int) { enc(se, i) })
	run("tablekit-plain-verify", func(i int) { plain(sp, i, true) })
	run("tablekit-plain", func(i int) { plain(sp, i, false) })
	run("raw", raw(metered, plainTable.Name()))
	b.Run("paired", func(b *testing.B) {
		op := raw(env, plainTable.Name())
		paired(b, []string{"encrypted", "plain-verify", "plain", "raw"},
			func(i int) { enc(se, i) }, func(i int) { plain(sp, i, true) }, func(i int) { plain(sp, i, false) }, op)
	})
}
