// Command tablekit does the jobs around the code for Azure Table storage —
// the table copy, backup and restore that AzCopy v10 dropped for tables, and
// the queries, counts, bulk deletes and queue repairs an operator needs —
// against any storage account or Azurite:
//
//	go install github.com/tablekit/tablekit/cmd/tablekit@latest
//
//	tablekit copy    --table Orders --to-connection-string "$DST" --mode insert --checkpoint orders.ck
//	tablekit export  --table Orders --out orders.jsonl.gz          (or --out blob:backups/orders.jsonl.gz)
//	tablekit import  --table Orders --in orders.jsonl.gz
//	tablekit query   --table Orders --filter "PartitionKey eq 'Sales' and Total ge 100.0" --select Total --top 20
//	tablekit stats   --table Orders
//	tablekit delete  --table Logs --filter "Timestamp lt datetime'2024-01-01T00:00:00Z'" --dry-run
//	tablekit queue   peek|replay|purge --queue orders --container orders-blobs
//	tablekit tables  list|create|delete
//	tablekit plan    --table Orders --shards 3 --out orders.plan
//
// Every command has --help with an example.
//
// # Credentials
//
// --connection-string (or the environment variable TABLEKIT_CONNECTION_STRING),
// --account-url with azidentity's default credential (az login, environment,
// workload or managed identity), or --sas-url: an account SAS URL, or a table
// SAS URL naming one table. copy takes the destination's as --to-…, export
// and import a blob's in another account as --blob-… or as a SAS in the blob
// URL. Clients are built by package account, so every request carries
// tablekit's lost-reply settling, one throttle.Limiter (throttle.NewLimiter
// with the service's targets; --max-rps lowers the account's) shared by
// every client of the run — a copy's source and destination both — and one
// cost.Meter, whose count each summary reports. No key or signature is ever
// printed: the secrets given are replaced by REDACTED in every message,
// progress line and summary, in their URL-escaped forms too, and so is any
// AccountKey=, SharedAccessSignature=, sig= or Authorization text
// (TestOnOneTable/NoSecretInAnyOutput scans the output of failing and
// succeeding runs for the account key and the signatures).
//
// # Output and exit codes
//
// On a terminal, progress is one line on stderr rewritten in place (\r)
// with the count, the rate and, when the total is known (an import's input
// size), the ETA; otherwise a plain line every --progress-interval with the
// resume token; with --json, progress, item and error events are JSON lines
// on stderr and the summary one JSON line on stdout (stderr when stdout
// carries data: query, export --out -). An error is one line naming what
// failed (TestUsageErrorsAreOneLine). Exit codes:
//
//	0  done
//	1  failed, or interrupted: the message says how to resume
//	2  usage: bad flags, arguments, filter, token or credentials, refused before any request
//	3  done, but some items failed, each reported with its keys (and line): entities the
//	   service refuses, lines that do not decode, insert conflicts, exported entities an
//	   import will refuse
//
// # Interrupts and resuming
//
// The first SIGINT or SIGTERM stops taking new work; requests in flight
// get --grace (15 s) to finish, so what they did is counted; a second one
// exits at once. copy, export and import then print a resume token
// ("--resume tk1.…": the job's position, compressed and checksummed, naming
// the tables, filter and options it belongs to; a token of another job is
// refused with exit 2) and leave nothing half-written: a copy writes whole
// transactions and its token resumes after pages whose every entity is
// settled; an export writes FILE.partial, cut back to the last whole gzip
// segment, renamed to FILE only when complete; a split export's manifest is
// written last; an import's token counts only settled segments. With
// --checkpoint FILE the token is also saved (atomically, after the output is
// synced) after every page or segment, so a run killed outright resumes with
// --resume @FILE. TestOnOneTable/CopyInterruptedAndResumed stops the built
// binary with SIGINT midway, checks the destination holds only
// whole, correct entities, resumes it and stops it with SIGTERM, resumes
// it and kills it with SIGKILL, resumes from
// the checkpoint file, and reads the destination back raw with aztables:
// equal to the source, every EDM type, keys with quotes, unicode, spaces, %
// and the empty PartitionKey. An export stopped midway shows the
// .partial file is a prefix of whole segments and the resumed export is
// byte-identical to one not stopped (TestOnOneTable/ExportInterruptedAndResumed);
// TestOnOneTable/ImportReportsBadLinesInterruptedAndResumed resumes an import
// stopped by SIGINT. delete and queue purge are idempotent:
// run them again.
//
// # copy
//
// Reads PartitionKey ranges in parallel (--parallel, 4 by default: the
// range is cut into twice as many pieces by package keyspace's probes,
// below) and writes each page with entity's BulkWrite, partitions in
// parallel, in transactions of up to 100. --mode insert-or-replace
// (default), insert-or-merge, insert-or-skip (a stored entity is counted
// as skipped), or insert: a stored entity with the same properties (an
// interrupted run's write) counts as already there, one with other
// properties is a conflict, reported and left alone (exit 3)
// (TestCopyModes). --filter and --from-pk/--to-pk select what is copied
// (TestOnOneTable/CopyFilterAndRange). An entity the destination refuses fails alone;
// a failure another run may not meet (transport, throttling beyond the
// retries, an unknown outcome, authorization) stops the copy with its
// token.
//
// # Filters
//
// --filter takes the Table service's OData syntax (eq, ne, gt, ge, lt, le,
// and, or, not, parentheses; 'text' with a quote inside written twice, 42,
// 42L, 2.5, true, datetime'…', guid'…', X'…'):
//
//	--filter "PartitionKey eq 'O''Brien' and (Age ge 30 or Born lt datetime'1990-01-01T00:00:00Z')"
//
// It is read into an entity/filter
// expression and built by package filter, so what reaches the service is a
// filter whose every literal is typed and escaped and whose every property
// name is checked — never the text typed (FuzzParse: what Parse reads back
// from a built filter builds the same). Bad text is exit 2 with the
// character where reading failed.
//
// # Formats
//
// export writes package backup's format: gzip JSON Lines, a header line
// {"tablekit.backup":1} then one entity per line as the service's JSON
// with its type annotations, properties in byte order, one gzip member per
// --segment entities. The same table exported twice gives the same bytes,
// so export → import → export is byte-identical
// (TestOnOneTable/ExportImportExportIsByteIdentical: to a file, to parts,
// to stdout and from stdin, and through a blob of another account). --split-size writes parts
// NAME.part00001.jsonl.gz, … cut at segment ends, and the manifest --out
// names, written last:
//
//	{"tablekit.manifest": 1, "table": "Orders", "format": "jsonl.gz", "scope": "…",
//	 "entities": 2000, "bytes": 123456,
//	 "parts": [{"name": "orders.part00001.jsonl.gz", "bytes": 61728, "entities": 1000, "sha256": "…"}, …],
//	 "created": "…"}
//
// The parts joined are the export; import checks every part's size and
// sha256 before its first write. import tells the format by --in's name:
// .jsonl.gz and .jsonl are JSON Lines, gzip (as export writes under any
// name) or not, .json a manifest, .csv and .csv.gz the CSV below; any other
// name is refused unless --format says it; from stdin, gzip or a backup's
// header line is JSON Lines, anything else CSV
// (TestImportFormatFromTheName). A table import or copy writes to is
// created when missing, and the command says so on stderr ("created table
// NAME", TestImportSaysItCreatedTheTable). A row's write token (TkWrite,
// stored by entity's WithWriteTokens and the index patterns) is copied and
// imported as it is, in the row's own write (entity.BulkOptions.KeepWriteTokens),
// so a second copy or import in insert mode finds every such row already
// there (TestCopyAndImportKeepWriteTokens). --format csv is Azure Storage Explorer's
// typed CSV: PartitionKey, RowKey, Timestamp, then "Name" and "Name@type"
// per property (TestOnOneTable/CSVIsStorageExplorersFormat, which also imports
// Storage Explorer's own rows). A CSV export reads the table twice and is
// not resumable. query prints JSON Lines (the lines of an export), CSV or an
// aligned table.
//
// # Sharding across machines: PartitionKey ranges, and why
//
// --shard k/n makes n processes (on one machine or many) copy or export one
// table together, each with its own resume token; shard k takes the k-th of
// n PartitionKey ranges, so the union is exactly the table and no entity is
// read twice (TestOnOneTable/ShardedRunsEqualOneRun: three processes copy into one
// table what one run copies, and three exports imported give the table).
//
// Ranges rather than a hash of the PartitionKey: the service can filter on
// a key range, not on a hash, so hash sharding makes every process read the
// whole table and drop what is not its own — n times the reads, and no
// process faster than one full scan, whatever n is. Ranges read each entity
// once and scale with n, but need boundaries that cut the table into
// similar shares, which the service does not tell without a scan. Package
// cmd/tablekit/internal/keyspace finds them cheaply: a range of up to
// 16,000 entities is listed, keys only, and cut at the quantiles of its
// entities; a larger one is probed with at most a few hundred one-entity
// queries (the prefix all keys share, the highest next character, keys at
// evenly spaced next characters, again where most keys turned up). Every
// boundary is a PartitionKey the table holds, so no partition (and no
// transaction) is cut in two. Large ranges are balanced by the spread of
// their partitions over the key space (ids, hashes, padded numbers and
// dates split evenly), not by entity counts; a table cannot be cut finer
// than its partitions, and with fewer partitions than shards the extra
// shards have nothing to do. Listing and probing are deterministic, so
// every process looking at an unchanging table gets the same plan, and
// each prints its fingerprint ("plan 3fa2…") to compare; for a
// table being written while the processes start, make the plan once with
// tablekit plan and pass it to all with --shard-plan FILE.
//
// # Throughput
//
// BenchmarkCopyVsExportImport runs, per iteration on the same 2,000
// entities (100,000 with TABLEKIT_FULL=1) and the same two Azurites, an
// export to a file, an import of it into the second account and a copy to
// it, and reports the three rates and copy/slower, copy's rate over the
// slower of export and import (the goal: 0.9 or more). Measured on the
// shared 2-core machine, where other test suites ran beside it:
//
//	entities  load average  copy/s  export/s  import/s  copy/slower
//	2,000     5 to 7         4,071     9,246     5,089  0.80
//	2,000     5 to 7         4,898     9,450     5,391  0.91
//	10,000    5              4,646    10,273     4,073  1.14
//	100,000   4 to 5         3,672     5,422     2,523  1.46
//	2,000     15 to 19       1,739     4,625     2,604  0.67
//	10,000    16 to 17       1,499     3,250     2,417  0.62
//
// A copy reads and writes at once, the two Azurites' work side by side,
// where an export and an import each run one of them: on two idle cores
// that costs a copy nothing, and its parallel writers make a large copy
// faster than an import, which writes one segment at a time; when other
// processes take the cores, a copy's reads and writes compete for what is
// left and the ratio falls below the goal. A small copy also pays its
// plan (listing the keys of up to 16,000 entities) against a transfer of
// a second.
//
// # Left out
//
// CSV exports are not resumable and read the table twice (package backup's
// ExportCSV); --split-size writes files, not blobs; a peek shows at most 32
// messages per queue (the service's limit for a peek); delete and purge
// keep no token (they are idempotent).
package main
