package secondaryindex_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// rawTable is a plain aztables client of the table named name, without
// tablekit's decoding: what the tests read final states and write around
// the Set with.
func rawTable(t testing.TB, name string) *aztables.Client {
	t.Helper()
	return env.TableService.NewClient(name)
}

// rawGet returns the stored properties of pk/rk as the service's JSON
// has them, or nil when there is no such entity.
func rawGet(t testing.TB, c *aztables.Client, pk, rk string) map[string]any {
	t.Helper()
	resp, err := c.GetEntity(context.Background(), pk, rk, nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(resp.Value, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// rawMerge merges props into the stored pk/rk: a write around the Set.
func rawMerge(t testing.TB, c *aztables.Client, pk, rk string, props map[string]any) {
	t.Helper()
	m := map[string]any{"PartitionKey": pk, "RowKey": rk}
	for k, v := range props {
		m[k] = v
	}
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateEntity(context.Background(), body, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
		t.Fatal(err)
	}
}

// rawDelete deletes pk/rk whatever its version: a write around the Set.
func rawDelete(t testing.TB, c *aztables.Client, pk, rk string) {
	t.Helper()
	if _, err := c.DeleteEntity(context.Background(), pk, rk, nil); err != nil {
		t.Fatal(err)
	}
}
