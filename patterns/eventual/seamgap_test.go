package eventual_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestReplayPastOneMessageThatFailsToMoveBack poisons five messages of a
// kind nobody handles (records kept), then replays them all while every
// try of the third Put Message into the work queue fails (an injected
// fault: the queue never takes that one). Replay goes on past it: it
// returns 4 and an error naming the poison message that stayed; the four
// others are in the work queue, byte for byte, without their records;
// the bad one is still in the poison queue, visible, with its record.
// Nothing is lost: a healthy Replay then moves it, and the work queue
// holds all five. Every queue and the container are read raw.
func TestReplayPastOneMessageThatFailsToMoveBack(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	w := newPoisonWorld(t)
	originals := []string{w.original}
	for i := 2; i <= 5; i++ {
		m := strings.Replace(w.original, `"u1"`, fmt.Sprintf(`"u%d"`, i), 1)
		if _, err := w.qs[0].Work.EnqueueMessage(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
		originals = append(originals, m)
	}
	if rep, err := w.processor(t, env, patterntest.Fast()).Drain(ctx); err != nil || rep.Poisoned != 5 {
		t.Fatalf("poisoning: %+v, %v", rep, err)
	}
	if n := len(rawPeek(t, w.qs[0].Poison)); n != 5 {
		t.Fatalf("%d messages poisoned, want 5", n)
	}
	container := env.BlobService.ServiceClient().NewContainerClient(w.blobs)
	if n := len(blobNames(t, container)); n != 5 {
		t.Fatalf("%d records, want 5", n)
	}

	// Every try of the Put Message of u3 into the work queue fails
	// before it is sent.
	name := queueName(t, w.qs[0])
	inj := faults.New(faults.Config{FailBefore: 1, Match: func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/"+name+"/messages") && strings.Contains(bodyOf(r), "u3")
	}})
	n, err := w.processor(t, env.With(inj), patterntest.Fast()).Replay(ctx, eventual.ReplayOptions{})
	if inj.Stats().FailedBefore == 0 {
		t.Fatalf("no Put Message failed: %+v", inj.Stats())
	}
	if n != 4 || err == nil || !errors.Is(err, faults.ErrInjected) {
		t.Fatalf("Replay = %d, %v; want 4 and the failure", n, err)
	}

	// The bad one stays in the poison queue, with its record.
	left := rawPeek(t, w.qs[0].Poison)
	if len(left) != 1 {
		t.Fatalf("%d messages left in the poison queue, want 1", len(left))
	}
	bad := *left[0].MessageText
	if bad != originals[2] {
		t.Errorf("the message left is not u3's original: %s", bad)
	}
	badPoisonID := *left[0].MessageID
	if msg := err.Error(); !strings.Contains(msg, badPoisonID) || !strings.HasPrefix(msg, "eventual: replay: ") {
		t.Errorf("the error does not name poison message %s: %q", badPoisonID, msg)
	}
	records := blobNames(t, container)
	if len(records) != 1 || !strings.Contains(records[0], badPoisonID) {
		t.Errorf("records left %v, want only the record of %s", records, badPoisonID)
	}
	rec, rerr := w.processor(t, env, patterntest.Fast()).PoisonRecord(ctx, name, badPoisonID)
	if rerr != nil || rec.Reason != eventual.ReasonUnknownKind || !strings.Contains(bad, `"`+rec.ID+`"`) {
		t.Errorf("the record of the message left: %+v, %v", rec, rerr)
	}

	// The others are back in the work queue as they were.
	var moved []string
	for _, m := range rawPeek(t, w.qs[0].Work) {
		moved = append(moved, *m.MessageText)
	}
	want := slices.DeleteFunc(slices.Clone(originals), func(s string) bool { return s == bad })
	slices.Sort(moved)
	slices.Sort(want)
	if !slices.Equal(moved, want) {
		t.Errorf("the work queue holds\n%q\nwant\n%q", moved, want)
	}

	// Nothing lost: a healthy Replay moves the last one.
	if n, err := w.processor(t, env, patterntest.Fast()).Replay(ctx, eventual.ReplayOptions{}); n != 1 || err != nil {
		t.Fatalf("the second Replay = %d, %v; want 1", n, err)
	}
	if n := len(rawPeek(t, w.qs[0].Work)); n != 5 {
		t.Errorf("the work queue holds %d messages, want 5", n)
	}
	if n := count(t, w.qs[0].Poison); n != 0 {
		t.Errorf("%d messages left in the poison queue", n)
	}
	if records := blobNames(t, container); len(records) != 0 {
		t.Errorf("records left: %v", records)
	}
}

// bodyOf reads a request's body and rewinds it for the send.
func bodyOf(r *http.Request) string {
	if r.GetBody == nil {
		return ""
	}
	rc, err := r.GetBody()
	if err != nil {
		return ""
	}
	b, _ := io.ReadAll(rc)
	if _, err := r.GetBody(); err != nil { // azcore's GetBody seeks the body back to its start
		return ""
	}
	return string(b)
}
