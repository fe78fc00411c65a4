package large_test

import (
	"context"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/large"
)

// A Table without a processor writes, replaces and deletes as one with
// one, sending no message: the blobs that fall out of use stay (read with
// a raw azblob listing, the queue peeked empty with a raw azqueue client)
// until a Sweep past the grace period deletes them; the entity never
// references a missing blob meanwhile.
func TestWithoutProcessor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	tbl, err := entity.NewTableFromService[Employee](env.TableService, f.table)
	if err != nil {
		t.Fatal(err)
	}
	emps, err := large.New(tbl, f.cont, testConfig()) // no Processor
	if err != nil {
		t.Fatal(err)
	}
	e := v1.employee()
	if err := emps.Insert(ctx, &e); err != nil {
		t.Fatal(err)
	}
	first := f.blobNames(t)
	e2 := v2.employee()
	e2.ETag = e.ETag
	if err := emps.Replace(ctx, &e2); err != nil {
		t.Fatal(err)
	}
	got, err := emps.Get(ctx, "Sales", "000123")
	if err != nil || got.Name != "v2" || same(got.Photo, v2.photo) != "" {
		t.Fatalf("Get after the Replace: %q %v", got.Name, err)
	}
	e3 := Employee{Dept: "Sales", ID: "000124", Photo: v1.photo}
	if err := emps.Insert(ctx, &e3); err != nil {
		t.Fatal(err)
	}
	if err := emps.Delete(ctx, "Sales", "000124", entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	q := eventual.QueuesOf(env.QueueService, f.queue)[0].Work
	peeked, err := q.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	if err != nil {
		t.Fatal(err)
	}
	if len(peeked.Messages) != 0 {
		t.Errorf("%d messages on the queue, want none", len(peeked.Messages))
	}
	// v1's photo and video (the résumé is the same in v2 and kept), and
	// 000124's photo, are left over.
	blobs, refs := f.blobNames(t), f.referenced(t)
	if len(blobs) != len(refs)+3 {
		t.Errorf("%d blobs for %d references, want 3 left over", len(blobs), len(refs))
	}
	if m := f.missing(t); len(m) > 0 {
		t.Errorf("references to missing blobs %q", m)
	}
	for _, name := range first {
		if !slices.Contains(blobs, name) && !slices.Contains(refs, name) {
			t.Errorf("blob %s of the replaced version is gone before any Sweep", name)
		}
	}
	res, err := emps.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 3 {
		t.Errorf("Sweep = %+v, want 3 deleted", res)
	}
	f.checkClean(t)
	readsAs(t, f, false, v2)
}
