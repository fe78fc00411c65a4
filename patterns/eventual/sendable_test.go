package eventual_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// Note is a payload whose size the test chooses.
type Note struct {
	Text string `json:"text"`
}

var noteKind = eventual.NewKind[Note]("Note.v1")

// TestSubmitRefusesAnUnsendableMessage: a processor without a blob
// container (allowed) and a 50 KiB payload, under the 64 KiB an intent
// holds but over a queue message once enveloped and base64-encoded. Submit
// refuses it with a *MessageError matching ErrTooLarge before its
// transaction: the employee keeps the old salary, no intent is written,
// nothing is queued (all read with raw clients). CheckSendable says the
// same beforehand; with a container the same Submit commits and sends.
func TestSubmitRefusesAnUnsendableMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pr := newPayroll(t)
	p, o := pr.on(t, env, patterntest.Fast())
	big, err := noteKind.Message(Note{strings.Repeat("n", 50<<10)})
	if err != nil {
		t.Fatal(err)
	}
	raise := func(o *eventual.Outbox[Employee]) error {
		return o.Submit(ctx, "Sales", func(b *entity.Batch) error {
			b.UpdateAny(&Employee{PartitionKey: "Sales", RowKey: "000123", Name: "Jones", Salary: 2000}, entity.Merge)
			return nil
		}, big)
	}
	var me *eventual.MessageError
	if err := p.CheckSendable(big); !errors.Is(err, eventual.ErrTooLarge) || !errors.As(err, &me) || me.ID != big.ID {
		t.Errorf("CheckSendable = %v, want a *MessageError naming %s matching ErrTooLarge", err, big.ID)
	}
	err = raise(o)
	if !errors.Is(err, eventual.ErrTooLarge) || !errors.As(err, &me) || me.ID != big.ID || me.Kind != noteKind.Name() {
		t.Fatalf("Submit = %v, want a *MessageError naming %s matching ErrTooLarge", err, big.ID)
	}
	rows := rawRows(t, pr.emps)
	if len(rows) != 1 || rows[0]["Salary"] != "1000" && rows[0]["Salary"] != float64(1000) {
		t.Errorf("after the refused Submit the partition holds %v: something was committed", rows)
	}
	if n := count(t, pr.qs[0].Work); n != 0 {
		t.Errorf("%d messages sent", n)
	}

	// With a container the message can be sent: Submit commits and sends it
	// (its payload as a claim-checked blob).
	withBlobs, err := eventual.New(pr.qs, env.Container(t), patterntest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	if err := withBlobs.CheckSendable(big); err != nil {
		t.Fatalf("CheckSendable with a container = %v", err)
	}
	o2, err := eventual.NewOutbox(withBlobs, pr.emps, eventual.OutboxConfig{Grace: eventual.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	if err := raise(o2); err != nil {
		t.Fatalf("Submit with a container = %v", err)
	}
	if keys := rawKeys(t, pr.emps); len(keys) != 1 {
		t.Errorf("after Submit the partition holds %v: the intent was not deleted", keys)
	}
	if n := count(t, pr.qs[0].Work); n != 1 {
		t.Errorf("%d messages sent, want 1", n)
	}
}
