package resolver_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/resolver"
)

// outage is a per-retry policy that, while on, answers every request with
// the service's 503 Server Busy without sending it: the service (or the
// network to it) unavailable for longer than azcore retries.
// Armed, it turns on at the next write.
type outage struct{ armed, on atomic.Bool }

func (o *outage) Do(req *policy.Request) (*http.Response, error) {
	if o.armed.Load() && req.Raw().Method != http.MethodGet {
		o.on.Store(true)
	}
	if !o.on.Load() {
		return req.Next()
	}
	body := `{"odata.error":{"code":"ServerBusy","message":{"lang":"en-US","value":"The server is busy."}}}`
	h := http.Header{}
	h.Set("x-ms-error-code", "ServerBusy")
	h.Set("Content-Type", "application/json")
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Server Busy", Header: h,
		Body: io.NopCloser(bytes.NewReader([]byte(body))), Request: req.Raw()}, nil
}

// noRetries makes a view's clients give up at the first failed try.
func noRetries(o *azcore.ClientOptions) { o.Retry = policy.RetryOptions{MaxRetries: -1} }

// A migration whose service becomes unavailable while it writes its second
// page (its writes and reads answered 503 beyond azcore's retries) ends with an
// error, and the last checkpoint it gave is before the page it could not
// write: a fresh Table resumed from that checkpoint upgrades every row —
// none is skipped because its write failed for a reason that was not the
// row's. The rows are read back raw.
func TestMigrateResumesAfterAnOutageWithoutSkippingRows(t *testing.T) {
	const n = 12
	name := migrationRows(t, n)
	down := &outage{}
	var token string
	pages := 0
	rep, err := migrateTable(t, env.With(down).WithOptions(noRetries), name).Migrate(t.Context(), resolver.MigrateOptions{PageSize: 4,
		Checkpoint: func(c resolver.MigrateCheckpoint) error {
			pages++
			token = c.Token
			if pages == 1 {
				down.armed.Store(true) // the service goes away at the second page's first write
			}
			return nil
		}})
	if err == nil {
		t.Fatalf("a migration through an outage succeeded: %+v", rep)
	}
	var me *resolver.MigrateError
	if errors.As(err, &me) {
		t.Errorf("rows the service did not answer for are reported as rows that cannot be upgraded: %v", err)
	}
	if !errors.Is(err, entity.ErrInvalid) && !bytes.Contains([]byte(err.Error()), []byte("resolver: migrate")) {
		t.Errorf("error %q does not name the package", err)
	}
	if pages != 1 || token == "" {
		t.Fatalf("%d checkpoints, last token %q: want exactly the first page's", pages, token)
	}
	t.Logf("first run: %+v: %v", rep, err)
	again, err := migrateTable(t, env, name).Migrate(t.Context(), resolver.MigrateOptions{PageSize: 4, Resume: token})
	if err != nil {
		t.Fatalf("resumed run: %+v %v", again, err)
	}
	raw := env.TableService.NewClient(name)
	for i := range n {
		checkUpgraded(t, raw, i, fmt.Sprintf("Ann%d Lee", i), 0)
	}
}
