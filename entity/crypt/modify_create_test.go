package crypt_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
)

// TestModifyCreate: Modify with Create on an encrypted table creates the
// missing entity from the zero value, changed, and inserts it encrypted —
// read raw, the plaintext is nowhere — also when 10 writers race to
// create it, each change applied once.
func TestModifyCreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ct, raw := onAzurite[person](t, env, crypt.Config{})
	const writers = 10
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ct.Modify(ctx, "Sales", "new", func(p *person) error {
				p.First = "Jonathan"
				p.Email += "x"
				p.Level++
				return nil
			}, entity.ModifyOptions{Create: true})
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := ct.Get(ctx, "Sales", "new")
	if err != nil || got.First != "Jonathan" || got.Email != strings.Repeat("x", writers) || got.Level != writers {
		t.Fatalf("stored %+v, %v", got, err)
	}
	resp, err := raw.GetEntity(ctx, "Sales", "new", nil)
	if err != nil {
		t.Fatal(err)
	}
	if body := string(resp.Value); strings.Contains(body, "Jonathan") || strings.Contains(body, "xxxx") {
		t.Fatalf("stored in plaintext: %s", body)
	}
}
