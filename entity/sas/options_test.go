package sas_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/sas"
	"github.com/tablekit/tablekit/integration/faults"
)

// TestOpenTableSettlesLostReplies: OpenTable, OpenClient and OpenService
// give the caller's options tablekit's pipeline policies, as entity's
// constructors do. An insert through a SAS URL whose reply is lost, which
// azcore resends and the service answers 409, is reported as done (a
// client without the policies reports the 409); the caller's policy sees
// every try, and the caller's options are not changed.
func TestOpenTableSettlesLostReplies(t *testing.T) {
	f := newFixture(t)
	if f == nil {
		return
	}
	ctx := t.Context()
	u, err := f.iss.Grant(f.name, sas.Partition("carol"), sas.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	inj := faults.New(faults.Config{})
	opts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry:            policy.RetryOptions{MaxRetries: 2, RetryDelay: 50 * time.Millisecond},
		PerRetryPolicies: []policy.Policy{inj},
	}}
	isInsert := func(r *http.Request) bool {
		return r.Method == http.MethodPost && !strings.HasSuffix(r.URL.Path, "$batch")
	}

	tbl, err := sas.OpenTable[Order](u, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.PerRetryPolicies) != 1 || len(opts.PerCallPolicies) != 0 {
		t.Fatalf("the caller's options were changed: %d per-retry, %d per-call policies", len(opts.PerRetryPolicies), len(opts.PerCallPolicies))
	}
	inj.LoseNext(1, isInsert)
	if err := tbl.Insert(ctx, &Order{Customer: "carol", ID: "1", Total: 5}); err != nil {
		t.Fatalf("Insert through OpenTable after a lost reply: %v", err)
	}
	if s := inj.Stats(); s.LostReplies != 1 {
		t.Fatalf("lost replies %d, want 1", s.LostReplies)
	}
	if _, err := env.TableService.NewClient(f.name).GetEntity(ctx, "carol", "1", nil); err != nil {
		t.Fatalf("the order: %v", err)
	}

	// OpenClient: a client for entity.NewTable, with the policies.
	c, err := sas.OpenClient(u, opts)
	if err != nil {
		t.Fatal(err)
	}
	viaClient, err := entity.NewTable[Order](c)
	if err != nil {
		t.Fatal(err)
	}
	inj.LoseNext(1, isInsert)
	if err := viaClient.Insert(ctx, &Order{Customer: "carol", ID: "2", Total: 6}); err != nil {
		t.Fatalf("Insert through OpenClient after a lost reply: %v", err)
	}

	// The same loss on a client built without them: the 409 as answered.
	raw, err := aztables.NewClientWithNoCredential(u, opts)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := entity.NewTable[Order](raw)
	if err != nil {
		t.Fatal(err)
	}
	inj.LoseNext(1, isInsert)
	if err := plain.Insert(ctx, &Order{Customer: "carol", ID: "3", Total: 7}); !errors.Is(err, entity.ErrAlreadyExists) {
		t.Fatalf("Insert without tablekit's policies after a lost reply: %v, want the 409", err)
	}
}
