package bloblog_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/bloblog"
)

var hourBase = time.Date(2031, 7, 31, 18, 0, 0, 0, time.UTC)

func datas(recs []bloblog.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Data)
	}
	return out
}

// Close writes what is buffered; nothing is lost on a clean shutdown, and
// Append refuses afterwards.
func TestCloseFlushes(t *testing.T) {
	t.Parallel()
	c := containerOf(env, newContainer(t))
	cfg := bloblog.Config{Service: "queue", FlushInterval: time.Hour}
	l, err := bloblog.New(context.Background(), c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 100 {
		d := fmt.Sprintf("record %d\nwith a second line", i)
		if err := l.Append(hourBase.Add(time.Duration(i)*time.Second), []byte(d)); err != nil {
			t.Fatal(err)
		}
		want = append(want, d)
	}
	r, err := bloblog.NewReader(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r, hourBase, hourBase.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("%d records readable before any flush (FlushInterval is an hour)", len(got))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := datas(readAll(t, r, hourBase, hourBase.Add(time.Hour))); !slices.Equal(got, want) {
		t.Fatalf("after Close read %d records, want %d", len(got), len(want))
	}
	if err := l.Append(hourBase, []byte("late")); !errors.Is(err, bloblog.ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// Ending the Logger's context flushes too.
func TestContextEndFlushes(t *testing.T) {
	t.Parallel()
	c := containerOf(env, newContainer(t))
	cfg := bloblog.Config{Service: "queue", FlushInterval: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	l, err := bloblog.New(ctx, c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := l.Append(hourBase.Add(time.Duration(i)*time.Minute), []byte(fmt.Sprint("r", i))); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	<-l.Done()
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	r, _ := bloblog.NewReader(c, cfg)
	if got := readAll(t, r, hourBase, hourBase.Add(time.Hour)); len(got) != 10 {
		t.Fatalf("after the context ended read %d records, want 10", len(got))
	}
	if err := l.Append(hourBase, []byte("late")); !errors.Is(err, bloblog.ErrClosed) {
		t.Fatalf("Append after the context ended: %v, want ErrClosed", err)
	}
}

// A record waits at most FlushInterval in the buffer.
func TestAgeFlush(t *testing.T) {
	t.Parallel()
	c := containerOf(env, newContainer(t))
	cfg := bloblog.Config{Service: "queue", FlushInterval: 50 * time.Millisecond}
	l, err := bloblog.New(context.Background(), c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(hourBase, []byte("one")); err != nil {
		t.Fatal(err)
	}
	r, _ := bloblog.NewReader(c, cfg)
	deadline := time.Now().Add(20 * time.Second)
	for len(readAll(t, r, hourBase, hourBase.Add(time.Hour))) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("a buffered record was never flushed by age")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Records go to the folder of their period, and a read of one period lists
// one folder.
func TestPeriods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	name := newContainer(t)
	c := containerOf(env, name)
	cfg := bloblog.Config{Service: "queue"}
	l, err := bloblog.New(ctx, c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Hours 18, 19 and 20 of one day, and 01 of the next, out of order.
	for _, h := range []int{19, 18, 20, 25, 18, 19} {
		at := hourBase.Add(time.Duration(h-18)*time.Hour + 30*time.Minute)
		if err := l.Append(at, []byte(at.Format("15:04"))); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	names, _, _ := blobStats(t, c)
	want := []string{"queue/2031/07/31/1800/000001.log", "queue/2031/07/31/1900/000001.log", "queue/2031/07/31/2000/000001.log", "queue/2031/08/01/0100/000001.log"}
	if !slices.Equal(names, want) {
		t.Fatalf("blobs %v, want %v", names, want)
	}
	meter := cost.NewMeter()
	r, _ := bloblog.NewReader(containerOf(env.With(meter.Policy()), name), cfg)
	if got := datas(readAll(t, r, hourBase.Add(time.Hour), hourBase.Add(2*time.Hour))); !slices.Equal(got, []string{"19:30", "19:30"}) {
		t.Fatalf("hour 19 read %v", got)
	}
	if got := meter.Snapshot(); got.Count(cost.Blob, cost.OpListBlobs) != 1 || got.Count(cost.Blob, cost.OpGetBlob) != 1 {
		t.Fatalf("reading one hour took %v, want one listing and one download", got)
	}
	// Across midnight: two days, two listings.
	meter.Reset()
	if got := datas(readAll(t, r, hourBase.Add(2*time.Hour), hourBase.Add(8*time.Hour))); !slices.Equal(got, []string{"20:30", "01:30"}) {
		t.Fatalf("20:00 to 02:00 read %v", got)
	}
	if n := meter.Snapshot().Count(cost.Blob, cost.OpListBlobs); n != 2 {
		t.Fatalf("reading across midnight listed %d times, want 2", n)
	}
}

// Two Loggers of one service never share a blob, and the reader returns
// the records of both.
func TestTwoLoggers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := containerOf(env, newContainer(t))
	cfg := bloblog.Config{Service: "queue"}
	a, err := bloblog.New(ctx, c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bloblog.New(ctx, c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		at := hourBase.Add(time.Duration(i) * time.Second)
		if err := a.Append(at, []byte(fmt.Sprint("a", i))); err != nil {
			t.Fatal(err)
		}
		if err := b.Append(at, []byte(fmt.Sprint("b", i))); err != nil {
			t.Fatal(err)
		}
		if i%5 == 4 {
			if err := errors.Join(a.Flush(ctx), b.Flush(ctx)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := errors.Join(a.Close(), b.Close()); err != nil {
		t.Fatal(err)
	}
	names, _, _ := blobStats(t, c)
	if len(names) != 2 {
		t.Fatalf("blobs %v, want one per Logger", names)
	}
	r, _ := bloblog.NewReader(c, cfg)
	got := datas(readAll(t, r, hourBase, hourBase.Add(time.Hour)))
	var fromA, fromB []string
	for _, d := range got {
		if strings.HasPrefix(d, "a") {
			fromA = append(fromA, d)
		} else {
			fromB = append(fromB, d)
		}
	}
	// Each blob is one Logger's: the records of one come together, in order.
	if len(got) != 40 || !(slices.Equal(got[:20], fromA) || slices.Equal(got[:20], fromB)) {
		t.Fatalf("read %v", got)
	}
}

// Lost replies to the blob's creation and to an append are recognised: the
// blob is used, the block is not appended twice, and no blob is started
// for nothing.
func TestLostRepliesDeterministic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	name := newContainer(t)
	create, appends := faults.New(faults.Config{}), faults.New(faults.Config{})
	isCreate := func(r *http.Request) bool { return r.Method == http.MethodPut && r.URL.Query().Get("comp") == "" }
	create.LoseNext(3, isCreate) // every try of the first create: azcore gives up
	appends.LoseNext(2, isAppend)
	c := containerOf(env.With(create, appends), name)
	cfg := bloblog.Config{Service: "queue"}
	l, err := bloblog.New(ctx, c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := l.Append(hourBase.Add(time.Duration(i)*time.Second), []byte(fmt.Sprint("r", i))); err != nil {
			t.Fatal(err)
		}
		flushed := l.Flush(ctx)
		if i == 0 && flushed == nil {
			t.Fatal("the first flush succeeded although every reply to the create was lost")
		}
		if i > 0 && flushed != nil {
			t.Fatal(flushed)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if create.Stats().LostReplies != 3 || appends.Stats().LostReplies != 2 {
		t.Fatalf("lost %d creates, %d appends; want 3 and 2", create.Stats().LostReplies, appends.Stats().LostReplies)
	}
	names, blocks, _ := blobStats(t, containerOf(env, name))
	if len(names) != 1 {
		t.Fatalf("blobs %v, want 1: a lost create reply must not start a second blob", names)
	}
	r, _ := bloblog.NewReader(containerOf(env, name), cfg)
	if got := datas(readAll(t, r, hourBase, hourBase.Add(time.Hour))); !slices.Equal(got, []string{"r0", "r1", "r2"}) || blocks[0] < 2 {
		t.Fatalf("read %v from %d blocks, want r0 r1 r2 once each", got, blocks[0])
	}
}

// An append that fails after the blob's metadata was widened leaves the
// records buffered; the next flush writes them once. Every reply to one
// append lost (the block is in the blob, the Logger cannot tell) and then
// every try of the check failing leaves the block unsure: it is sent again
// at the same position, and lands once.
func TestFailedAppendsRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	name := newContainer(t)
	before := faults.New(faults.Config{FailBefore: 1, Match: isAppend})
	c := containerOf(env.With(before), name)
	cfg := bloblog.Config{Service: "queue", FlushInterval: time.Hour}
	l, err := bloblog.New(ctx, c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(hourBase, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(ctx); err == nil {
		t.Fatal("flush succeeded with every append failing")
	}
	r, _ := bloblog.NewReader(containerOf(env, name), cfg)
	if got := readAll(t, r, hourBase, hourBase.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("read %d records of a failed append", len(got))
	}
	if err := l.Append(hourBase.Add(time.Second), []byte("second")); err != nil {
		t.Fatal(err)
	}
	before.SetEnabled(false)
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := datas(readAll(t, r, hourBase, hourBase.Add(time.Hour))); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("read %v, want first, second", got)
	}
}

// Bad configurations and records are refused before any request.
func TestValidation(t *testing.T) {
	t.Parallel()
	meter := cost.NewMeter()
	c := containerOf(env.With(meter.Policy()), "nocontainer")
	for name, cfg := range map[string]bloblog.Config{
		"no service":       {},
		"bad character":    {Service: "a b"},
		"empty segment":    {Service: "a//b"},
		"dot segment":      {Service: "a/../b"},
		"seconds":          {Service: "q", Period: 30 * time.Second},
		"block too large":  {Service: "q", MaxBlockBytes: 4<<20 + 1},
		"too many blocks":  {Service: "q", MaxBlocks: 50_001},
		"blob too large":   {Service: "q", MaxBlobBytes: bloblog.MaxBlobBytes + 1},
		"blob below block": {Service: "q", MaxBlockBytes: 1024, MaxBlobBytes: 1000},
		"small buffer":     {Service: "q", FlushBytes: 1 << 20, MaxBufferBytes: 1 << 10},
	} {
		if _, err := bloblog.New(context.Background(), c, cfg); !errors.Is(err, bloblog.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
		if _, err := bloblog.NewReader(c, cfg); !errors.Is(err, bloblog.ErrInvalid) {
			t.Errorf("reader, %s: %v, want ErrInvalid", name, err)
		}
	}
	l, err := bloblog.New(context.Background(), c, bloblog.Config{Service: "q", MaxBlockBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	var re *bloblog.RecordError
	if err := l.Append(hourBase, make([]byte, 1000)); !errors.As(err, &re) {
		t.Errorf("a record too large for a block: %v, want *RecordError", err)
	}
	if err := l.Append(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), nil); !errors.As(err, &re) {
		t.Errorf("year 10000: %v, want *RecordError", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	r, _ := bloblog.NewReader(c, bloblog.Config{Service: "q"})
	for _, err := range r.Read(context.Background(), hourBase, hourBase) {
		if !errors.Is(err, bloblog.ErrInvalid) {
			t.Errorf("empty range: %v, want ErrInvalid", err)
		}
	}
	if n := meter.Snapshot().Total(); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
}

// When flushes fail and the buffer is full, Append says so instead of
// waiting for ever; nothing already buffered is dropped.
func TestBufferFullWhileFailing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	name := newContainer(t)
	inj := faults.New(faults.Config{FailBefore: 1})
	cfg := bloblog.Config{Service: "q", MaxBlockBytes: 1024, FlushBytes: 1024, MaxBufferBytes: 4096, FlushInterval: time.Hour}
	l, err := bloblog.New(ctx, containerOf(env.With(inj), name), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var full *bloblog.FlushError
	written := 0
	for i := range 1000 {
		err := l.Append(hourBase.Add(time.Duration(i)*time.Millisecond), []byte(fmt.Sprintf("%062d", i)))
		if errors.As(err, &full) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		written++
	}
	if full == nil {
		t.Fatal("Append never reported a full buffer while every flush failed")
	}
	inj.SetEnabled(false)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	r, _ := bloblog.NewReader(containerOf(env, name), cfg)
	if got := readAll(t, r, hourBase, hourBase.Add(time.Hour)); len(got) != written {
		t.Fatalf("read %d records, want the %d buffered", len(got), written)
	}
}

// A Logger keeps the blobs of its newest periods only; a late record of an
// older period finds that period's blob again (by listing it, and its
// metadata naming the Logger) instead of starting another.
func TestLateRecordOfForgottenPeriod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := containerOf(env, newContainer(t))
	cfg := bloblog.Config{Service: "queue"}
	l, err := bloblog.New(ctx, c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for h := range 8 {
		if err := l.Append(hourBase.Add(time.Duration(h)*time.Hour), []byte(fmt.Sprint("hour ", h))); err != nil {
			t.Fatal(err)
		}
		if err := l.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Append(hourBase.Add(45*time.Minute), []byte("late")); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	names, blocks, _ := blobStats(t, c)
	if len(names) != 8 || names[0] != "queue/2031/07/31/1800/000001.log" || blocks[0] != 2 {
		t.Fatalf("blobs %v with %v blocks, want one per hour, the first with 2 blocks", names, blocks)
	}
	r, _ := bloblog.NewReader(c, cfg)
	got := readAll(t, r, hourBase, hourBase.Add(time.Hour))
	if len(got) != 2 || string(got[1].Data) != "late" || !got[1].Time.Equal(hourBase.Add(45*time.Minute)) {
		t.Fatalf("hour 18 read %v", datas(got))
	}
	blobs, err := r.Blobs(ctx, hourBase, hourBase.Add(time.Hour))
	if err != nil || len(blobs) != 1 || !blobs[0].Max.Equal(hourBase.Add(45*time.Minute)) {
		t.Fatalf("blob metadata %+v (%v), want its range widened to 18:45", blobs, err)
	}
}

// AppendContext waits through failing flushes instead of refusing: records
// appended while every flush fails are held back, and all land exactly once
// when the storage comes back; with a deadline, a record that finds no room
// in time is refused (matching the deadline) and not buffered.
func TestAppendContextWaitsThroughFailingFlushes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	name := newContainer(t)
	inj := faults.New(faults.Config{FailBefore: 1})
	cfg := bloblog.Config{Service: "w", MaxBlockBytes: 1024, FlushBytes: 1024, MaxBufferBytes: 4096, FlushInterval: 50 * time.Millisecond}
	l, err := bloblog.New(ctx, containerOf(env.With(inj), name), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Fill the buffer while every flush fails, until Append refuses.
	written := 0
	for i := 0; ; i++ {
		err := l.Append(hourBase.Add(time.Duration(i)*time.Millisecond), []byte(fmt.Sprintf("%062d", i)))
		if err != nil {
			break
		}
		written++
	}
	// With a short deadline: refused, matching the deadline, not buffered.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	err = l.AppendContext(short, hourBase.Add(time.Hour-time.Millisecond), []byte("never"))
	cancel()
	var fe *bloblog.FlushError
	if !errors.As(err, &fe) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, faults.ErrInjected) {
		t.Fatalf("AppendContext past its deadline: %v, want a FlushError matching the deadline and the flush's error", err)
	}
	// Without a deadline: 200 more records wait, then land once the
	// storage is back.
	done := make(chan error, 1)
	go func() {
		for i := range 200 {
			if err := l.AppendContext(ctx, hourBase.Add(time.Duration(written+i)*time.Millisecond), []byte(fmt.Sprintf("%062d", written+i))); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		t.Fatalf("AppendContext returned (%v) while every flush fails and the buffer is full", err)
	case <-time.After(300 * time.Millisecond):
	}
	inj.SetEnabled(false)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	r, _ := bloblog.NewReader(containerOf(env, name), cfg)
	got := readAll(t, r, hourBase, hourBase.Add(time.Hour))
	if len(got) != written+200 {
		t.Fatalf("read %d records, want %d: none lost, none twice", len(got), written+200)
	}
	for i, rec := range got {
		if string(rec.Data) != fmt.Sprintf("%062d", i) {
			t.Fatalf("record %d is %q", i, rec.Data)
		}
	}
}
