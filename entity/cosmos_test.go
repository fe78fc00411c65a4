package entity_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/cosmos"
	"github.com/tablekit/tablekit/internal/faults"
)

// cosmosEnv is env with the Cosmos DB profile on its table clients: env
// itself under TABLEKIT_PROFILE=cosmos, else a view adding the profile.
func cosmosEnv() *integration.Env {
	if env.Cosmos() {
		return env
	}
	return env.With(cosmos.New())
}

// TestCosmosTransactionOverAnIdenticalRow: a transaction whose first try
// failed on an entity another writer had stored exactly as this one sends
// it, and whose reply was lost, meets the same conflict on its resend.
// With ETags that carry no time (Cosmos DB's), nothing tells that stored
// entity from one the first try wrote: the transaction must not be
// reported written — its other inserts were never stored — but as
// ErrOutcomeUnknown (or refused). A transaction that was applied is still
// reported written, from its other inserts found as sent.
func TestCosmosTransactionOverAnIdenticalRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	opts := env.ClientOptions()
	f.SetEnabled(false)
	client := cosmosEnv().With(f).TableWith(t, entity.ClientOptions(opts))
	f.SetEnabled(true)
	people, err := entity.NewTable[Person](client)
	if err != nil {
		t.Fatal(err)
	}
	theirs := Person{Dept: "d", ID: "theirs", Name: "same"}
	if err := people.Insert(ctx, &theirs); err != nil {
		t.Fatal(err)
	}

	b := people.NewBatch()
	b.Insert(&Person{Dept: "d", ID: "mine", Name: "mine"})
	b.Insert(&Person{Dept: "d", ID: "theirs", Name: "same"})
	f.LoseNext(1, isBatch)
	_, err = people.Submit(ctx, b)
	if err == nil {
		t.Fatal("Submit reported a refused transaction written")
	}
	var te *entity.TransactionError
	if !errors.Is(err, entity.ErrOutcomeUnknown) && !errors.As(err, &te) {
		t.Fatalf("Submit: %v, want ErrOutcomeUnknown or a *TransactionError", err)
	}
	if f.Stats().LostReplies != 1 {
		t.Fatalf("the transaction's reply was not lost: %+v", f.Stats())
	}
	// Read back with a raw client: the transaction's other insert is absent.
	if _, err := env.TableService.NewClient(people.Name()).GetEntity(ctx, "d", "mine", nil); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("d/mine after the refused transaction: %v, want 404", err)
	}

	// Applied, reply lost: the resend fails on its first insert, which the
	// first try stored; its second insert, found as sent, tells.
	b = people.NewBatch()
	b.Insert(&Person{Dept: "d", ID: "a1", Name: "a"})
	b.Insert(&Person{Dept: "d", ID: "a2", Name: "a"})
	f.LoseNext(1, isBatch)
	if _, err := people.Submit(ctx, b); err != nil {
		t.Fatalf("applied transaction whose reply was lost: %v", err)
	}
	for _, rk := range []string{"a1", "a2"} {
		if _, err := env.TableService.NewClient(people.Name()).GetEntity(ctx, "d", rk, nil); err != nil {
			t.Fatalf("d/%s: %v", rk, err)
		}
	}
}

func isStatus(err error, status int) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == status
}
