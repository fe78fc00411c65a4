package eventual_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// TestSubmitRefusesMoreMessagesThanItsTransactionHolds: 101 messages, and
// 98 beside a change of three operations, do not fit one entity group
// transaction. Each Submit is refused before any request with a
// *TooManyMessagesError that names Submit, the count and the limit
// (MaxSubmitMessages less the change's operations) and matches
// ErrInvalidMessage and entity.ErrInvalid, not ErrTooLarge; read raw,
// nothing was committed and nothing sent. 97 beside the same change
// commit.
func TestSubmitRefusesMoreMessagesThanItsTransactionHolds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pr := newPayroll(t)
	_, o := pr.on(t, env, eventual.Config{})
	msgs := func(n int) []eventual.Message {
		out := make([]eventual.Message, n)
		for i := range out {
			out[i], _ = noteKind.Message(Note{fmt.Sprint(i)})
		}
		return out
	}
	change := func(b *entity.Batch) error {
		for _, rk := range []string{"000124", "000125", "000126"} {
			b.Upsert(&Employee{PartitionKey: "Sales", RowKey: rk, Name: "New"}, entity.Replace)
		}
		return nil
	}
	for _, c := range []struct {
		name         string
		change       func(*entity.Batch) error
		count, limit int
	}{
		{"101 messages", nil, 101, 100},
		{"98 messages beside 3 operations", change, 98, 97},
	} {
		err := o.Submit(ctx, "Sales", c.change, msgs(c.count)...)
		var tm *eventual.TooManyMessagesError
		if !errors.As(err, &tm) || tm.Op != "Submit" || tm.Count != c.count || tm.Limit != c.limit {
			t.Errorf("%s: Submit = %v, want a *TooManyMessagesError naming Submit, %d and %d", c.name, err, c.count, c.limit)
			continue
		}
		if !errors.Is(err, eventual.ErrInvalidMessage) || !errors.Is(err, entity.ErrInvalid) || errors.Is(err, eventual.ErrTooLarge) {
			t.Errorf("%s: %v matches the wrong sentinels", c.name, err)
		}
		if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("%d messages, more than the %d", c.count, c.limit)) || strings.Contains(msg, `""`) {
			t.Errorf("%s: %q does not say the count and the limit plainly", c.name, msg)
		}
	}
	if rks := rowKeys(t, pr.emps); len(rks) != 1 {
		t.Errorf("the partition holds %v: something was committed", rks)
	}
	if n := count(t, pr.qs[0].Work); n != 0 {
		t.Errorf("%d messages sent", n)
	}
	if err := o.Submit(ctx, "Sales", change, msgs(97)...); err != nil {
		t.Fatalf("97 messages beside 3 operations: %v", err)
	}
	if n := count(t, pr.qs[0].Work); n != 97 {
		t.Errorf("%d messages sent, want 97", n)
	}
}
