// Package bloblog implements the [log data anti-pattern] of the Azure Table
// design guide (§6.13): log records belong in blobs, not in tables. A table
// entity per record costs a transaction per record (or per 100 in a batch),
// makes one hot partition of the current hour, and is awkward to read
// back in bulk; the guide's answer is to write records in batches to blobs
// named by service and hour (queue/2014/07/31/1800/000001.log), with the
// time range of each blob in its metadata, buffering appends to save
// writes.
//
// A [Logger] buffers records ([Logger.Append], or [Logger.Write] as the
// io.Writer of a log/slog handler) and appends them to append blobs, one
// block per flush of up to 4 MiB: a thousand records cost a fraction of a
// transaction instead of a thousand. It flushes when FlushBytes are buffered
// or the oldest record has waited FlushInterval, and on Close and when its
// context ends. It rolls to the period's next blob before a blob would cross
// the append-blob limits (50,000 blocks, 4 MiB per block, about 195 GiB),
// or smaller limits set in [Config]. A [Reader] lists the blobs of a time
// range by name prefix (one listing per day of the range), skips those
// whose metadata range does not meet it, and streams the records.
//
// Records are framed as "<time> <length> <data>\n" (see [Record]): any
// bytes fit, and a text log stays readable in a viewer.
//
// # Guarantee
//
// Every record that Append accepted is written to a blob exactly once,
// once the Logger has flushed it — by age, by size, by Flush, by Close or
// at the end of its context — including when replies are lost and azcore
// retries an append that was applied. A blob's records are whole (an append
// block is atomic and holds whole records), and the records of one
// goroutine's Appends are in its order. A blob's metadata range always
// covers its records, so a reader never skips a blob that holds a record
// of its range. A crash loses at most the records not yet flushed: at most
// FlushInterval's worth, or MaxBufferBytes; a fresh Logger after a crash at
// any request, before it was sent or after the service executed it, finds
// each period's blobs as the crash left them — whole records, each once, a
// prefix of each period's records in order — and writes its own records
// once (TestLoggerSurvivesACrashAtEveryRequest). Records of one Logger are
// never interleaved with another's: each Logger appends only to blobs it
// created. A blob changed by someone else while a Logger writes to it
// does not stop the Logger nor make it write a record twice, also when it
// happens between an applied append and azcore's resend
// (TestLoggerBesideAnotherWriter): a blob deleted, or replaced by one the
// Logger did not create, is left for a new blob, to which the block goes;
// a blob another writer appended to is left too, and the block is written
// again elsewhere unless the bytes at its position are the block's own.
// The metadata is set and each block appended on condition of the blob's
// ETag as the Logger last wrote or read it, so a Logger never writes its
// range and id over a blob that replaced its own under the same name,
// nor appends to it when its length happens to match: it leaves that
// blob, whose records a reader still finds (TestBesideAReplacedBlob).
// Records in a blob someone else deleted or replaced are gone with it. A
// record that cannot be written (a *RecordError) is refused alone, before
// it is buffered (TestOneBadRecordAmongMany).
//
// # Steps
//
// A flush, for each period with buffered records, block by block:
//  1. When the period has no blob of this Logger yet, or the block would
//     cross a limit: list the period's folder for its last sequence number
//     (once per period), and create the next blob, if it does not exist,
//     with the block's time range and the Logger's id in its metadata.
//  2. When the block's records fall outside the blob's recorded range:
//     widen the range in the metadata, on condition of the blob's ETag.
//  3. Append the block at the position the Logger expects (the append
//     position condition) on condition of the blob's ETag, with the
//     blob's size limit.
//
// # Failure and recovery
//
// A crash between 2 and 3 leaves a blob whose range is wider than its
// records: readers read it and find nothing more. A lost reply to 2 makes
// azcore's retry fail on the ETag: the Logger leaves the blob, whose
// range is then only wider than its records, for a new one. A lost reply
// to 3 makes azcore's retry fail on its conditions (ETag, position); the
// blob's length then shows the block was appended, and it is not
// appended again. When even
// that check fails, the block is kept and sent again at the same position
// before anything else of its period, which appends it exactly once. A
// lost reply to 1 makes the retry find the blob, and its metadata says
// whose it is. A failed flush keeps the records at the front of the
// buffer, tried again after a pause; while flushes fail and the buffer is
// full, Append returns a *FlushError instead of waiting, and
// [Logger.AppendContext] waits for the retries to make room until its
// context ends (TestAppendContextWaitsThroughFailingFlushes). Close reports
// the records it could not write as a *FlushError.
//
// # Wire format
//
// What another language needs to read these logs, or write blobs that a
// Reader reads. A log is the blobs of one container named
// <Service>/YYYY/MM/DD/HHMM/NNNNNN.log: the start of the record's period
// (Config.Period, aligned in UTC) and a six-digit sequence number within
// the period, from 000001; each blob is an append blob. Its metadata (keys
// in lower case; read them without regard to case, as HTTP capitalises
// them):
//   - bloblogformat: the record format's version, FormatVersion ("1");
//   - bloblogwriter: the id (a random UUID) of the Logger that created the
//     blob, the only one that appends to it;
//   - mintime, maxtime: the earliest and latest time of the blob's
//     records, in the record format's time (both or neither). They always
//     cover the records; they may be wider (a crash after widening them).
//
// The blob holds whole records, each "<time> <length> <data>\n": <time>
// the record's time in UTC with nine fractional digits, always 30 bytes;
// <length> the length of <data> in bytes, in decimal without leading
// zeros; <data> the record's bytes as given, which may hold line feeds —
// the length, not the line feed, ends them. Records are in append order,
// which is each goroutine's Append order, not time order.
//
// For example, two records appended by a Logger of Service "queue" (the
// default hour-long Period), at 18:00:00.123456789 and 18:05 on 31 July
// 2014, the second of two lines; <id> is the Logger's id, and each line
// feed is shown as \n:
//
//	blob queue/2014/07/31/1800/000001.log (AppendBlob)
//	metadata bloblogformat=1 bloblogwriter=<id> maxtime=2014-07-31T18:05:00.000000000Z mintime=2014-07-31T18:00:00.123456789Z
//	2014-07-31T18:00:00.123456789Z 15 GET /orders 200\n
//	2014-07-31T18:05:00.000000000Z 9 two\n
//	lines\n
//
// # Azurite and Cosmos DB
//
// Azurite accepts append blocks larger than 4 MiB; the service does not,
// and the Logger never sends one. Azurite returns listed metadata keys in
// lower case and Get Blob Properties capitalises them; the package reads
// them without regard to case. The Cosmos DB Table API has no blobs: use a
// storage account for logs. The suite passes with the Cosmos DB profile of
// package integration/cosmos on its table clients
// (TABLEKIT_PROFILE=cosmos).
//
// # Usage
//
//	logs, err := bloblog.New(ctx, containerClient, bloblog.Config{Service: "queue"})
//	handler := slog.NewJSONHandler(logs, nil) // one record per log line
//	slog.New(handler).Info("message dequeued", "id", id)
//	defer logs.Close() // flushes the buffer
//
//	r, err := bloblog.NewReader(containerClient, bloblog.Config{Service: "queue"})
//	for rec, err := range r.Read(ctx, from, to) {
//		fmt.Printf("%s %s", rec.Time.Format(time.RFC3339), rec.Data)
//	}
//
// [log data anti-pattern]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#log-data-anti-pattern
package bloblog
