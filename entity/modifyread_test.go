package entity_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/entity"
)

// garbledReads replaces the body of every successful GET, once on, with
// a reply that is not JSON: a read that fails after the service answered.
type garbledReads struct{ on atomic.Bool }

func (g *garbledReads) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err != nil || !g.on.Load() || req.Raw().Method != http.MethodGet || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(`{"PartitionKey":`))
	resp.ContentLength = -1
	return resp, nil
}

// TestModifyReadFailureNamesModify: a Modify whose read fails — the table
// is gone, or the reply cannot be read — says so as Modify's error, naming
// the table and both keys (an empty RowKey too, read with a query), in
// one line, never as a Get or a Query; nothing was written.
func TestModifyReadFailureNamesModify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var garble garbledReads
	opts := env.NoRetryClientOptions()
	opts.PerRetryPolicies = append(opts.PerRetryPolicies, &garble)
	people, err := entity.NewTable[Person](env.TableWith(t, entity.ClientOptions(opts)))
	if err != nil {
		t.Fatal(err)
	}
	name := people.Name()
	for _, p := range []Person{{Dept: "Sales", ID: "O'Brien", Name: "a"}, {Dept: "Sales", ID: "", Name: "a"}} {
		if err := people.Insert(ctx, &p); err != nil {
			t.Fatal(err)
		}
	}
	changed := 0
	change := func(p *Person) error { changed++; p.Name = "b"; return nil }
	modify := func(rk string) error {
		_, err := people.Modify(ctx, "Sales", rk, change, entity.ModifyOptions{})
		return err
	}

	garble.on.Store(true)
	for _, rk := range []string{"O'Brien", ""} {
		err := modify(rk)
		oneLine(t, err, "entity: Modify on table "+name+` (PartitionKey "Sales", RowKey "`+rk+`"): `)
		var re *entity.RowError
		if !errors.As(err, &re) || re.Op != "Modify" || errors.Is(err, entity.ErrNotFound) {
			t.Errorf("Modify of %q whose reply cannot be read: %v; want a *RowError of Modify", rk, err)
		}
	}
	garble.on.Store(false)

	if _, err := env.TableService.DeleteTable(ctx, name, nil); err != nil {
		t.Fatal(err)
	}
	for _, rk := range []string{"O'Brien", ""} {
		err := modify(rk)
		oneLine(t, err, "entity: Modify on table "+name+` (PartitionKey "Sales", RowKey "`+rk+`"): 404 TableNotFound`)
		if !errors.Is(err, entity.ErrTableNotFound) {
			t.Errorf("Modify of %q on a deleted table: %v; want ErrTableNotFound", rk, err)
		}
	}
	if changed != 0 {
		t.Errorf("change ran %d times although no read succeeded", changed)
	}
}
