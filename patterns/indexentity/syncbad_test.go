package indexentity_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestSyncPastBadList: an employee moves from Jones to Smith and from
// Paris to Rome, both indexes kept in another partition; Smith's list is
// damaged. The message's handler cannot write Smith's list, and still
// moves the employee from Paris's list to Rome's: one list that cannot be
// written does not hold the other indexes back. The message, failing on
// Smith's list alone, ends poisoned, and Rebuild then repairs Smith's
// list. Lists are read back with a raw client.
func TestSyncPastBadList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, indexentity.OtherPartition, 1)
	cfg := patterntest.Fast()
	cfg.MaxDeliveries = 2
	p, err := eventual.New(patterntest.SameQueues(t, env, w.qs), nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := indexentity.New(w.emps, indexentity.Config{Processor: p, Entries: w.entries, Outbox: eventual.OutboxConfig{Grace: -1}},
		indexentity.Index[Employee]{Name: "lastname", Value: lastName, Placement: indexentity.OtherPartition},
		indexentity.Index[Employee]{Name: "city", Value: city, Placement: indexentity.OtherPartition})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000001", LastName: "Jones", City: "Paris"}); err != nil {
		t.Fatal(err)
	}
	if err := patterntest.Drain(ctx, p, w.qs); err != nil {
		t.Fatal(err)
	}
	bad := &entity.DynamicEntity{PartitionKey: "lastname_Sales", RowKey: "lastname_Smith", Properties: map[string]any{indexentity.PropMembers: "garbage"}}
	if err := w.entries.Upsert(ctx, bad, entity.Replace); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Modify(ctx, "Sales", "000001", func(e *Employee) error { e.LastName, e.City = "Smith", "Rome"; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := patterntest.Drain(ctx, p, w.qs); err != nil {
		t.Fatal(err)
	}
	if n := count(t, w.qs[0].Poison); n != 1 {
		t.Errorf("%d messages poisoned, want the one that cannot write Smith's list", n)
	}
	members := func(rk string) string {
		e := rawGet(t, w.entries.Name(), map[bool]string{true: "city_Sales", false: "lastname_Sales"}[rk[:4] == "city"], rk)
		if e == nil {
			return ""
		}
		m, _ := e["Members"].(string)
		return m
	}
	if paris, rome := members("city_Paris"), members("city_Rome"); paris != "" || rome != "000001\n" {
		t.Errorf("city lists: Paris %q, Rome %q", paris, rome)
	}
	if smith := members("lastname_Smith"); smith != "garbage" {
		t.Errorf("Smith's list: %q", smith)
	}
	if _, err := s.Rebuild(ctx, indexentity.CheckOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Members(ctx, "lastname", "Sales", "Smith"); err != nil || !slices.Equal(got, []string{"000001"}) {
		t.Errorf("Smith after the rebuild: %v, %v", got, err)
	}
	noDrift(t, s)
}
