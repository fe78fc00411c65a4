package eventual_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// TestSubmitErrorsNameTheOutboxAndCommitNothing: a Submit whose change the
// service refuses (an ETag that is no longer current: another writer
// changed the employee) and one whose change breaks the transaction rules
// (another partition, refused before any request) both return an error
// prefixed "eventual: outbox" that names the partition and unwraps to
// entity's sentinel — and the *TransactionError's Index counts the
// intents first, as Submit's doc says. Read raw, nothing was committed:
// the employee is the other writer's, no intent is there, and no message
// was sent.
func TestSubmitErrorsNameTheOutboxAndCommitNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pr := newPayroll(t)
	_, o := pr.on(t, env, eventual.Config{})
	stale, err := pr.emps.Get(ctx, "Sales", "000123")
	if err != nil {
		t.Fatal(err)
	}
	other := stale
	other.Salary = 1500
	if err := pr.emps.Update(ctx, &other, entity.Merge); err != nil {
		t.Fatal(err)
	}
	m1, _ := raiseKind.Message(RaiseRecorded{"Sales"})
	m2, _ := raiseKind.Message(RaiseRecorded{"Sales"})
	err = o.Submit(ctx, "Sales", func(b *entity.Batch) error {
		stale.Salary = 2000
		b.Update(&stale, entity.Merge)
		return nil
	}, m1, m2)
	var te *entity.TransactionError
	if !errors.Is(err, entity.ErrPreconditionFailed) || !errors.As(err, &te) || te.Index != 2 {
		t.Fatalf("Submit with a stale change = %v, want ErrPreconditionFailed at operation 2", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "eventual: outbox") || !strings.Contains(msg, `PartitionKey "Sales"`) {
		t.Errorf("Submit's error %q does not name the outbox and the partition", msg)
	}
	err = o.Submit(ctx, "Sales", func(b *entity.Batch) error {
		b.Upsert(&Employee{PartitionKey: "Other", RowKey: "x"}, entity.Replace)
		return nil
	}, m1)
	if !errors.Is(err, entity.ErrInvalid) || !strings.HasPrefix(err.Error(), "eventual: outbox") {
		t.Errorf("Submit with a change in another partition = %v, want entity.ErrInvalid prefixed eventual: outbox", err)
	}
	raw := env.TableService.NewClient(pr.emps.Name())
	got, err := raw.GetEntity(ctx, "Sales", "000123", nil)
	if err != nil || !strings.Contains(string(got.Value), `"Salary":"1500"`) {
		t.Errorf("the employee is %s (%v), want the other writer's 1500", got.Value, err)
	}
	if rks := rowKeys(t, pr.emps); len(rks) != 1 {
		t.Errorf("the partition holds %v: an intent was committed", rks)
	}
	if n := count(t, pr.qs[0].Work); n != 0 {
		t.Errorf("%d messages sent", n)
	}
}
