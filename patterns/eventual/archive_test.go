package eventual_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// archiver wires the guide's archive example on a processor: Move from
// Current to Archive, then count the archived employee on its department
// exactly once.
type archiver struct {
	current, archive *entity.Table[Employee]
	depts            *entity.Table[Department]
}

func (a archiver) handle(ctx context.Context, m ArchiveEmployee) error {
	if err := eventual.Move(ctx, a.current, a.archive, m.Department, m.ID, nil); err != nil {
		return err
	}
	_, err := eventual.Once(ctx, a.depts, m.Department, "count", func(ctx context.Context, b *entity.Batch) error {
		d, err := a.depts.Get(ctx, m.Department, "dept")
		if err != nil {
			return err
		}
		d.Archived++
		b.Update(&d, entity.Merge)
		return nil
	})
	return err
}

func seed(t testing.TB, current *entity.Table[Employee], depts *entity.Table[Department], dept string, n int) []string {
	t.Helper()
	ctx := context.Background()
	if err := depts.Upsert(ctx, &Department{PartitionKey: dept, RowKey: "dept"}, entity.Replace); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	emps := make([]Employee, n)
	for i := range n {
		ids[i] = fmt.Sprintf("%06d", i+1)
		emps[i] = Employee{PartitionKey: dept, RowKey: ids[i], Name: "Employee " + ids[i], Salary: int64(1000 * (i + 1))}
	}
	if _, err := current.BulkWrite(ctx, emps, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestArchive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := archiver{patterntest.Table[Employee](t, env), patterntest.Table[Employee](t, env), patterntest.Table[Department](t, env)}
	ids := seed(t, a.current, a.depts, "Sales", 10)
	qs := patterntest.Queues(t, env, 2)
	rec := newOutcomes()
	cfg := patterntest.Fast()
	cfg.Hooks = rec.hooks()
	p, err := eventual.New(qs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := eventual.Handle(p, archiveKind, a.handle, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	var msgs []eventual.Message
	for _, id := range ids {
		m, err := archiveKind.Message(ArchiveEmployee{"Sales", id})
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	if err := p.Enqueue(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	// Both queues got some.
	for i, q := range qs {
		if n, err := patterntest.MessageCount(ctx, q.Work); err != nil || n == 0 {
			t.Errorf("queue %d holds %d messages (%v); the ids should spread over both", i, n, err)
		}
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := patterntest.Drain(dctx, p, qs); err != nil {
		t.Fatal(err)
	}
	if got := rowKeys(t, a.current); len(got) != 0 {
		t.Errorf("Current still holds %v", got)
	}
	if got := rowKeys(t, a.archive); !slices.Equal(got, ids) {
		t.Errorf("Archive holds %v, want %v", got, ids)
	}
	d, err := a.depts.Get(ctx, "Sales", "dept")
	if err != nil {
		t.Fatal(err)
	}
	if d.Archived != int64(len(ids)) {
		t.Errorf("Archived = %d, want %d", d.Archived, len(ids))
	}
	if got := rec.count(eventual.Done); got != len(ids) {
		t.Errorf("%d Done outcomes, want %d: %+v", got, len(ids), rec.list())
	}
	for _, o := range rec.list() {
		if o.Kind != archiveKind.Name() || o.ID == "" || o.DequeueCount != 1 {
			t.Errorf("outcome %+v", o)
		}
	}
}
