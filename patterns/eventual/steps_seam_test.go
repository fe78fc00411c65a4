package eventual_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"path"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/eventual"
)

type stepRow struct {
	PartitionKey, RowKey string
	By                   string
}

// The Insert, Upsert and Delete steps with the reply of their write lost
// and another process inserting, replacing, merging or deleting the same
// entity inside azcore's retry window (through a client without the
// injector): the step reports success — Insert counts an entity that is
// there as done — and the entity, read with a raw client, is there
// (Insert), the step's (Upsert: the resend comes after the other write) or
// gone (Delete).
func TestTableStepsLostReplyBesideAnotherWriter(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"Insert", "Upsert", "Delete"} {
		for _, kind := range []string{"insert", "replace", "merge", "delete"} {
			t.Run(step+"/"+kind, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				name := env.TableName(t)
				if _, err := env.TableService.CreateTable(ctx, name, nil); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _, _ = env.TableService.DeleteTable(context.Background(), name, nil) })
				raw := env.TableService.NewClient(name)
				if step != "Insert" {
					if _, err := raw.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","By":"before"}`), nil); err != nil {
						t.Fatal(err)
					}
				}
				inj := faults.New(faults.Config{})
				tbl, err := entity.NewTableFromService[stepRow](env.With(inj).TableService, name)
				if err != nil {
					t.Fatal(err)
				}
				inj.LoseNextThen(1, func(r *http.Request) bool { return r.Method != http.MethodGet }, func(*http.Request) {
					other := []byte(`{"PartitionKey":"p","RowKey":"r","By":"other"}`)
					var err error
					switch kind {
					case "insert":
						_, err = raw.AddEntity(ctx, other, nil)
					case "replace":
						_, err = raw.UpsertEntity(ctx, other, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
					case "merge":
						_, err = raw.UpdateEntity(ctx, other, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
					case "delete":
						_, err = raw.DeleteEntity(ctx, "p", "r", nil)
					}
					t.Logf("the other process's %s: %v", kind, err)
				})
				switch step {
				case "Insert":
					err = eventual.Insert(ctx, tbl, &stepRow{PartitionKey: "p", RowKey: "r", By: "step"})
				case "Upsert":
					err = eventual.Upsert(ctx, tbl, &stepRow{PartitionKey: "p", RowKey: "r", By: "step"})
				default:
					err = eventual.Delete(ctx, tbl, "p", "r")
				}
				if inj.Stats().LostReplies != 1 {
					t.Fatal("no reply was lost")
				}
				if err != nil {
					t.Errorf("%s: %v", step, err)
				}
				resp, gerr := raw.GetEntity(ctx, "p", "r", nil)
				var re *azcore.ResponseError
				found := !(errors.As(gerr, &re) && re.StatusCode == http.StatusNotFound)
				if found && gerr != nil {
					t.Fatal(gerr)
				}
				switch {
				case step == "Insert" && !found:
					t.Error("Insert: the entity is not there")
				case step == "Delete" && found:
					t.Errorf("Delete: the entity is still there: %s", resp.Value)
				case step == "Upsert" && (!found || !bytes.Contains(resp.Value, []byte(`"By":"step"`))):
					t.Errorf("Upsert: stored %s (found %v), want the step's", resp.Value, found)
				}
			})
		}
	}
}

// The PutBlob and DeleteBlob steps with the reply of their request lost and
// another process replacing or deleting the blob inside azcore's retry
// window: the resend applies the step again after the other write, so the
// step reports success and the blob, read with a plain client, is the
// step's (PutBlob) or gone (DeleteBlob).
func TestBlobStepsLostReplyBesideAnotherWriter(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"PutBlob", "DeleteBlob"} {
		for _, kind := range []string{"replace", "delete"} {
			t.Run(step+"/"+kind, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				inj := faults.New(faults.Config{})
				lossy := env.With(inj).Container(t)
				clean := env.BlobService.ServiceClient().NewContainerClient(path.Base(lossy.URL()))
				if _, err := clean.NewBlockBlobClient("x").Upload(ctx, streaming.NopCloser(bytes.NewReader([]byte("before"))), nil); err != nil {
					t.Fatal(err)
				}
				inj.LoseNextThen(1, func(r *http.Request) bool { return r.Method == http.MethodPut || r.Method == http.MethodDelete }, func(*http.Request) {
					var err error
					if kind == "replace" {
						_, err = clean.NewBlockBlobClient("x").Upload(ctx, streaming.NopCloser(bytes.NewReader([]byte("theirs"))), nil)
					} else {
						_, err = clean.NewBlobClient("x").Delete(ctx, nil)
					}
					t.Logf("the other process's %s: %v", kind, err)
				})
				var err error
				if step == "PutBlob" {
					err = eventual.PutBlob(ctx, lossy, "x", []byte("mine"))
				} else {
					err = eventual.DeleteBlob(ctx, lossy, "x")
				}
				if inj.Stats().LostReplies != 1 {
					t.Fatal("no reply was lost")
				}
				if err != nil {
					t.Errorf("%s: %v", step, err)
				}
				resp, derr := clean.NewBlobClient("x").DownloadStream(ctx, nil)
				if bloberror.HasCode(derr, bloberror.BlobNotFound) {
					if step == "PutBlob" {
						t.Error("PutBlob: the blob is gone, want the step's")
					}
					return
				}
				if derr != nil {
					t.Fatal(derr)
				}
				defer resp.Body.Close()
				data, _ := io.ReadAll(resp.Body)
				if step == "DeleteBlob" || string(data) != "mine" {
					t.Errorf("%s: the blob holds %q", step, data)
				}
			})
		}
	}
}
