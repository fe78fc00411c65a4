package secondaryindex_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestSyncPastBadIndex: an employee's email changes through the Set,
// both indexes kept in another partition (the last name's declared
// first); before the worker runs, a write around the Set gives the
// employee a last name that makes no key. The message's handler cannot
// sync the last name's index, and still moves the email's entry: one
// index that cannot be synced does not hold the others back. Entries are
// read back with a raw client.
func TestSyncPastBadIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	raw := rawTable(t, tbl.Name())
	qs := patterntest.Queues(t, env, 1)
	cfg := fast()
	cfg.MaxDeliveries = 2
	p, err := eventual.New(patterntest.SameQueues(t, env, qs), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := secondaryindex.New(tbl, withProcessor(remoteConfig(nil), p), nameIndex(secondaryindex.OtherPartition), emailIndex(secondaryindex.OtherPartition))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: "old@x.com"}); err != nil {
		t.Fatal(err)
	}
	if err := patterntest.Drain(ctx, p, qs); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Modify(ctx, "Sales", empid(1), func(e *Employee) error { e.Email = "new@x.com"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	rawMerge(t, raw, "Sales", empid(1), map[string]any{"LastName": "a/b"})
	if err := patterntest.Drain(ctx, p, qs); err != nil {
		t.Fatal(err)
	}
	if e := rawGet(t, raw, "email_Sales", "email_new@x.com"); e == nil || e[secondaryindex.PropClaim] != nil {
		t.Errorf("the new email's entry: %v", e)
	}
	if e := rawGet(t, raw, "email_Sales", "email_old@x.com"); e != nil {
		t.Errorf("the old email's entry is left: %v", e)
	}
}
