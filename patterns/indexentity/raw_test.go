package indexentity_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/indexentity"
)

// rawGet returns the stored properties of pk/rk of the table named name
// as the service's JSON has them (a plain aztables client, no decoding of
// tablekit's), or nil when there is no such entity.
func rawGet(t testing.TB, name, pk, rk string) map[string]any {
	t.Helper()
	resp, err := env.TableService.NewClient(name).GetEntity(context.Background(), pk, rk, nil)
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

// rawBlob returns the text of a blob read with a plain azblob client, and
// false when it does not exist.
func rawBlob(t testing.TB, c *container.Client, name string) (string, bool) {
	t.Helper()
	resp, err := c.NewBlobClient(name).DownloadStream(context.Background(), nil)
	if bloberror.HasCode(err, bloberror.BlobNotFound) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

// rawList is value's list of partition pk in fixture f as stored: the
// Members property of its first index entity, or the blob's text; ok is
// false when there is none.
func (f *fixture) rawList(t testing.TB, pk, value string) (string, bool) {
	t.Helper()
	if f.c.placement == indexentity.Blob {
		return rawBlob(t, f.w.blobs(env), "lastname/"+keys.Compound(pk, value)+".keys")
	}
	epk := pk
	if f.c.placement == indexentity.OtherPartition {
		epk = "lastname_" + pk
	}
	e := rawGet(t, f.rows.Name(), epk, "lastname_"+keys.Compound(value))
	if e == nil {
		return "", false
	}
	s, _ := e["Members"].(string)
	return s, true
}

// rawAll returns every entity of the table named name, as the service's
// JSON has them, read with a plain aztables client, in key order.
func rawAll(t testing.TB, name string) []map[string]any {
	t.Helper()
	pager := env.TableService.NewClient(name).NewListEntitiesPager(nil)
	var out []map[string]any
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entities {
			var m map[string]any
			if err := json.Unmarshal(e, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out
}
