package resolver

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
)

// MigrateOptions tunes Migrate. The zero value migrates the whole table.
type MigrateOptions struct {
	// Filter narrows the rows read (a partition, a range); empty means all.
	Filter filter.Expr
	// PageSize is the rows read per request, 1 to 1000; 0 means 1000.
	PageSize int
	// Concurrency is the most partitions of a page written at once; 0
	// means 4.
	Concurrency int
	// Attempts bounds how often one row is read again and its upgrade
	// written again after a concurrent change; 0 means 10.
	Attempts int
	// Resume is a MigrateCheckpoint's Token: the scan goes on after the
	// pages already migrated. "" starts at the beginning. A token that is
	// not a checkpoint of a migration of this table with this Filter
	// (another table's, a plain query's, one changed by hand) is an error
	// matching entity.ErrInvalidToken and entity.ErrInvalid, before any
	// request (TestMigrateRefusesAForeignResumeToken).
	Resume string
	// Checkpoint, if set, is called after each page is migrated; an error
	// from it ends the migration.
	Checkpoint func(MigrateCheckpoint) error
	// Progress, if set, is called with the report so far after each page.
	Progress func(MigrateReport)
}

// MigrateCheckpoint is a point a migration can resume from.
type MigrateCheckpoint struct {
	Token  string // MigrateOptions.Resume of the next run; "" once the scan is complete
	Report MigrateReport
}

// MigrateReport counts what a migration did with the rows it read:
// Read = Upgraded + Current + Unknown + Gone + len(Failed), Raced aside.
// A migration that stops with an error (not a *MigrateError) reports the
// pages it finished, the ones its last checkpoint covers, and nothing of
// the page it stopped in: the run resumed from that checkpoint reads that
// page again and counts its rows — a row this run upgraded before it
// stopped there as Current. So the invariant holds for every report, and
// the reports of a stopped run and of its resumption, added, count each
// row once (TestMigrateReportOfAStoppedRunAddsUp).
type MigrateReport struct {
	Read     int64 // rows read
	Upgraded int64 // old-version rows this run replaced by their upgrade
	Current  int64 // rows already of a current type (when read, or when read again after a concurrent change)
	Unknown  int64 // rows of a type the schema does not know (a newer version, another kind, none), Strict or not: left as they are (TestMigrateLeavesUnknownAndNewerRowsAlone)
	Gone     int64 // rows deleted between the read and the write
	Raced    int64 // rows whose write met a change (another writer's, or its own after a lost reply) and were read again
	// Failed are rows left as they were, with why: an upgrade function's
	// error, an undecodable row, an upgrade that cannot be stored, attempts
	// spent on a row that kept changing. A failure that is not the row's
	// (the service unavailable) is Migrate's error instead.
	Failed  []MigrateFailure
	Elapsed time.Duration
}

// MigrateFailure is one row a migration could not upgrade.
type MigrateFailure struct {
	PartitionKey, RowKey string
	Err                  error
}

func (f MigrateFailure) Error() string {
	return fmt.Sprintf("resolver: migrate %s: %v", argerr.EntityKeys(f.PartitionKey, f.RowKey), f.Err)
}

func (f MigrateFailure) Unwrap() error { return f.Err }

// MigrateError reports a migration that finished with rows it could not
// upgrade; the report names them.
type MigrateError struct {
	Failed int
	First  MigrateFailure
}

func (e *MigrateError) Error() string {
	if e == nil {
		return "resolver: migrate: <nil>"
	}
	return fmt.Sprintf("resolver: migrate: %d rows not upgraded; first: %s", e.Failed, strings.TrimPrefix(e.First.Error(), "resolver: "))
}

func (e *MigrateError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.First
}

func (o MigrateOptions) withDefaults() (MigrateOptions, error) {
	switch {
	case o.PageSize < 0 || o.PageSize > entity.MaxPageSize:
		return o, fmt.Errorf("resolver: migrate: PageSize %d: want 0 to 1000: %w", o.PageSize, entity.ErrInvalid)
	case o.Concurrency < 0:
		return o, fmt.Errorf("resolver: migrate: Concurrency %d is negative: %w", o.Concurrency, entity.ErrInvalid)
	case o.Attempts < 0:
		return o, fmt.Errorf("resolver: migrate: Attempts %d is negative: %w", o.Attempts, entity.ErrInvalid)
	}
	if o.Concurrency == 0 {
		o.Concurrency = 4
	}
	if o.Attempts == 0 {
		o.Attempts = 10
	}
	return o, nil
}

// Migrate reads every row (of opts.Filter) and replaces each row of an old
// version by its upgrade, on condition of the ETag it was read with: the
// schema migration that Config.WriteBackUpgrades does one read at a time,
// for a whole table.
//
// Rows of a partition are written together, up to 100 in one entity group
// transaction, fewer when their upgrades together exceed a transaction's
// 4 MiB, or the service refuses the size (Cosmos DB's 2 MiB)
// (TestMigrateLargeUpgradesStillGoInTransactions). A row changed by
// another writer between the read and the write fails its condition: it
// is read again and, if it is still of an old version, upgraded from what
// is stored now and written again — a concurrent change is never
// overwritten (TestMigrateBesideConcurrentWriters, and with the reply of
// each request lost and another writer's insert, replace, merge or delete
// run before azcore's resend: TestMigrateBesideAnotherWriter, and for the
// single-row write of a row that raced:
// TestMigrateLostReplyOnASingleRowWriteBesideAWriter). A row deleted in
// between is counted Gone and not written back
// (TestMigrateRowDeletedOrChangedBetweenReadAndWrite).
// A row that is current when read again counts as Current — or as Upgraded
// when it holds exactly the upgrade this run wrote (its write landed and
// the answer was lost); one of a type the schema does not know counts as
// Unknown (TestMigrateCountsARowAsWhatItBecame). Every row read is counted
// once: Read = Upgraded + Current + Unknown + Gone + len(Failed), Raced
// aside, also in the report of a run that stopped, which counts only the
// pages its last checkpoint covers (see MigrateReport;
// TestMigrateReportOfAStoppedRunAddsUp). Two migrations of one table at once both succeed and leave every
// row upgraded once, but a row they raced for may be counted Upgraded by
// both, since each finds the very upgrade it would write stored
// (TestTwoMigrationsAtOnce). A row written in an old version by another
// writer after Migrate wrote its upgrade stays old until the next run.
//
// One bad row fails alone, named in MigrateReport.Failed with its keys and
// left as it is, while the rest of its page and transaction are upgraded:
// a row that does not decode, an upgrade (or stamp) function that returns
// an error or panics (TestMigrateOneBadRowAmongMany, and over pages and
// transactions, again on a second run: TestMigrateOneBadRowOverPages),
// an upgrade that cannot be stored — too large once encoded, not UTF-8, a
// DateTime before 1601 (TestMigrateInvalidUpgradeFailsAlone) — or that a
// ByFunc stamp keys elsewhere than the row
// (TestMigrateUpgradeThatMovesTheKeyFailsItsRow), a row that another
// writer kept changing through all MigrateOptions.Attempts
// (TestMigrateRowThatKeepsChangingFailsAfterItsAttempts).
//
// A migration is resumable — after each page Checkpoint gets a token that
// MigrateOptions.Resume takes; a run killed at any request and resumed by a
// fresh Table from its last checkpoint upgrades every row
// (TestMigrateSurvivesACrashAtEveryRequest; with partitions written at
// once: TestMigrateKilledMidPageAcrossPartitionsResumes) — and idempotent: run again, it
// upgrades nothing and counts every row Current. A read or write that fails
// for a reason that is not the row's (the service's answer once azcore's
// retries are spent, a transport error, the context's end) is not
// reported as a failed row: Migrate stops with an error naming the row,
// and gives no checkpoint past its page, so a run resumed from the last
// checkpoint does that page again and skips no row
// (TestMigrateResumesAfterAnOutageWithoutSkippingRows). So a service that
// keeps answering 503 stops a migration after one row's tries, not
// Attempts × azcore's retries for every row of the table
// (TestMigrateUnderPermanentServerBusyStops). So a *MigrateError says the
// scan is complete and names the rows left; any other error says it
// stopped, and the last checkpoint resumes it. Pace it with a
// throttle.Limiter in the client's pipeline on a live account
// (TestMigrateThrottled: under a Simulator, no request throttled).
func (t *Table) Migrate(ctx context.Context, opts MigrateOptions) (MigrateReport, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return MigrateReport{}, err
	}
	start := time.Now()
	var rep MigrateReport
	if err := t.ok(); err != nil {
		return rep, err
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return rep, err
	}
	q := entity.Query{Filter: opts.Filter, PageSize: opts.PageSize}
	token, err := t.resumeToken(opts.Resume)
	if err != nil {
		return rep, err
	}
	resumed := token != ""
	for {
		page, err := t.raw.QueryPage(ctx, q, token)
		if err != nil {
			rep.Elapsed = time.Since(start)
			if resumed && errors.Is(err, entity.ErrInvalidToken) {
				// Of this table's migration, with another Filter.
				return rep, &resumeError{err}
			}
			return rep, fmt.Errorf("resolver: migrate: read page: %w", err)
		}
		resumed = false
		done := rep // the pages finished: what the last checkpoint counts
		done.Failed = slices.Clip(done.Failed)
		if err := t.migratePage(ctx, page.Items, opts, &rep); err != nil {
			// The page is not done: the run resumed from the last
			// checkpoint reads and counts it again, so this run's report
			// counts none of it (TestMigrateReportOfAStoppedRunAddsUp).
			rep = done
			rep.Elapsed = time.Since(start)
			return rep, err
		}
		token = page.Next
		rep.Elapsed = time.Since(start)
		rep.Failed = slices.Clip(rep.Failed) // a checkpoint's report is never written to again
		if opts.Checkpoint != nil {
			if err := opts.Checkpoint(MigrateCheckpoint{Token: t.checkpointToken(token), Report: rep}); err != nil {
				return rep, err
			}
		}
		if opts.Progress != nil {
			opts.Progress(rep)
		}
		if token == "" {
			break
		}
	}
	if len(rep.Failed) > 0 {
		return rep, &MigrateError{Failed: len(rep.Failed), First: rep.Failed[0]}
	}
	return rep, nil
}

// A checkpoint's token is the query's continuation token (entity's, which
// binds it to the Filter) wrapped with the table it migrates and a
// checksum, base64url without padding: 'M', the FNV-64a of the lower-case
// table name, 0x00 and the continuation token (8 bytes, big-endian), then
// the continuation token. A token of another table, of a plain query or
// changed by hand is refused before any request. The checksum finds
// corruption and mix-ups, not forgery: a token is not a secret.
const migrateTokenTag = 'M'

func (t *Table) tokenSum(inner string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(strings.ToLower(t.raw.Name())))
	h.Write([]byte{0})
	h.Write([]byte(inner))
	return h.Sum64()
}

func (t *Table) checkpointToken(inner string) string {
	if inner == "" {
		return ""
	}
	b := make([]byte, 0, 9+len(inner))
	b = append(b, migrateTokenTag)
	b = binary.BigEndian.AppendUint64(b, t.tokenSum(inner))
	b = append(b, inner...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// resumeToken checks a MigrateOptions.Resume and returns the continuation
// token it holds.
func (t *Table) resumeToken(token string) (string, error) {
	if token == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(token)
	switch {
	case err != nil || len(b) < 10 || b[0] != migrateTokenTag:
		return "", &resumeError{errors.New("not a migration's checkpoint token")}
	case binary.BigEndian.Uint64(b[1:9]) != t.tokenSum(string(b[9:])):
		return "", &resumeError{fmt.Errorf("a checkpoint token of another table than %s, or changed", t.raw.Name())}
	case t.checkpointToken(string(b[9:])) != token:
		// Strict base64 still skips CR and LF: one spelling per
		// checkpoint.
		return "", &resumeError{errors.New("not a migration's checkpoint token: not in the form Checkpoint gives")}
	}
	return string(b[9:]), nil
}

// resumeError is a MigrateOptions.Resume refused before any request.
type resumeError struct{ err error }

func (e *resumeError) Error() string {
	return "resolver: migrate: invalid MigrateOptions.Resume: " + strings.TrimPrefix(e.err.Error(), "entity: invalid continuation token: ")
}

// Is makes errors.Is match entity.ErrInvalidToken and entity.ErrInvalid.
func (e *resumeError) Is(target error) bool {
	return target == entity.ErrInvalidToken || target == argerr.Err
}

func (e *resumeError) Unwrap() error { return e.err }

// pending is one old-version row to write: its upgrade as a bag, with the
// ETag it was read with.
type pending struct {
	bag *entity.DynamicEntity
}

// migratePage decodes a page and writes its upgrades, a partition at a
// time. An error means the page is not done: a row could not be written or
// read again for a reason that is not the row's (the service's answer after
// azcore's retries, a transport failure, the context's end); the caller
// then gives no checkpoint past the page.
func (t *Table) migratePage(ctx context.Context, bodies []json.RawMessage, opts MigrateOptions, rep *MigrateReport) error {
	byPK := map[string][]pending{}
	var order []string
	for _, body := range bodies {
		rep.Read++
		p, outcome, fail := t.classify(ctx, body)
		switch {
		case fail != nil:
			rep.Failed = append(rep.Failed, *fail)
		case outcome == outcomeUpgrade:
			if _, seen := byPK[p.bag.PartitionKey]; !seen {
				order = append(order, p.bag.PartitionKey)
			}
			byPK[p.bag.PartitionKey] = append(byPK[p.bag.PartitionKey], p)
		case outcome == outcomeCurrent:
			rep.Current++
		case outcome == outcomeUnknown:
			rep.Unknown++
		}
	}
	// The first partition that cannot go on stops the others: the whole
	// page is done again on resume.
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var stop error
	sem := make(chan struct{}, opts.Concurrency)
	var wg sync.WaitGroup
	for _, pk := range order {
		sem <- struct{}{}
		if pctx.Err() != nil {
			<-sem
			break
		}
		wg.Add(1)
		go func(rows []pending) {
			defer wg.Done()
			defer func() { <-sem }()
			var part MigrateReport
			err := t.writePartition(pctx, rows, opts, &part)
			mu.Lock()
			rep.Upgraded += part.Upgraded
			rep.Current += part.Current
			rep.Unknown += part.Unknown
			rep.Gone += part.Gone
			rep.Raced += part.Raced
			rep.Failed = append(rep.Failed, part.Failed...)
			if err != nil && stop == nil {
				stop = err
				cancel()
			}
			mu.Unlock()
		}(byPK[pk])
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("resolver: migrate: %w", err)
	}
	if stop != nil {
		return &pageError{stop}
	}
	return nil
}

// pageError is a page a migration could not finish, for a reason that is
// not a row's: no checkpoint is given past it.
type pageError struct{ err error }

func (e *pageError) Error() string {
	return "resolver: migrate: page not done, resume from the last checkpoint: " + strings.TrimPrefix(e.err.Error(), "resolver: ")
}

func (e *pageError) Unwrap() error { return e.err }

type outcome uint8

const (
	outcomeCurrent outcome = iota
	outcomeUpgrade
	outcomeUnknown
)

// classify decodes one row: current, unknown, or an upgrade to write. An
// upgrade or stamp function that panics fails its row alone.
func (t *Table) classify(ctx context.Context, body []byte) (p pending, out outcome, fail *MigrateFailure) {
	defer func() {
		if r := recover(); r != nil {
			pk, rk := keysOf(body)
			p, out, fail = pending{}, 0, &MigrateFailure{PartitionKey: pk, RowKey: rk, Err: fmt.Errorf("%w: panic: %v", ErrUpgrade, r)}
		}
	}()
	v, info, err := t.s.decode(body, t.unmarshal(ctx))
	if errors.Is(err, ErrUnknownType) {
		// A Strict schema's refusal: left alone, as in a lenient one.
		return pending{}, outcomeUnknown, nil
	}
	if err != nil {
		pk, rk := keysOf(body)
		return pending{}, 0, &MigrateFailure{PartitionKey: pk, RowKey: rk, Err: err}
	}
	if _, bag := v.(*entity.DynamicEntity); bag {
		return pending{}, outcomeUnknown, nil
	}
	if !info.upgraded {
		return pending{}, outcomeCurrent, nil
	}
	b, _, err := t.s.prepare(v)
	pk, rk := keysOf(body)
	if err != nil {
		return pending{}, 0, &MigrateFailure{PartitionKey: pk, RowKey: rk, Err: err}
	}
	if b.PartitionKey != pk || b.RowKey != rk {
		// A ByFunc stamp that keys the new version elsewhere: replacing
		// the row where it is would miss it (TestMigrateUpgradeThatMovesTheKeyFailsItsRow).
		return pending{}, 0, &MigrateFailure{PartitionKey: pk, RowKey: rk,
			Err: fmt.Errorf("%w: the upgrade is stamped at %s, not at the row's keys: Migrate replaces a row where it is", ErrUpgrade, argerr.EntityKeys(b.PartitionKey, b.RowKey))}
	}
	b.ETag = info.etag
	return pending{bag: b}, outcomeUpgrade, nil
}

// sameUpgrade reports whether the stored row body holds exactly the
// properties of want, the upgrade this run wrote.
func sameUpgrade(body []byte, want *entity.DynamicEntity, un unmarshal) bool {
	var got entity.DynamicEntity
	return un(body, &got) == nil && got.SameContent(*want)
}

func keysOf(body []byte) (pk, rk string) {
	var k struct{ PartitionKey, RowKey string }
	_ = json.Unmarshal(body, &k)
	return k.PartitionKey, k.RowKey
}

// writePartition writes one partition's upgrades in transactions of up to
// 100; a row whose condition fails is taken out and done on its own. An
// error (a MigrateFailure naming the row) stops the partition: see
// migratePage.
func (t *Table) writePartition(ctx context.Context, rows []pending, opts MigrateOptions, rep *MigrateReport) error {
	for len(rows) > 0 {
		n := min(len(rows), 100)
		chunk := slices.Clone(rows[:n])
		rows = rows[n:]
		for len(chunk) > 0 {
			b := t.bags.NewBatch()
			for _, p := range chunk {
				b.Update(p.bag, entity.Replace)
			}
			_, err := t.bags.Submit(ctx, b)
			if err == nil {
				rep.Upgraded += int64(len(chunk))
				break
			}
			var te *entity.TransactionError
			if errors.As(err, &te) && te.Index >= 0 && te.Index < len(chunk) &&
				(errors.Is(err, entity.ErrPreconditionFailed) || errors.Is(err, entity.ErrNotFound)) {
				// That row changed: on its own, the others again.
				rep.Raced++
				if err := t.writeRow(ctx, chunk[te.Index].bag, opts, rep); err != nil {
					return err
				}
				chunk = slices.Delete(chunk, te.Index, te.Index+1)
				continue
			}
			var be *entity.BatchError
			if len(chunk) > 1 && (errors.As(err, &be) && be.Index < 0 && errors.Is(err, entity.ErrInvalid) || bodyTooLarge(err)) {
				// The transaction as a whole is too large (over 4 MiB, or
				// over a smaller limit the service answers with, as
				// Cosmos DB's 2 MiB): half of it now, the other half
				// after.
				half := len(chunk) / 2
				rows = append(slices.Clone(chunk[half:]), rows...)
				chunk = chunk[:half]
				continue
			}
			if errors.As(err, &be) && be.Index >= 0 && be.Index < len(chunk) {
				// That row's upgrade cannot be written (too large once
				// encoded, say): it fails alone, the others go again.
				if err := t.writeRow(ctx, chunk[be.Index].bag, opts, rep); err != nil {
					return err
				}
				chunk = slices.Delete(chunk, be.Index, be.Index+1)
				continue
			}
			// Anything else (an unknown outcome, a refusal of the whole
			// transaction): row by row, each from a fresh read.
			for _, p := range chunk {
				if err := t.writeRow(ctx, p.bag, opts, rep); err != nil {
					return err
				}
			}
			break
		}
	}
	return nil
}

// bodyTooLarge reports the service's refusal of a request body too large
// for it: 413, or Cosmos DB's 400 RequestBodyTooLarge.
func bodyTooLarge(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && (re.StatusCode == http.StatusRequestEntityTooLarge || re.ErrorCode == "RequestBodyTooLarge")
}

// writeRow upgrades one row from a fresh read, again on each concurrent
// change (or write of unknown outcome), at most opts.Attempts times. A
// failure that is the row's — its upgrade fails or cannot be stored, or
// the row kept changing — goes into rep.Failed. Any other failure of the
// read or the write (the service's answer once azcore's retries are
// spent, a transport failure, the context's end) is returned: it says
// nothing about the row, so the row is not reported Failed, and the page
// is not done.
func (t *Table) writeRow(ctx context.Context, want *entity.DynamicEntity, opts MigrateOptions, rep *MigrateReport) error {
	pk, rk := want.PartitionKey, want.RowKey
	var last error
	for range opts.Attempts {
		body, err := t.raw.Get(ctx, pk, rk)
		if errors.Is(err, entity.ErrNotFound) {
			rep.Gone++
			return nil
		}
		if err != nil {
			return MigrateFailure{PartitionKey: pk, RowKey: rk, Err: fmt.Errorf("read again: %w", err)}
		}
		p, out, fail := t.classify(ctx, body)
		switch {
		case fail != nil:
			rep.Failed = append(rep.Failed, *fail)
			return nil
		case out == outcomeCurrent && sameUpgrade(body, want, t.unmarshal(ctx)):
			// What this run wrote is there: its write landed, and the
			// answer to it was lost (or the resend was refused).
			rep.Upgraded++
			return nil
		case out == outcomeUnknown:
			rep.Unknown++ // of a type this schema does not know now: left
			return nil
		case out != outcomeUpgrade:
			rep.Current++
			return nil
		}
		want = p.bag
		err = t.bags.Update(ctx, p.bag, entity.Replace)
		switch {
		case err == nil:
			rep.Upgraded++
			return nil
		case errors.Is(err, entity.ErrPreconditionFailed), errors.Is(err, entity.ErrNotFound):
			last = err
			rep.Raced++
			continue // changed again: read again
		case errors.Is(err, entity.ErrOutcomeUnknown):
			last = err
			continue // the next read says whether it landed
		case errors.Is(err, entity.ErrInvalid):
			// The upgrade cannot be stored (too large once encoded, say):
			// no attempt would change that.
			rep.Failed = append(rep.Failed, MigrateFailure{PartitionKey: pk, RowKey: rk, Err: err})
			return nil
		default:
			return MigrateFailure{PartitionKey: pk, RowKey: rk, Err: fmt.Errorf("write: %w", err)}
		}
	}
	rep.Failed = append(rep.Failed, MigrateFailure{PartitionKey: pk, RowKey: rk, Err: fmt.Errorf("after %d attempts: %w", opts.Attempts, last)})
	return nil
}
