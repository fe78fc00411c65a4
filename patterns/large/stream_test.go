package large_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/large"
)

// A Stream read by Get keeps its blob when the entity is written again:
// a replace of the name only uploads nothing. A Stream read from a version
// that was replaced since cannot be written back: ErrStaleStream, nothing
// uploaded. A zero Stream, or an empty reader, is no value.
func TestStreamKeepsItsBlob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	stored(t, f)
	meter := cost.NewMeter()
	metered := f.on(t, env.With(meter.Policy()))

	e, err := f.emps.Get(ctx, "Sales", "000123")
	if err != nil {
		t.Fatal(err)
	}
	stale := e
	e.Name = "renamed"
	before := meter.Snapshot()
	if err := metered.emps.Replace(ctx, &e); err != nil {
		t.Fatal(err)
	}
	used := meter.Snapshot().Sub(before)
	if used.Of(cost.Blob) != 0 || used.Total() != 2 {
		t.Errorf("a replace of the name only cost %v, want the read and the replace", used)
	}
	if e.Video.Ref() != stale.Video.Ref() {
		t.Errorf("the video's reference changed: %+v, was %+v", e.Video.Ref(), stale.Video.Ref())
	}

	other := e
	other.Video = large.NewStream(strings.NewReader("a new video"))
	if err := f.emps.Replace(ctx, &other); err != nil {
		t.Fatal(err)
	}
	stale.ETag = entity.AnyETag
	before = meter.Snapshot()
	err = metered.emps.Replace(ctx, &stale)
	if !errors.Is(err, large.ErrStaleStream) {
		t.Errorf("writing back a replaced version's Stream: %v, want ErrStaleStream", err)
	}
	if used := meter.Snapshot().Sub(before); used.Of(cost.Blob) != 0 {
		t.Errorf("the refused replace uploaded: %v", used)
	}

	for name, s := range map[string]large.Stream{"zero": {}, "empty reader": large.NewStream(bytes.NewReader(nil))} {
		e := Employee{Dept: "Sales", ID: "empty " + name, Photo: []byte("x"), Video: s}
		if err := f.emps.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
		got, err := f.emps.Get(ctx, "Sales", e.ID)
		if err != nil {
			t.Fatal(err)
		}
		data, err := readAll(t, got.Video)
		if err != nil || len(data) != 0 || !got.Video.Ref().IsZero() || got.CV != "" {
			t.Errorf("%s Stream: %q, %v, ref %+v, résumé %q", name, data, err, got.Video.Ref(), got.CV)
		}
	}
	if _, err := large.NewStream(strings.NewReader("x")).Open(ctx); err == nil {
		t.Error("Open of a Stream not yet written succeeded")
	}
	f.settle(t)
	f.checkClean(t)
}
