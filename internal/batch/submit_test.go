package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// replay answers every request with a recorded response, after checking
// it is the $batch POST.
type replay struct {
	t    *testing.T
	raw  []byte
	err  error
	seen *http.Request
}

func (r *replay) Do(req *http.Request) (*http.Response, error) {
	r.seen = req
	if r.err != nil {
		return nil, r.err
	}
	if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/$batch") {
		r.t.Errorf("unexpected request %s %s", req.Method, req.URL)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(r.raw)), req)
	if err != nil {
		return nil, err
	}
	// Serve the body from memory, as a network body would be: readable once.
	body, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

func replayClient(t *testing.T, fixture string, raw []byte, err error) (*aztables.Client, *replay) {
	t.Helper()
	if fixture != "" {
		var rerr error
		raw, rerr = os.ReadFile(filepath.Join("testdata", fixture))
		if rerr != nil {
			t.Fatal(rerr)
		}
	}
	tr := &replay{t: t, raw: raw, err: err}
	c, cerr := aztables.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/t", &aztables.ClientOptions{
		ClientOptions: azcore.ClientOptions{Transport: tr, Retry: policy.RetryOptions{MaxRetries: -1}},
	})
	if cerr != nil {
		t.Fatal(cerr)
	}
	return c, tr
}

func actions(n int) []aztables.TransactionAction {
	var out []aztables.TransactionAction
	for i := range n {
		b, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprint(i)})
		out = append(out, aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace, Entity: b})
	}
	return out
}

func TestSubmitSuccess(t *testing.T) {
	c, _ := replayClient(t, "azurite_success_3ops.http", nil, nil)
	res, err := Submit(context.Background(), c, actions(3), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("%d results", len(res))
	}
	for i, r := range res {
		if r.Index != i || r.StatusCode != 204 || !strings.HasPrefix(r.ETag, `W/"datetime'`) {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	// The ETag is in the form aztables' responses and IfMatch use.
	if res[0].ETag != `W/"datetime'2026-11-22T10%3A52%3A44.8879014Z'"` {
		t.Errorf("ETag %q", res[0].ETag)
	}
}

func TestSubmitFailure(t *testing.T) {
	for _, c := range []struct {
		fixture string
		n       int
		index   int
		status  int
		code    string
	}{
		{"azurite_fail_insert_exists_index1.http", 3, 1, 409, "EntityAlreadyExists"},
		{"azurite_fail_delete_missing_index2.http", 3, 2, 404, "ResourceNotFound"},
		{"azurite_fail_etag_mismatch_index0.http", 2, 0, 412, "UpdateConditionNotSatisfied"},
		{"docs_fail_insert_exists_index1.http", 3, 1, 409, "EntityAlreadyExists"},
		// aztables itself fails on this reply with "malformed HTTP response".
		{"azurite_fail_101ops.http", 3, 0, 400, "InvalidInput"},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			cl, _ := replayClient(t, c.fixture, nil, nil)
			res, err := Submit(context.Background(), cl, actions(c.n), nil)
			var te *TransactionError
			if !errors.As(err, &te) {
				t.Fatalf("error %T %v, want *TransactionError", err, err)
			}
			if te.Op.Index != c.index || te.Op.StatusCode != c.status || te.Op.Code != c.code || te.Op.Message == "" {
				t.Fatalf("Op = %+v", te.Op)
			}
			if len(res) != 1 || res[0].Index != c.index {
				t.Fatalf("results = %+v", res)
			}
			if !strings.Contains(te.Error(), fmt.Sprintf("operation %d: %d %s", c.index, c.status, c.code)) {
				t.Errorf("message %q", te.Error())
			}
			if te.Err == nil {
				t.Fatal("no underlying error")
			}
			var re *azcore.ResponseError
			if c.fixture != "azurite_fail_101ops.http" {
				if !errors.As(err, &re) || re.StatusCode != http.StatusAccepted {
					t.Fatalf("underlying error %T %v, want *azcore.ResponseError with status 202", te.Err, te.Err)
				}
			}
		})
	}
}

func TestSubmitTopLevelError(t *testing.T) {
	raw := "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\nx-ms-error-code: InvalidInput\r\n\r\n" +
		`{"odata.error":{"code":"InvalidInput","message":{"lang":"en-US","value":"0:The batch request operation exceeds the maximum 100 changes per change set.\nRequestId:r\nTime:t"}}}`
	c, _ := replayClient(t, "", []byte(raw), nil)
	_, err := Submit(context.Background(), c, actions(1), nil)
	var te *TransactionError
	if !errors.As(err, &te) || te.Op.StatusCode != 400 || te.Op.Code != "InvalidInput" || te.Op.Index != 0 || te.Op.RequestID != "r" {
		t.Fatalf("err = %v (%+v)", err, te)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.ErrorCode != "InvalidInput" {
		t.Fatalf("underlying %v", te.Err)
	}

	// A non-JSON refusal still names the code from the header.
	raw = "HTTP/1.1 403 Forbidden\r\nContent-Type: application/xml\r\nx-ms-error-code: AuthorizationFailure\r\n\r\n<Error><Code>AuthorizationFailure</Code><Message>no</Message></Error>"
	c, _ = replayClient(t, "", []byte(raw), nil)
	_, err = Submit(context.Background(), c, actions(1), nil)
	if !errors.As(err, &te) || te.Op.Code != "AuthorizationFailure" || te.Op.Index != -1 {
		t.Fatalf("err = %v (%+v)", err, te)
	}
}

func TestSubmitTransportError(t *testing.T) {
	boom := errors.New("connection refused")
	c, _ := replayClient(t, "", nil, boom)
	_, err := Submit(context.Background(), c, actions(1), nil)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	var te *TransactionError
	if errors.As(err, &te) {
		t.Fatal("a transport error is not a TransactionError")
	}
}

func TestSubmitMismatch(t *testing.T) {
	// Three results for two operations: the ETags cannot be matched up.
	c, _ := replayClient(t, "azurite_success_3ops.http", nil, nil)
	if _, err := Submit(context.Background(), c, actions(2), nil); !errors.Is(err, ErrMalformed) {
		t.Fatalf("err = %v", err)
	}
	// A 202 whose body is not multipart; without a line break aztables
	// v1.4.1 panics on it, which Submit turns into an error.
	for _, body := range []string{"hello", "", "\n", "hello\nworld"} {
		c, _ = replayClient(t, "", []byte("HTTP/1.1 202 Accepted\r\nContent-Type: text/plain\r\n\r\n"+body), nil)
		if _, err := Submit(context.Background(), c, actions(1), nil); !errors.Is(err, ErrMalformed) {
			t.Fatalf("body %q: err = %v", body, err)
		}
	}
	c, _ = replayClient(t, "", []byte("HTTP/1.1 202 Accepted\r\n\r\n"), nil)
	if _, err := Submit(context.Background(), c, actions(1), nil); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("empty 202: err = %v", err)
	}
}

func TestSubmitInvalidActions(t *testing.T) {
	// aztables refuses before sending: no response is captured.
	c, tr := replayClient(t, "azurite_success_3ops.http", nil, nil)
	_, err := Submit(context.Background(), c, []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"RowKey":"x"}`)}}, nil)
	if err == nil || tr.seen != nil {
		t.Fatalf("err = %v, request sent = %v", err, tr.seen != nil)
	}
}
