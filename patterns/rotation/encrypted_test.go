package rotation_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/rotation"
)

// Login is an attempt whose client address is encrypted.
type Login struct {
	PartitionKey string
	RowKey       string
	ETag         string
	At           time.Time
	Address      string `table:",encrypt"`
}

// TestEncryptedPeriods: a rotation whose Config.Open wraps each period
// table in a crypt Table writes its entities encrypted into every period
// table it makes — read back raw, no table holds an address in clear, in
// hex or in base64 — and reads them back decrypted across the periods; a
// period table moved under another's name fails to decrypt (the
// ciphertexts are bound to their table), and an Open that returns a table
// of another name is refused.
func TestEncryptedPeriods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	kek := make([]byte, 32)
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	key, err := crypt.NewLocalKey("rotation", kek)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	open := func(t *entity.Table[Login]) (*entity.Table[Login], error) {
		ct, err := crypt.New(t, crypt.Config{Key: key})
		if err != nil {
			return nil, err
		}
		return ct.Entity(), nil
	}
	catalog := env.TableService.NewClient(f.catalog)
	r, err := rotation.New(env.TableService, catalog, rotation.Config[Login]{Name: f.name, Period: rotation.Hour,
		Time: func(l *Login) time.Time { return l.At }, Open: open})
	if err != nil {
		t.Fatal(err)
	}
	var logins []Login
	secret := func(i int) string { return fmt.Sprintf("203.0.113.%d-secret-%x", i, kek[:4]) }
	for i := range 12 {
		at := base.Add(time.Duration(i) * 20 * time.Minute) // four hours
		logins = append(logins, Login{PartitionKey: "user1", RowKey: keys.TicksKeySeq(at, uint32(i)), At: at, Address: secret(i)})
	}
	if _, err := r.BulkWrite(ctx, logins, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}

	n := 0
	for l, err := range r.Query(ctx, base, base.Add(4*time.Hour), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		if want := logins[n].Address; l.Address != want {
			t.Errorf("login %d: address %q, want %q", n, l.Address, want)
		}
		n++
	}
	if n != len(logins) {
		t.Errorf("Query read %d logins, want %d", n, len(logins))
	}

	tables := tablesOf(t, f.name)
	if len(tables) < 4 {
		t.Fatalf("tables %v: want one per hour", tables)
	}
	for _, name := range tables {
		for p := env.TableService.NewClient(name).NewListEntitiesPager(nil); p.More(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, raw := range page.Entities {
				for i := range logins {
					s := []byte(secret(i))
					for _, form := range [][]byte{s, []byte(hex.EncodeToString(s)), []byte(base64.StdEncoding.EncodeToString(s))} {
						if bytes.Contains(raw, form) {
							t.Errorf("table %s holds login %d's address in clear: %s", name, i, raw)
						}
					}
				}
			}
		}
	}

	// Each ciphertext is bound to its period's table: the first period's
	// entity, copied raw into the second's table, does not decrypt there.
	first, second := tables[0], tables[1]
	rawFirst, err := env.TableService.NewClient(first).NewListEntitiesPager(nil).NextPage(ctx)
	if err != nil || len(rawFirst.Entities) == 0 {
		t.Fatalf("first period: %v", err)
	}
	var moved entity.DynamicEntity
	if err := entity.Unmarshal(rawFirst.Entities[0], &moved); err != nil {
		t.Fatal(err)
	}
	if _, err := env.TableService.NewClient(second).AddEntity(ctx, rawFirst.Entities[0], nil); err != nil {
		t.Fatal(err)
	}
	opened, err := open(mustTable[Login](t, second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := opened.Get(ctx, moved.PartitionKey, moved.RowKey); !errors.Is(err, crypt.ErrTampered) {
		t.Errorf("a period's entity read from another period's table: %v, want crypt.ErrTampered", err)
	}

	// Open must keep the table's name.
	other, err := rotation.New(env.TableService, catalog, rotation.Config[Login]{Name: f.name, Period: rotation.Hour,
		Time: func(l *Login) time.Time { return l.At },
		Open: func(*entity.Table[Login]) (*entity.Table[Login], error) { return mustTable[Login](t, "elsewhere"), nil }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.BulkWrite(ctx, logins[:1], entity.BulkOptions{})
	var ce *rotation.ConfigError
	if !errors.As(err, &ce) || ce.Field != "Open" {
		t.Errorf("an Open returning another table: %v, want a *ConfigError on Open", err)
	}
}

func mustTable[T any](t testing.TB, name string) *entity.Table[T] {
	t.Helper()
	tbl, err := entity.NewTableFromService[T](env.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}
