package integration_test

import (
	"bytes"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/tablekit/tablekit/integration"
)

// insertETag inserts an entity with a raw client and returns the ETag the
// reply carried.
func insertETag(t *testing.T, c *aztables.Client, rk string) string {
	t.Helper()
	resp, err := c.AddEntity(t.Context(), []byte(`{"PartitionKey":"p","RowKey":"`+rk+`"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(resp.ETag)
}

// checkProfile checks that every table client of e applies the Cosmos DB
// profile (cosmos true) or none, and that blobs never do.
func checkProfile(t *testing.T, e *integration.Env, cosmos bool) {
	t.Helper()
	if e.Cosmos() != cosmos {
		t.Fatalf("Cosmos() = %v, want %v", e.Cosmos(), cosmos)
	}
	want := map[bool]string{true: integration.ProfileCosmos, false: ""}[cosmos]
	if got := e.Profile(); got != want {
		t.Fatalf("Profile() = %q, want %q", got, want)
	}
	tableName := e.TableName(t)
	if _, err := e.TableService.CreateTable(t.Context(), tableName, nil); err != nil {
		t.Fatal(err)
	}
	svc, err := e.NewTableService(nil)
	if err != nil {
		t.Fatal(err)
	}
	acctSvc, err := e.Account().TableService()
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*aztables.Client{
		"TableWith":              e.TableWith(t, e.NoRetryClientOptions()),
		"TableService":           e.TableService.NewClient(tableName),
		"NewTableService(nil)":   svc.NewClient(tableName),
		"Account().TableService": acctSvc.NewClient(tableName),
		"With(policy)":           e.With(noop{}).TableService.NewClient(tableName),
	}
	for what, c := range clients {
		etag := insertETag(t, c, what)
		opaque := !strings.Contains(etag, "datetime")
		if opaque != cosmos {
			t.Errorf("%s: ETag %q; profile applied = %v, want %v", what, etag, opaque, cosmos)
		}
	}
	if e.BlobService != nil {
		ct := e.Container(t)
		resp, err := ct.NewBlockBlobClient("b").UploadStream(t.Context(), bytes.NewReader([]byte("x")), &blockblob.UploadStreamOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if etag := string(*resp.ETag); !strings.HasPrefix(etag, `"0x`) {
			t.Errorf("blob ETag %q: the table profile was applied to blobs", etag)
		}
	}
}

type noop struct{}

func (noop) Do(req *policy.Request) (*http.Response, error) { return req.Next() }

// TestProfileOfThisRun checks that the profile TABLEKIT_PROFILE names is the
// one every client of the run applies: a suite run with
// TABLEKIT_PROFILE=cosmos whose clients send Table storage's ETags fails
// here rather than passing as a Cosmos run.
func TestProfileOfThisRun(t *testing.T) {
	checkProfile(t, env, os.Getenv(integration.EnvProfile) == integration.ProfileCosmos)
}

// TestProfileCosmosFromEnvironment starts an Env with TABLEKIT_PROFILE=cosmos
// (on this run's account) and checks that all its table clients apply the
// profile, and that an unknown profile is refused rather than ignored.
func TestProfileCosmosFromEnvironment(t *testing.T) {
	if env.ConnectionString == "" {
		t.Skip("the run's account has no connection string to hand on")
	}
	t.Setenv(integration.EnvConnectionString, env.ConnectionString)
	t.Setenv(integration.EnvProfile, integration.ProfileCosmos)
	e, err := integration.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	checkProfile(t, e, true)

	t.Setenv(integration.EnvProfile, "cosmosdb")
	if e, err := integration.Start(t.Context()); err == nil {
		e.Close()
		t.Fatal("Start took an unknown TABLEKIT_PROFILE")
	} else if !strings.Contains(err.Error(), integration.EnvProfile) {
		t.Fatalf("error %q does not name %s", err, integration.EnvProfile)
	}
}
