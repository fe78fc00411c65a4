package throttle_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/throttle"
)

// A Config or SimConfig that cannot pace — a rate or Floor that is
// negative, NaN or infinite, a Floor above 1, a negative RetryAfter or
// MaxHold — is a *throttle.ConfigError naming the field, matching
// entity.ErrInvalid, and no Limiter or Simulator.
func TestBadConfigIsATypedError(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	limiters := map[string]throttle.Config{
		"PartitionRate": {PartitionRate: nan},
		"AccountRate":   {AccountRate: inf},
		"Floor":         {Floor: nan},
	}
	for field, cfg := range map[string]throttle.Config{"PartitionRate": {PartitionRate: -1}, "AccountRate": {AccountRate: math.Inf(-1)}, "Floor": {Floor: 2}, "MaxHold": {MaxHold: -time.Second}} {
		limiters[field+" "] = cfg
	}
	for field, cfg := range limiters {
		lim, err := throttle.NewLimiter(cfg)
		var ce *throttle.ConfigError
		if lim != nil || !errors.As(err, &ce) || ce.Field != "Config."+strings.TrimSpace(field) || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("NewLimiter(%+v) = %v, %v: want a *ConfigError for Config.%s matching entity.ErrInvalid", cfg, lim, err, field)
		}
	}
	sims := map[string]throttle.SimConfig{
		"PartitionRate": {PartitionRate: nan},
		"AccountRate":   {AccountRate: inf},
		"RetryAfter":    {RetryAfter: -time.Second},
	}
	for field, cfg := range sims {
		sim, err := throttle.NewSimulator(cfg)
		var ce *throttle.ConfigError
		if sim != nil || !errors.As(err, &ce) || ce.Field != "SimConfig."+field || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("NewSimulator(%+v) = %v, %v: want a *ConfigError for SimConfig.%s matching entity.ErrInvalid", cfg, sim, err, field)
		}
	}
}

// alwaysBusy answers every request with the service's 503 Server Busy,
// without sending it: a partition that never recovers.
type alwaysBusy struct{}

func (alwaysBusy) Do(req *policy.Request) (*http.Response, error) {
	h := http.Header{}
	h.Set("x-ms-error-code", "ServerBusy")
	h.Set("Content-Type", "application/json")
	body := `{"odata.error":{"code":"ServerBusy","message":{"lang":"en-US","value":"The server is busy."}}}`
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Server Busy", Header: h,
		Body: io.NopCloser(bytes.NewReader([]byte(body))), Request: req.Raw()}, nil
}

// Under a permanent 503 the Limiter never retries nor waits on its own
// beyond pacing: the write gives up after azcore's MaxRetries + 1 tries,
// each paced once by the Limiter and counted throttled, with the
// service's 503 ServerBusy as a *azcore.ResponseError inside entity's
// error, which names the table and the keys.
func TestLimiterUnderPermanentServerBusyGivesUp(t *testing.T) {
	lim, err := throttle.NewLimiter(throttle.Config{})
	if err != nil {
		t.Fatal(err)
	}
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
		t.Fatal(err)
	}
	view := env.With(lim, alwaysBusy{}).WithOptions(func(o *azcore.ClientOptions) {
		o.Retry = policy.RetryOptions{MaxRetries: 3, RetryDelay: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond}
	})
	tbl, err := entity.NewTableFromService[reading](view.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	err = tbl.Insert(t.Context(), &reading{PartitionKey: "sensor-07", RowKey: "000001"})
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusServiceUnavailable || re.ErrorCode != "ServerBusy" {
		t.Fatalf("insert under a permanent 503: %v, want the service's 503 ServerBusy", err)
	}
	if msg := err.Error(); !strings.Contains(msg, name) || !strings.Contains(msg, `"sensor-07"`) {
		t.Errorf("error %q does not name the table and the partition", msg)
	}
	if s := lim.Stats(); s.Requests != 4 || s.Throttled != 4 {
		t.Errorf("Limiter stats %+v, want 4 tries paced and throttled (azcore's 3 retries)", s)
	}
}

// sent counts the tries that get past the policies before it.
type sent struct{ n atomic.Int64 }

func (s *sent) Do(req *policy.Request) (*http.Response, error) {
	s.n.Add(1)
	return req.Next()
}

// A write whose context ends while it waits for its turn returns the
// context's error through entity and azcore, and nothing of it is sent:
// the Limiter at 1 entity/s lets the first insert of a partition go and
// holds the second, whose deadline passes first. A later insert with time
// to wait is sent.
func TestLimiterWaitEndsWithTheContext(t *testing.T) {
	lim, err := throttle.NewLimiter(throttle.Config{PartitionRate: 1})
	if err != nil {
		t.Fatal(err)
	}
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
		t.Fatal(err)
	}
	after := &sent{}
	tbl, err := entity.NewTableFromService[reading](env.With(lim, after).TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Insert(t.Context(), &reading{PartitionKey: "p", RowKey: "1"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	err = tbl.Insert(ctx, &reading{PartitionKey: "p", RowKey: "2"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an insert whose deadline passed while it waited: %v, want context.DeadlineExceeded", err)
	}
	if after.n.Load() != 1 {
		t.Fatalf("%d tries sent, want only the first insert", after.n.Load())
	}
	if _, err := env.TableService.NewClient(name).GetEntity(t.Context(), "p", "2", nil); err == nil {
		t.Fatal("the insert given up while waiting is stored")
	}
	if err := tbl.Insert(t.Context(), &reading{PartitionKey: "p", RowKey: "3"}); err != nil || after.n.Load() != 2 {
		t.Fatalf("a later insert: %v, %d tries sent", err, after.n.Load())
	}
}
