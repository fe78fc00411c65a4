package bloblog_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit/patterns/bloblog"
)

// TestBesideAReplacedBlob: someone deletes a Logger's blob and another
// Logger creates a blob of the same name (the period's next sequence
// number, as far as its listing tells) and writes a record of the same
// length to it. The first Logger then flushes a record, outside its
// blob's recorded range ("widen") or inside it ("append"). It must not
// set its own range and writer id over the other Logger's blob (a reader
// would skip that blob for the other Logger's record's time, and the
// other Logger would no longer take it for its own), nor append to it
// (the append position matches): it leaves the blob for a new one. A
// read of the other record's time finds it, a read of the hour finds both
// records written after the delete, in two blobs.
func TestBesideAReplacedBlob(t *testing.T) {
	t.Parallel()
	t.Run("widen", func(t *testing.T) { t.Parallel(); besideAReplacedBlob(t, 20*time.Minute) })
	t.Run("append", func(t *testing.T) { t.Parallel(); besideAReplacedBlob(t, 10*time.Minute) })
}

func besideAReplacedBlob(t *testing.T, second time.Duration) {
	ctx := context.Background()
	c := containerOf(env, newContainer(t))
	cfg := bloblog.Config{Service: "queue"}
	a, err := bloblog.New(ctx, c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append(hourBase.Add(10*time.Minute), []byte("a1")); err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	names, _, _ := blobStats(t, c)
	if len(names) != 1 {
		t.Fatalf("blobs %v, want 1", names)
	}
	if _, err := c.NewBlobClient(names[0]).Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	b, err := bloblog.New(ctx, c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Append(hourBase.Add(40*time.Minute), []byte("b1")); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if again, _, _ := blobStats(t, c); !slices.Equal(again, names) {
		t.Fatalf("blobs %v, want the other Logger's under the deleted one's name %v", again, names)
	}
	if err := a.Append(hourBase.Add(second), []byte("a2")); err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := bloblog.NewReader(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := datas(readAll(t, r, hourBase.Add(30*time.Minute), hourBase.Add(50*time.Minute))); !slices.Equal(got, []string{"b1"}) {
		t.Errorf("read of 18:30–18:50: %q, want [b1]", got)
	}
	got := datas(readAll(t, r, hourBase, hourBase.Add(time.Hour)))
	slices.Sort(got)
	if !slices.Equal(got, []string{"a2", "b1"}) {
		t.Errorf("read of the hour: %q, want [a2 b1]", got)
	}
	if names, _, _ := blobStats(t, c); len(names) != 2 {
		t.Errorf("blobs %v, want the other Logger's and a new one", names)
	}
	if err := errlessClose(a, b); err != nil {
		t.Fatal(err)
	}
}

func errlessClose(ls ...*bloblog.Logger) error {
	for _, l := range ls {
		if err := l.Close(); err != nil {
			return err
		}
	}
	return nil
}
