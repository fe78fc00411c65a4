package entity

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

type fixedReply struct {
	status int
	body   []byte
}

func (f fixedReply) Do(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: f.status, Header: http.Header{"Content-Type": {"multipart/mixed; boundary=batchresponse_tk"}}, Body: io.NopCloser(bytes.NewReader(f.body)), Request: req}, nil
}

// TestCarrierReplyIsASuccess pins what the $batch takeover relies on in
// aztables: SubmitTransaction reads carrierReply as a success, without
// reading any operation, and carry survives replies it panics on.
func TestCarrierReplyIsASuccess(t *testing.T) {
	for _, c := range []struct {
		reply fixedReply
		ok    bool
	}{
		{fixedReply{http.StatusAccepted, carrierReply}, true},
		{fixedReply{http.StatusAccepted, nil}, false}, // aztables panics on it
	} {
		client, err := aztables.NewClientWithNoCredential("http://127.0.0.1:1/acct/tbl", &aztables.ClientOptions{
			ClientOptions: azcore.ClientOptions{Transport: c.reply, Retry: policy.RetryOptions{MaxRetries: -1}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.ok {
			if _, err := client.SubmitTransaction(context.Background(), carrierAction, nil); err != nil {
				t.Fatalf("SubmitTransaction refuses the carrier reply: %v", err)
			}
		}
		carry(context.Background(), client) // must not panic
	}
}
