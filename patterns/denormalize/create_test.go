package denormalize_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/denormalize"
)

// rawInt64 reads an Int64 property of an entity with the environment's
// raw aztables client.
func rawInt64(t *testing.T, table, pk, rk, prop string) int64 {
	t.Helper()
	resp, err := env.TableService.NewClient(table).GetEntity(context.Background(), pk, rk, &aztables.GetEntityOptions{Format: ptr(aztables.MetadataFormatFull)})
	if err != nil {
		t.Fatalf("reading (%s, %s): %v", pk, rk, err)
	}
	var m map[string]any
	if err := json.Unmarshal(resp.Value, &m); err != nil {
		t.Fatal(err)
	}
	switch v := m[prop].(type) {
	case string: // Int64 travels as a string
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	case float64:
		return int64(v)
	}
	t.Fatalf("(%s, %s) has %s = %v", pk, rk, prop, m[prop])
	return 0
}

func ptr[T any](v T) *T { return &v }

// race runs n calls of f at once and fails on any error.
func race(t *testing.T, n int, f func() error) {
	t.Helper()
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = f()
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("creator %d: %v", i, err)
		}
	}
}

// Ten writers create and change the same missing source at once with
// ModifyOptions.Create: one inserts it, the others change what it
// stored, so the source's counter is exactly 10; a department that named
// the missing source as its manager holds its copy.
func TestModifyCreateRacingCreators(t *testing.T) {
	ctx := t.Context()
	g := newGuide(t, env, denormalize.Config{})
	const pk = "Sales"
	mgr, dept := empID(300), deptPrefix+"300"
	if err := g.copies.InsertTarget(ctx, &Department{PartitionKey: pk, RowKey: dept, ManagerID: mgr}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.copies.ModifySource(ctx, pk, mgr, func(e *Employee) error { return nil }, entity.ModifyOptions{}); !errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("ModifySource of a missing source without Create: %v", err)
	}
	race(t, 10, func() error {
		_, err := g.copies.ModifySource(ctx, pk, mgr, func(e *Employee) error {
			if e.ETag == "" && (e.PartitionKey != pk || e.RowKey != mgr || e.Edits != 0) {
				return errors.New("a created source does not start as the zero value with its keys")
			}
			e.Name, e.Phone = "Jones, Jeff", "425-555-0101"
			e.Edits++
			return nil
		}, entity.ModifyOptions{Create: true, Retry: entity.RetryPolicy{Attempts: 40}})
		return err
	})
	if n := rawInt64(t, g.emps.Name(), pk, mgr, "Edits"); n != 10 {
		t.Errorf("the source's counter is %d, want 10", n)
	}
	got, err := g.depts.Get(ctx, pk, dept)
	if err != nil || got.ManagerName != "Jones, Jeff" || got.ManagerPhone != "425-555-0101" {
		t.Errorf("the department's copy: %+v, %v", got, err)
	}
	g.check(t, pk)

	// Targets too: ten writers create one missing department.
	dept = deptPrefix + "301"
	race(t, 10, func() error {
		_, err := g.copies.ModifyTarget(ctx, pk, dept, func(d *Department) error {
			d.ManagerID = mgr
			d.Budget++
			return nil
		}, entity.ModifyOptions{Create: true, Retry: entity.RetryPolicy{Attempts: 40}})
		return err
	})
	if n := rawInt64(t, g.emps.Name(), pk, dept, "Budget"); n != 10 {
		t.Errorf("the target's counter is %d, want 10", n)
	}
	if got, err := g.depts.Get(ctx, pk, dept); err != nil || got.ManagerName != "Jones, Jeff" {
		t.Errorf("the created department's copy: %+v, %v", got, err)
	}
	g.check(t, pk)
}

// The create's reply is lost: azcore resends the transaction, which the
// service refuses (409) for the source the first try inserted. The write
// token settles it as applied: ModifySource reports success after one
// change, and the source holds it once.
func TestModifyCreateLostReply(t *testing.T) {
	ctx := t.Context()
	f := faults.New(faults.Config{})
	g := newGuide(t, env, denormalize.Config{})
	h := g.over(t, env.With(f), denormalize.Config{})
	const pk = "Sales"
	mgr := empID(400)
	f.LoseNext(1, func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "$batch")
	})
	calls := 0
	got, err := h.copies.ModifySource(ctx, pk, mgr, func(e *Employee) error {
		calls++
		e.Edits++
		return nil
	}, entity.ModifyOptions{Create: true})
	if err != nil || calls != 1 {
		t.Fatalf("ModifySource with Create after a lost reply: %v after %d calls", err, calls)
	}
	if s := f.Stats(); s.LostReplies != 1 {
		t.Fatalf("lost replies %d, want 1", s.LostReplies)
	}
	if got.Edits != 1 {
		t.Errorf("returned %+v", got)
	}
	if n := rawInt64(t, g.emps.Name(), pk, mgr, "Edits"); n != 1 {
		t.Errorf("the source's counter is %d, want 1", n)
	}
}
