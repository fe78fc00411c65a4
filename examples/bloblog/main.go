// Command bloblog writes a storage service's request log to append blobs
// named by service and hour, with each blob's time range in its metadata,
// and reads a time range back: the design guide's log data anti-pattern
// (§6.13) and its fix, package patterns/bloblog.
//
// It runs on the storage account the environment names, creates the blob
// container storage-logs if it does not exist, and leaves what it wrote
// there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/bloblog
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/patterns/bloblog"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Logs string // blob container
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Logs: "storage-logs"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bloblog example:", err)
		os.Exit(1)
	}
}

// run tells the story on acct, in the resources names gives, to out.
func run(ctx context.Context, acct *account.Account, names Names, out io.Writer) error {
	// The meter counts what each step costs; a service gives one to
	// account in main, or none.
	meter := cost.NewMeter()
	acct, err := acct.WithOptions(func(o *account.Options) { o.Meter = meter })
	if err != nil {
		return err
	}
	c, err := acct.Container(names.Logs)
	if err != nil {
		return err
	}
	// Small blocks and blobs, so that three hours of the story make several
	// of each (the defaults are the service's limits: 4 MiB blocks, 50,000
	// blocks, 195 GiB); a buffer that holds the story's 1 MB, written by
	// Close.
	cfg := bloblog.Config{Service: "queue", MaxBlockBytes: 128 << 10, MaxBlocks: 2, FlushBytes: 4 << 20, MaxBufferBytes: 4 << 20, FlushInterval: time.Hour}
	logs, err := bloblog.New(ctx, c, cfg)
	if err != nil {
		return err
	}
	if err := logs.Provision(ctx); err != nil { // the container, unless it exists
		return errors.Join(err, logs.Close())
	}
	meter.Reset()
	fmt.Fprintln(out, "== bloblog: a storage log in append blobs by service and hour (design guide §6.13)")
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
