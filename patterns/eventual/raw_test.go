package eventual_test

import (
	"context"
	"encoding/json"
	"sort"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
)

// rawRow is an entity as the service returns it (minimal metadata), read
// with aztables without tablekit's decoding.
type rawRow map[string]any

func (r rawRow) pk() string { s, _ := r["PartitionKey"].(string); return s }
func (r rawRow) rk() string { s, _ := r["RowKey"].(string); return s }

// rawRows lists every entity of tbl's table with a plain aztables client,
// in key order.
func rawRows[T any](t testing.TB, tbl *entity.Table[T]) []rawRow {
	t.Helper()
	c := env.TableService.NewClient(tbl.Name())
	var rows []rawRow
	for pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Format: to.Ptr(aztables.MetadataFormatMinimal)}); pager.More(); {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entities {
			var r rawRow
			if err := json.Unmarshal(e, &r); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, r)
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].pk() != rows[j].pk() {
			return rows[i].pk() < rows[j].pk()
		}
		return rows[i].rk() < rows[j].rk()
	})
	return rows
}

// rawKeys is rawRows' "pk/rk" keys.
func rawKeys[T any](t testing.TB, tbl *entity.Table[T]) []string {
	t.Helper()
	var ks []string
	for _, r := range rawRows(t, tbl) {
		ks = append(ks, r.pk()+"/"+r.rk())
	}
	return ks
}

// rawMessages receives (and so hides for a minute) up to 32 messages of q
// with a plain azqueue client: their texts.
func rawMessages(t testing.TB, q *azqueue.QueueClient) []*azqueue.DequeuedMessage {
	t.Helper()
	resp, err := q.DequeueMessages(context.Background(), &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(32)), VisibilityTimeout: to.Ptr(int32(60))})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Messages
}
