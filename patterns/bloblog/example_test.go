package bloblog_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/tablekit/tablekit/patterns/bloblog"
)

// The guide's storage log: records of the queue service in a blob per
// hour, with their time range in the blob's metadata; a read of the second
// half of the hour.
func Example() {
	ctx := context.Background()
	c, drop, err := env.ScratchContainer(ctx, "logs")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer drop()
	cfg := bloblog.Config{Service: "queue"}
	logs, err := bloblog.New(ctx, c, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	at := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	for i, msg := range []string{"dequeued 1", "dequeued 2", "poison message 3"} {
		if err := logs.Append(at.Add(time.Duration(i)*20*time.Minute), []byte(msg)); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := logs.Close(); err != nil { // flushes: one blob, one block
		fmt.Println(err)
		return
	}

	r, err := bloblog.NewReader(c, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	blobs, _ := r.Blobs(ctx, at, at.Add(time.Hour))
	for _, b := range blobs {
		fmt.Println(b.Name, "holds", b.Min.Format("15:04"), "to", b.Max.Format("15:04"))
	}
	for rec, err := range r.Read(ctx, at.Add(30*time.Minute), at.Add(time.Hour)) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(rec.Time.Format("15:04"), string(rec.Data))
	}
	// Output:
	// queue/2014/07/31/1800/000001.log holds 18:00 to 18:40
	// 18:40 poison message 3
}

// A Logger is an io.Writer: the writer of a log/slog handler, one record
// per log line.
func ExampleLogger_Write() {
	ctx := context.Background()
	c, drop, err := env.ScratchContainer(ctx, "logs")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer drop()
	cfg := bloblog.Config{Service: "worker"}
	logs, err := bloblog.New(ctx, c, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{} // the record carries its time
		}
		return a
	}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{ReplaceAttr: noTime}))
	log.Info("message dequeued", "id", 7)
	log.Warn("message poisoned", "id", 8, "dequeues", 5)
	if err := logs.Close(); err != nil {
		fmt.Println(err)
		return
	}

	r, _ := bloblog.NewReader(c, cfg)
	now := time.Now()
	for rec, err := range r.Read(ctx, now.Add(-time.Hour), now.Add(time.Hour)) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Print(string(rec.Data))
	}
	// Output:
	// level=INFO msg="message dequeued" id=7
	// level=WARN msg="message poisoned" id=8 dequeues=5
}
