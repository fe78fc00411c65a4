// Package tour is the bloblog step of tablekit's tour: the design guide's
// storage log (§6.13, the log-data anti-pattern) — log records written in
// blocks to append blobs named by service and hour, with their time range
// in the blobs' metadata, and read back by time range.
package tour

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/patterns/bloblog"
)

// Tour logs three hours of a queue service's requests to blobs, lists the
// blobs, reads a range that spans two of them, and deletes its container,
// printing what happens to out.
func Tour(ctx context.Context, env *demo.Env, out io.Writer) (err error) {
	meter := cost.NewMeter()
	c, drop, err := env.With(meter.Policy()).ScratchContainer(ctx, "bloblogtour")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, drop()) }()
	fmt.Fprintln(out, "== bloblog: a storage log in append blobs by service and hour (design guide §6.13)")

	// Small blocks and blobs, so that three hours of the tour make several
	// of each (the defaults are the service's limits: 4 MiB blocks, 50,000
	// blocks, 195 GiB); a buffer that holds the tour's 1 MB, written by
	// Close.
	cfg := bloblog.Config{Service: "queue", MaxBlockBytes: 128 << 10, MaxBlocks: 2, FlushBytes: 4 << 20, MaxBufferBytes: 4 << 20, FlushInterval: time.Hour}
	logs, err := bloblog.New(ctx, c, cfg)
	if err != nil {
		return err
	}
	start := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	const records = 9000
	for i := range records {
		at := start.Add(time.Duration(i) * 1200 * time.Millisecond) // 3 hours
		line := fmt.Sprintf("%s GetMessages queue=orders status=200 latency=%dms message=%07d", at.Format("15:04:05.0"), 3+i%17, i)
		if err := logs.Append(at, []byte(line)); err != nil {
			return errors.Join(err, logs.Close())
		}
	}
	if err := logs.Close(); err != nil {
		return err
	}
	written := meter.Snapshot()
	fmt.Fprintf(out, "Logged %d records (3 hours) in %d storage transactions: %d blob creations, %d appends of up to 128 KiB, %d metadata updates, %d listings.\n",
		records, written.Total(), written.Count(cost.Blob, cost.OpPutBlob), written.Count(cost.Blob, cost.OpAppendBlock), written.Count(cost.Blob, cost.OpSetBlobMetadata), written.Count(cost.Blob, cost.OpListBlobs))
	fmt.Fprintf(out, "As table entities, %d records are %d transactions in 100-entity batches, all in the hour's one partition.\n", records, records/100)

	r, err := bloblog.NewReader(c, cfg)
	if err != nil {
		return err
	}
	all, err := r.Blobs(ctx, start, start.Add(3*time.Hour))
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "The blobs, each with its records' time range in its metadata:")
	for _, b := range all {
		fmt.Fprintf(out, "   %s  %6d bytes  %s to %s\n", b.Name, b.Size, b.Min.Format("15:04:05.0"), b.Max.Format("15:04:05.0"))
	}

	from, to := start.Add(80*time.Minute), start.Add(95*time.Minute)
	some, err := r.Blobs(ctx, from, to)
	if err != nil {
		return err
	}
	meter.Reset()
	n := 0
	var first, last string
	for rec, err := range r.Read(ctx, from, to) {
		if err != nil {
			return err
		}
		if n == 0 {
			first = string(rec.Data)
		}
		last = string(rec.Data)
		n++
	}
	read := meter.Snapshot()
	hour := 0
	for _, b := range all {
		if b.Min.Hour() == 19 {
			hour++
		}
	}
	fmt.Fprintf(out, "Reading %s to %s: %d records. Of hour 19's %d blobs, the metadata ruled out %d; listings: %d, downloads: %d.\n",
		from.Format("15:04"), to.Format("15:04"), n, hour, hour-len(some), read.Count(cost.Blob, cost.OpListBlobs), read.Count(cost.Blob, cost.OpGetBlob))
	fmt.Fprintf(out, "   first: %s\n   last:  %s\n", first, last)
	return nil
}
