package faults_test

import (
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

func entityBody(rk string) []byte {
	return []byte(`{"PartitionKey":"p","RowKey":"` + rk + `"}`)
}

func exists(t *testing.T, c *aztables.Client, rk string) bool {
	t.Helper()
	_, err := c.GetEntity(t.Context(), "p", rk, nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// A lost reply on an insert: the insert is applied, azcore retries it, and
// the retry reports 409 for the caller's own write — the trap every tablekit
// write path must see through.
func TestLoseNextAppliesThenRetries(t *testing.T) {
	f := faults.New(faults.Config{})
	client := env.With(f).Table(t)
	f.LoseNext(1, func(r *http.Request) bool { return r.Method == http.MethodPost })
	_, err := client.AddEntity(t.Context(), entityBody("a"), nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusConflict {
		t.Fatalf("retried insert after a lost reply: %v, want 409", err)
	}
	if !exists(t, client, "a") {
		t.Fatal("the insert whose reply was lost was not applied")
	}
	if s := f.Stats(); s.LostReplies != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// LoseNextThen runs the second writer after the first try was executed and
// before azcore's resend: the resend meets the other writer's change.
func TestLoseNextThenRunsInsideTheRetryWindow(t *testing.T) {
	f := faults.New(faults.Config{})
	name, plain := newTable(t)
	svc, err := env.With(f).NewTableService(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := svc.NewClient(name)
	ran := 0
	f.LoseNextThen(1, func(r *http.Request) bool { return r.Method == http.MethodPost }, func(*http.Request) {
		ran++
		if !exists(t, plain, "c") {
			t.Error("then ran before the lost request was executed")
		}
		if _, err := plain.DeleteEntity(t.Context(), "p", "c", nil); err != nil {
			t.Errorf("second writer: %v", err)
		}
	})
	// The resend finds the entity deleted by the second writer: it inserts
	// it again, so the caller sees success for a write applied twice.
	if _, err := client.AddEntity(t.Context(), entityBody("c"), nil); err != nil {
		t.Fatalf("resent insert after the second writer's delete: %v", err)
	}
	if ran != 1 {
		t.Fatalf("then ran %d times, want 1", ran)
	}
	if !exists(t, plain, "c") {
		t.Fatal("the resend did not insert again")
	}
}

func TestFailBeforeSendsNothing(t *testing.T) {
	f := faults.New(faults.Config{FailBefore: 1})
	svc, err := env.With(f).NewTableService(env.NoRetryClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	name, plain := newTable(t)
	client := svc.NewClient(name)
	_, err = client.AddEntity(t.Context(), entityBody("b"), nil)
	if !errors.Is(err, faults.ErrInjected) {
		t.Fatalf("err = %v, want ErrInjected", err)
	}
	if exists(t, plain, "b") {
		t.Fatal("a request failed before sending reached the service")
	}
	f.SetEnabled(false)
	if _, err := client.AddEntity(t.Context(), entityBody("b"), nil); err != nil {
		t.Fatalf("disabled injector still failed: %v", err)
	}
	if s := f.Stats(); s.FailedBefore != 1 || s.Requests != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestRatesAreRepeatable(t *testing.T) {
	run := func() faults.Stats {
		f := faults.New(faults.Config{LoseReply: 0.2, FailBefore: 0.1, Seed: 7})
		name, _ := newTable(t)
		svc, err := env.With(f).NewTableService(env.NoRetryClientOptions())
		if err != nil {
			t.Fatal(err)
		}
		client := svc.NewClient(name)
		for i := range 60 {
			_, _ = client.UpsertEntity(t.Context(), entityBody(string(rune('a'+i%26))+string(rune('a'+i/26))), nil)
		}
		return f.Stats()
	}
	a, b := run(), run()
	if a != b {
		t.Fatalf("same seed, different faults: %+v vs %+v", a, b)
	}
	if a.LostReplies == 0 || a.FailedBefore == 0 || a.LostReplies+a.FailedBefore > 40 {
		t.Fatalf("rates not applied: %+v", a)
	}
}

func TestProxyResetsMidReply(t *testing.T) {
	u, err := url.Parse(env.TableEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	p, err := faults.NewProxy(u.Host, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	endpoint, err := p.Rewrite(env.TableEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	name, plain := newTable(t)
	cred, err := aztables.NewSharedKeyCredential(integration.AzuriteAccountName, integration.AzuriteAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := aztables.NewServiceClientWithSharedKey(endpoint, cred, env.NoRetryClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	client := svc.NewClient(name)
	if _, err := client.AddEntity(t.Context(), entityBody("c"), nil); err != nil {
		t.Fatalf("through the proxy, no faults: %v", err)
	}
	p.SetResetRate(1)
	if _, err := client.AddEntity(t.Context(), entityBody("d"), nil); err == nil {
		t.Fatal("reset rate 1 let a reply through")
	}
	if !exists(t, plain, "d") {
		t.Fatal("the request whose reply was reset was not executed")
	}
	if p.Resets() == 0 {
		t.Fatal("no reset counted")
	}
	if _, err := faults.NewProxy("10.0.0.1:80", 1); err == nil {
		t.Fatal("proxy accepted a non-loopback target")
	}
}

// newTable creates a table and returns its name and a fault-free client.
func newTable(t *testing.T) (string, *aztables.Client) {
	t.Helper()
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
		t.Fatal(err)
	}
	return name, env.TableService.NewClient(name)
}
