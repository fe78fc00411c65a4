package errtext_test

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/crypt/keyvault"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/entity/sas"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/bucket"
	"github.com/tablekit/tablekit/resolver"
)

type person struct {
	PartitionKey string
	RowKey       string
	Salary       string
	Hired        time.Time
}

type badType struct {
	PartitionKey string
	RowKey       string
	C            chan int
}

type counted struct {
	PartitionKey string
	RowKey       string
	N            int32
}

// responseError is the *azcore.ResponseError azcore makes of the service's
// answer: its Error() is the whole HTTP exchange, many lines long.
func responseError(t *testing.T, status int, code string) error {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, "https://account.table.core.windows.net/People(PartitionKey='p',RowKey='r')", nil)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"odata.error":{"code":"` + code + `","message":{"lang":"en-US","value":"The update condition specified in the request was not satisfied.\nRequestId:1\nTime:2024-01-01T00:00:00Z"}}}`
	resp := &http.Response{
		Status: http.StatusText(status), StatusCode: status, Request: req,
		Header: http.Header{"X-Ms-Error-Code": {code}, "Content-Type": {"application/json"}},
		Body:   io.NopCloser(strings.NewReader(body)),
	}
	return runtime.NewResponseError(resp)
}

func must[T any](_ T, err error) error { return err }

// TestErrorsReadAlike walks representative errors of every package:
// validation, decoding, a batch of an invalid entity, the service's
// answers, keys, filter, resolver, crypt, sas and a pattern.
func TestErrorsReadAlike(t *testing.T) {
	long := strings.Repeat("x", 40000)
	invalid := must(entity.Marshal(&person{PartitionKey: "p", RowKey: "r", Salary: long, Hired: time.Now()}))
	badKey := must(entity.Marshal(&person{PartitionKey: "p", RowKey: "a/b", Hired: time.Now()}))
	precondition := &entity.ServiceError{Op: "Update", Table: "People", StatusCode: 412, Code: "UpdateConditionNotSatisfied", Err: responseError(t, 412, "UpdateConditionNotSatisfied")}
	forbidden := &entity.ServiceError{Op: "Get", Table: "People", StatusCode: 403, Code: "AuthorizationFailure", Err: responseError(t, 403, "AuthorizationFailure")}
	unreachable := &entity.ServiceError{Op: "Get", Table: "People", Err: &url.Error{Op: "Get", URL: "https://account.table.core.windows.net/People?sig=secret", Err: errors.New("dial tcp: lookup account.table.core.windows.net: no such host")}}

	cases := []struct {
		name, prefix string
		err, is      error
	}{
		{"entity validation", "entity: ", invalid, entity.ErrInvalid},
		{"entity key", "entity: ", badKey, keys.ErrInvalidKey},
		{"entity zero time", "entity: ", must(entity.Marshal(&person{PartitionKey: "p", RowKey: "r"})), entity.ErrInvalid},
		{"entity type", "entity: ", must(entity.Marshal(&badType{PartitionKey: "p", RowKey: "r"})), entity.ErrInvalidType},
		{"entity decode", "entity: ", entity.Unmarshal([]byte(`{"PartitionKey":"p","RowKey":"r","N":"x"}`), &counted{}), entity.ErrDecode},
		{"entity decode syntax", "entity: ", entity.Unmarshal([]byte(`{"PartitionKey":`), &counted{}), entity.ErrDecode},
		{"entity batch of an invalid entity", "entity: ", &entity.BatchError{Index: 1, Err: invalid}, entity.ErrInvalid},
		{"entity bulk", "entity: ", &entity.BulkError{Failed: 1, Total: 3, First: precondition}, entity.ErrPreconditionFailed},
		{"entity service answer", "entity: ", precondition, entity.ErrPreconditionFailed},
		{"entity unauthorized", "entity: ", forbidden, entity.ErrUnauthorized},
		{"entity unreachable", "entity: ", unreachable, entity.ErrUnreachable},
		{"entity outcome", "entity: ", &entity.OutcomeError{Op: "Update", Table: "People", PartitionKey: "p", RowKey: "r", Last: precondition}, entity.ErrOutcomeUnknown},
		{"entity transaction", "entity: ", &entity.TransactionError{Index: 1, Kind: entity.OpInsert, StatusCode: 412, Code: "UpdateConditionNotSatisfied", Message: "The update condition specified in the request was not satisfied.\nRequestId:1", Err: responseError(t, 412, "UpdateConditionNotSatisfied")}, entity.ErrPreconditionFailed},
		{"entity connection string", "entity: ", must(entity.NewTableFromConnectionString[counted]("AccountName=x;Nonsense", "People", nil)), entity.ErrInvalidConnectionString},
		{"entity table name", "entity: ", must(entity.NewTableFromService[counted](nil, "People")), nil},
		{"keys", "keys: ", keys.Validate("a/b"), keys.ErrInvalidKey},
		{"keys pad", "keys: ", must(keys.PadChecked(-1, 4)), keys.ErrInvalidKey},
		{"filter", "filter: ", must(filter.Eq("not a name", 1).Build()), filter.ErrInvalidFilter},
		{"filter value", "filter: ", must(filter.And(filter.PK("p"), filter.Eq("N", make(chan int))).Build()), filter.ErrInvalidFilter},
		{"resolver", "resolver: ", must(resolver.RowKeyOf[counted](nil, "x")), nil},
		{"crypt", "crypt: ", must(crypt.NewLocalKey("k", []byte("short"))), crypt.ErrInvalidConfig},
		{"crypt config", "crypt: ", must(crypt.New[counted](nil, crypt.Config{})), crypt.ErrInvalidConfig},
		{"keyvault", "keyvault: ", must(keyvault.New(nil, "https://v.vault.azure.net/", "k", keyvault.Config{})), keyvault.ErrInvalidConfig},
		{"sas", "sas: ", must(sas.OpenTable[counted]("not a SAS URL", nil)), sas.ErrInvalid},
		{"bucket", "bucket: ", must(bucket.New[counted](nil, bucket.Config{})), nil},
		{"bucket config", "bucket: ", must(bucket.New(&entity.Table[counted]{}, bucket.Config{Buckets: -1})), bucket.ErrInvalid},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		msg := c.err.Error()
		if !strings.HasPrefix(msg, c.prefix) {
			t.Errorf("%s: %q does not start with %q", c.name, msg, c.prefix)
		}
		if strings.Contains(msg[len(c.prefix):], ": "+c.prefix) || strings.Contains(msg, "("+c.prefix) {
			t.Errorf("%s: %q repeats %q", c.name, msg, c.prefix)
		}
		if strings.ContainsAny(msg, "\r\n") {
			t.Errorf("%s: %q has more than one line", c.name, msg)
		}
		if strings.Contains(msg, "tablekit: ") || strings.Contains(msg, "sig=") {
			t.Errorf("%s: %q", c.name, msg)
		}
		if c.is != nil && !errors.Is(c.err, c.is) {
			t.Errorf("%s: %q does not match %v", c.name, msg, c.is)
		}
	}

	// The HTTP exchange stays reachable behind the one line.
	var re *azcore.ResponseError
	if !errors.As(precondition, &re) || !strings.Contains(re.Error(), "\n") || re.ErrorCode != "UpdateConditionNotSatisfied" {
		t.Errorf("the *azcore.ResponseError behind %q is not reachable", precondition)
	}
	t.Logf("for example: %v", &entity.BatchError{Index: 1, Err: invalid})
}
