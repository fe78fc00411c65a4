package resolver

import (
	"errors"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
)

// FuzzResumeToken: a MigrateOptions.Resume is either refused with an error
// matching entity.ErrInvalidToken and entity.ErrInvalid, or it is exactly
// the checkpoint token of the continuation it holds — one spelling per
// checkpoint, so one with CR or LF (which base64 skips) is refused
// (testdata/fuzz/FuzzResumeToken).
func FuzzResumeToken(f *testing.F) {
	client, err := aztables.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/Customers",
		entity.ClientOptions(&aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}}))
	if err != nil {
		f.Fatal(err)
	}
	s, err := NewSchema(Config{}, Register[struct{ PartitionKey, RowKey string }]("T"))
	if err != nil {
		f.Fatal(err)
	}
	tbl, err := NewTable(client, s)
	if err != nil {
		f.Fatal(err)
	}
	good := tbl.checkpointToken("AQMAAAAAAAAAAHAxAGMwNA")
	f.Add(good)
	f.Add(good[:4] + "\r\n" + good[4:])
	f.Add(good + "\n")
	f.Add("")
	f.Add("TQ")
	f.Fuzz(func(t *testing.T, token string) {
		inner, err := tbl.resumeToken(token)
		if err != nil {
			if !errors.Is(err, entity.ErrInvalidToken) || !errors.Is(err, entity.ErrInvalid) {
				t.Fatalf("%q: %v matches not both entity.ErrInvalidToken and entity.ErrInvalid", token, err)
			}
			return
		}
		if again := tbl.checkpointToken(inner); again != token {
			t.Fatalf("token %q holds %q, whose checkpoint token is %q", token, inner, again)
		}
	})
}
