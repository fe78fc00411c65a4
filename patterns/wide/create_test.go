package wide_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/wide"
)

// rawCount reads the Count property of a logical entity from the rows the
// service stores, with a raw aztables client: the one row that holds it.
func rawCount(t *testing.T, client *aztables.Client, pk string) int64 {
	t.Helper()
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Format: ptrTo(aztables.MetadataFormatFull)})
	found := []int64{}
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Entities {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			if m["PartitionKey"] != pk {
				continue
			}
			if s, ok := m["Count"].(string); ok { // Int64 travels as a string
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				found = append(found, n)
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("rows holding Count: %v, want one", found)
	}
	return found[0]
}

func ptrTo[T any](v T) *T { return &v }

// Ten writers create and increment the same missing logical entity at once
// with ModifyOptions.Create: one inserts it, the others change what it
// stored, so the count is exactly 10, in one head and one row.
func TestModifyCreateRacingCreators(t *testing.T) {
	ctx := t.Context()
	client := env.Table(t)
	w := wrap[Counted](t, client, wide.Config{})
	const pk, id = "p", "created"
	if _, err := w.Modify(ctx, pk, id, func(c *Counted) error { return nil }, entity.ModifyOptions{}); !errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("Modify of a missing entity without Create: %v", err)
	}
	start := make(chan struct{})
	errs := make([]error, 10)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			<-start
			_, errs[i] = w.Modify(ctx, pk, id, func(c *Counted) error {
				if c.ETag == "" && (c.PartitionKey != pk || c.RowKey != id || c.Count != 0) {
					return errors.New("a created entity does not start as the zero value with its keys")
				}
				c.Count++
				return nil
			}, entity.ModifyOptions{Create: true})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("creator %d: %v", i, err)
		}
	}
	if n := rawCount(t, client, pk); n != 10 {
		t.Errorf("count %d, want 10", n)
	}
	checkRows(t, client, pk, id, 1)
}

// The create's reply is lost: azcore resends the transaction, which the
// service refuses at the head (409) it inserted. The head's version token
// shows the insert applied: Modify reports success after one change,
// and the entity holds it once.
func TestModifyCreateLostReply(t *testing.T) {
	ctx := t.Context()
	f := faults.New(faults.Config{})
	client := env.With(f).Table(t)
	w := wrap[Counted](t, client, wide.Config{})
	const pk, id = "p", "lost"
	f.LoseNext(1, isBatch)
	calls := 0
	got, err := w.Modify(ctx, pk, id, func(c *Counted) error {
		calls++
		c.Count++
		return nil
	}, entity.ModifyOptions{Create: true})
	if err != nil || calls != 1 || got.Count != 1 {
		t.Fatalf("Modify with Create after a lost reply: %v after %d calls, count %d", err, calls, got.Count)
	}
	if s := f.Stats(); s.LostReplies != 1 {
		t.Fatalf("lost replies %d, want 1", s.LostReplies)
	}
	if n := rawCount(t, client, pk); n != 1 {
		t.Errorf("count %d, want 1", n)
	}
}
