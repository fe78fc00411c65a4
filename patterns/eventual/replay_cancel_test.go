package eventual_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestReplayCancelledReleasesWhatItHeld cancels Replay's context from its
// filter, at the first of three poison messages. Replay returns promptly
// with an error matching context.Canceled, having moved nothing, and the
// poison messages it had received are visible again at once (read raw
// with Peek, which shows only visible messages), byte for byte, instead
// of hidden for Config.VisibilityTimeout; the work queue is empty.
func TestReplayCancelledReleasesWhatItHeld(t *testing.T) {
	t.Parallel()
	w := newPoisonWorld(t)
	var originals []string
	for i := 1; i <= 3; i++ {
		m := strings.Replace(w.original, `"u1"`, fmt.Sprintf(`"c%d"`, i), 1)
		if _, err := w.qs[0].Poison.EnqueueMessage(t.Context(), m, nil); err != nil {
			t.Fatal(err)
		}
		originals = append(originals, m)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	filter := func(eventual.PoisonRecord) bool {
		calls++
		cancel()
		return true
	}
	n, err := w.processor(t, env, patterntest.Fast()).Replay(ctx, eventual.ReplayOptions{Filter: filter})
	if n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Replay = %d, %v; want 0 and context.Canceled", n, err)
	}
	if calls != 1 {
		t.Errorf("the filter ran %d times after the cancel, want once", calls)
	}
	var left []string
	for _, m := range rawPeek(t, w.qs[0].Poison) {
		left = append(left, *m.MessageText)
	}
	slices.Sort(left)
	if !slices.Equal(left, originals) {
		t.Errorf("visible in the poison queue:\n%q\nwant\n%q", left, originals)
	}
	// The work queue holds only newPoisonWorld's message, never poisoned.
	if work := rawPeek(t, w.qs[0].Work); len(work) != 1 || *work[0].MessageText != w.original {
		t.Errorf("the work queue holds %d messages, want only the unpoisoned one", len(work))
	}
}
