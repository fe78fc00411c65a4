package logtail_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/logtail"
)

// With a third of all replies lost (the request applied, azcore retrying
// it), Append stores every entry exactly once and Trim removes exactly the
// old entries, counting each once, without an error.
func TestLostReplies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{LoseReply: 0.3, Seed: 12})
	tbl := faultyTable(t, f)
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	l := newLog(t, tbl, logtail.Config{Now: stepClock(t0, time.Millisecond)})

	var reported []string
	for round := range 20 {
		one := &Attempt{N: int32(round)}
		if err := l.Append(ctx, "p", one); err != nil {
			t.Fatalf("Append: %v", err)
		}
		batch := make([]*Attempt, 30)
		for i := range batch {
			batch[i] = &Attempt{N: int32(round)}
		}
		if err := l.Append(ctx, "p", batch...); err != nil {
			t.Fatalf("Append of %d: %v", len(batch), err)
		}
		reported = append(reported, one.RowKey)
		for _, e := range batch {
			reported = append(reported, e.RowKey)
		}
	}
	if f.Stats().LostReplies == 0 {
		t.Fatal("no reply was lost: the test proves nothing")
	}
	stored := func() []string {
		f.SetEnabled(false)
		defer f.SetEnabled(true)
		var out []string
		for e, err := range l.Since(ctx, "p", time.Time{}) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e.RowKey)
		}
		return out
	}
	slices.SortFunc(reported, keys.Compare)
	if got := stored(); !slices.Equal(got, reported) {
		t.Fatalf("stored %d entries, want exactly the %d reported", len(got), len(reported))
	}

	// The first delete transaction's reply is lost twice: its retries find
	// entries already gone.
	lostBefore := f.Stats().LostReplies
	f.LoseNext(2, func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "$batch") })
	cut := t0.Add(400 * time.Millisecond) // entries 0 … 399 go
	n, err := l.Trim(ctx, "p", cut)
	if err != nil || n != 400 {
		t.Fatalf("Trim = %d, %v; want 400", n, err)
	}
	if f.Stats().LostReplies < lostBefore+2 {
		t.Fatal("no reply of Trim was lost: the test proves nothing")
	}
	if got, want := stored(), reported[:len(reported)-400]; !slices.Equal(got, want) {
		t.Fatalf("after Trim %d entries, want the newest %d", len(got), len(want))
	}
}
