package eventual_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// Photo is a payload far over a queue message's 64 KiB.
type Photo struct {
	Employee string `json:"employee"`
	Data     string `json:"data"`
}

var photoKind = eventual.NewKind[Photo]("StorePhoto.v1")

// TestClaimCheck sends a payload of 200 KiB: it is written to a blob, the
// message carries the blob's name, the handler gets the whole payload, and
// the blob is deleted once the message is done. A copy of the message
// that arrives after that finds no blob and counts as done without running
// the handler again.
func TestClaimCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs := patterntest.Queues(t, env, 1)
	blobs := env.Container(t)
	rec := newOutcomes()
	cfg := patterntest.Fast()
	cfg.Workers = 1
	cfg.Hooks = rec.hooks()
	p, err := eventual.New(qs, blobs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []Photo
	if err := eventual.Handle(p, photoKind, func(_ context.Context, ph Photo) error {
		mu.Lock()
		got = append(got, ph)
		mu.Unlock()
		return nil
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	big := Photo{Employee: "000123", Data: strings.Repeat("0123456789abcdef", 200<<10/16)}
	m, err := photoKind.Message(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Enqueue(ctx, m, m); err != nil { // and a duplicate
		t.Fatal(err)
	}
	texts := peekAll(t, qs[0].Work)
	if len(texts) != 2 || len(texts[0]) > 1024 {
		t.Fatalf("queue holds %d messages, the first of %d bytes: the payload should be in a blob", len(texts), len(texts[0]))
	}
	var blobCount int
	for pager := blobs.NewListBlobsFlatPager(nil); pager.More(); {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		blobCount += len(page.Segment.BlobItems)
		for _, b := range page.Segment.BlobItems {
			if want := photoKind.Name() + "/" + m.ID; *b.Name != want {
				t.Errorf("blob %q, want %q", *b.Name, want)
			}
		}
	}
	if blobCount != 1 {
		t.Errorf("%d blobs, want 1", blobCount)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := patterntest.Drain(dctx, p, qs); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != big {
		t.Errorf("the handler ran %d times (want 1) or got a different payload", len(got))
	}
	if n := rec.count(eventual.Done); n != 2 {
		t.Errorf("%d deliveries done, want 2", n)
	}
	pager := blobs.NewListBlobsFlatPager(nil)
	page, err := pager.NextPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Segment.BlobItems) != 0 {
		t.Errorf("%d blobs left after the message was done", len(page.Segment.BlobItems))
	}

	// Without a container the same message is refused before any request.
	q2 := patterntest.Queues(t, env, 1)
	noBlobs, err := eventual.New(q2, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = noBlobs.Enqueue(ctx, m)
	var me *eventual.MessageError
	if !errors.Is(err, eventual.ErrTooLarge) || !errors.As(err, &me) || me.ID != m.ID {
		t.Errorf("Enqueue without a container = %v, want a *MessageError matching ErrTooLarge", err)
	}
	if n := count(t, q2[0].Work); n != 0 {
		t.Errorf("%d messages sent", n)
	}
}
