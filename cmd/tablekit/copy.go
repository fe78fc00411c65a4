package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/state"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

const copyUsage = `--table NAME [--to-table NAME] [--to-connection-string STR] [flags]

Copies the entities of a table (all of them, those --filter selects, or a
PartitionKey range) to a table of the same or another account, reading
PartitionKey ranges in parallel and writing in transactions of up to 100.
Both sides are paced by one throttle.Limiter. The destination table is
created when missing, and the command says so ("created table NAME"). The job is resumable: on Ctrl-C it finishes what is in
flight and prints a token (--resume TOKEN); with --checkpoint FILE the token
is also saved after every page, to resume after a crash (--resume @FILE).
--shard k/n lets n processes copy one table together.

Modes (--mode):
  insert-or-replace  write every entity, replacing a stored one (default)
  insert-or-merge    write every entity, merging into a stored one
  insert-or-skip     write only entities the destination lacks; count the rest as skipped
  insert             write only entities the destination lacks; a stored entity with other
                     properties is a conflict, reported and left alone (exit 3), one with the
                     same properties (a resumed run) counts as already there

A row's write token (TkWrite, stored by entity's WithWriteTokens and the
index patterns) is copied as it is, in the same request.`

const copyExample = `  tablekit copy --connection-string "$SRC" --table Orders \
      --to-connection-string "$DST" --to-table Orders --mode insert \
      --filter "Status eq 'open'" --checkpoint orders.copy`

type copyJob struct {
	V      int         `json:"v"`
	Cmd    string      `json:"cmd"`
	Src    string      `json:"src"`
	Dst    string      `json:"dst"`
	Filter string      `json:"filter,omitempty"`
	Mode   string      `json:"mode"`
	Scope  string      `json:"scope"`
	Ranges []scanRange `json:"ranges"`
	Counts copyCounts  `json:"counts"`
}

type copyCounts struct {
	Read      int64 `json:"read"`
	Written   int64 `json:"written"`
	Skipped   int64 `json:"skipped,omitempty"`
	Existing  int64 `json:"existing,omitempty"`
	Conflicts int64 `json:"conflicts,omitempty"`
	Failed    int64 `json:"failed,omitempty"`
}

func (a *copyCounts) add(b copyCounts) {
	a.Read += b.Read
	a.Written += b.Written
	a.Skipped += b.Skipped
	a.Existing += b.Existing
	a.Conflicts += b.Conflicts
	a.Failed += b.Failed
}

var copyModes = map[string]entity.OpKind{
	"insert-or-replace": entity.OpUpsertReplace,
	"insert-or-merge":   entity.OpUpsertMerge,
	"insert-or-skip":    entity.OpInsert,
	"insert":            entity.OpInsert,
}

func runCopy(c *cli, args []string) int {
	fs := c.flags(copyUsage, copyExample)
	var src, dst connFlags
	src.register(fs, "", "source")
	dst.register(fs, "to-", "destination")
	var rf rangeFlags
	rf.register(fs, true)
	table := fs.String("table", "", "source table")
	toTable := fs.String("to-table", "", "destination table (default: --table)")
	mode := fs.String("mode", "insert-or-replace", "insert-or-replace, insert-or-merge, insert-or-skip or insert")
	filterText := fs.String("filter", "", "OData filter of the entities to copy, such as \"Status eq 'open' and Total gt 100.0\"")
	pageSize := fs.Int("page-size", 1000, "entities per query page (1 to 1000)")
	resume := fs.String("resume", "", "token printed by an interrupted run (or @FILE: the token saved by --checkpoint)")
	checkpoint := fs.String("checkpoint", "", "save the resume token to this file after every page")
	if code, done := c.parse(fs, args, 0); done {
		return code
	}
	op, ok := copyModes[*mode]
	if !ok {
		return c.fail(usagef("--mode %q: want insert-or-replace, insert-or-merge, insert-or-skip or insert", *mode))
	}
	if *pageSize < 1 || *pageSize > entity.MaxPageSize {
		return c.fail(usagef("--page-size must be 1 to 1000"))
	}
	user, err := parseFilter(*filterText)
	if err != nil {
		return c.fail(err)
	}
	srcConn, err := c.connect(&src, true)
	if err != nil {
		return c.fail(err)
	}
	dstConn := srcConn
	if dst.given() {
		if dstConn, err = c.connect(&dst, false); err != nil {
			return c.fail(err)
		}
	}
	srcName := tableName(srcConn, *table)
	dstName := *toTable
	if dstName == "" {
		dstName = srcName
		if dstConn.tableSAS != "" {
			dstName = dstConn.sasTable
		}
	}
	if dstConn.label == srcConn.label && strings.EqualFold(srcName, dstName) {
		return c.fail(usagef("the destination is the source table %q: give --to-table or another account", srcName))
	}
	srcTbl, err := c.table(srcConn, srcName)
	if err != nil {
		return c.fail(err)
	}
	dstTbl, err := c.table(dstConn, dstName)
	if err != nil {
		return c.fail(err)
	}
	filterStr, _ := user.Build()
	job := copyJob{V: 1, Cmd: "copy", Src: srcConn.label + srcName, Dst: dstConn.label + dstName, Filter: filterStr, Mode: *mode}
	work, cancelWork := c.workContext()
	defer cancelWork()
	if *resume != "" {
		tok, err := state.Load(*resume)
		if err != nil {
			return c.fail(usagef("--resume: %v", err))
		}
		var old copyJob
		if err := state.Decode(tok, &old); err != nil {
			return c.fail(fmt.Errorf("--resume: %w", err))
		}
		if old.Cmd != job.Cmd || old.Src != job.Src || old.Dst != job.Dst || old.Filter != job.Filter || old.Mode != job.Mode {
			return c.fail(usagef("--resume: the token is of another job (copy of %s to %s, mode %s, filter %q): give the same tables, --mode and --filter", old.Src, old.Dst, old.Mode, old.Filter))
		}
		job = old
		c.say("resuming: %d entities read before, %s", job.Counts.Read, job.Scope)
	} else {
		job.Ranges, job.Scope, err = c.planRanges(c.ctx, srcTbl, user, rf)
		if err != nil {
			if c.stopped() {
				return c.interrupted("nothing copied", "", "")
			}
			return c.fail(err)
		}
	}
	if err := c.ensureTable(work, dstTbl, dstName); err != nil {
		if c.stopped() {
			return c.interrupted("nothing copied", "", "")
		}
		return c.fail(fmt.Errorf("create the destination table: %w", err))
	}
	prog := c.startProgress("entities", job.Counts.Read)
	defer prog.stop()
	cp := &copier{c: c, src: srcTbl, dst: dstTbl, op: op, mode: *mode, job: &job, prog: prog, checkpoint: *checkpoint}
	if tok, err := state.Encode(job); err == nil {
		cp.token = tok
		prog.setToken(tok)
	}
	err = cp.run(work, user, *pageSize, rf.parallel)
	prog.stop()
	done := fmt.Sprintf("%d entities read, %d written", job.Counts.Read, job.Counts.Written)
	if err != nil {
		if c.stopped() && (errors.Is(err, context.Canceled) || errors.Is(err, errStop)) {
			return c.interrupted(done, cp.token, *checkpoint)
		}
		code := c.fail(err)
		if cp.token != "" {
			if c.json {
				c.event(map[string]any{"event": "resume", "command": c.name, "resume": cp.token})
			} else {
				fmt.Fprintf(c.errw, "tablekit copy: %s; to resume, run the same command with: --resume %s\n", done, cp.token)
			}
		}
		return code
	}
	n := job.Counts
	text := fmt.Sprintf("copied %s to %s: %d entities read, %d written", srcName, dstName, n.Read, n.Written)
	if n.Skipped > 0 {
		text += fmt.Sprintf(", %d skipped (already in the destination)", n.Skipped)
	}
	if n.Existing > 0 {
		text += fmt.Sprintf(", %d already there with the same properties", n.Existing)
	}
	if n.Conflicts > 0 {
		text += fmt.Sprintf(", %d conflicts (stored with other properties, left alone)", n.Conflicts)
	}
	if n.Failed > 0 {
		text += fmt.Sprintf(", %d failed", n.Failed)
	}
	el := prog.elapsed()
	text += fmt.Sprintf(" in %s (%.0f entities/s), %d storage transactions\n", el.Round(1e7), prog.rate(), c.meter.Snapshot().Total())
	status := "done"
	code := exitOK
	if n.Failed > 0 || n.Conflicts > 0 {
		status, code = "partial", exitPartial
	}
	c.summary(map[string]any{"command": "copy", "status": status, "source": srcName, "destination": dstName, "scope": job.Scope,
		"counts": n, "seconds": el.Seconds(), "rate": prog.rate(), "transactions": c.meter.Snapshot().Total()}, text, false)
	return code
}

var errStop = errors.New("stopped by an interrupt")

// copier runs a copy job: pages read by scan, written by workers, and
// committed to the job in each range's order, so that the token always
// resumes after pages whose every entity is settled.
type copier struct {
	c          *cli
	src, dst   *entity.Table[entity.DynamicEntity]
	op         entity.OpKind
	mode       string
	prog       *progress
	checkpoint string

	mu      sync.Mutex
	job     *copyJob
	pending []map[int]pageResult // per range: results waiting for earlier pages
	nextSeq []int
	token   string
	live    copyCounts // settled in pages not yet committed, for progress
	saveMu  sync.Mutex
}

type pageResult struct {
	next   string
	counts copyCounts
}

func (cp *copier) run(work context.Context, user filter.Expr, pageSize, parallel int) error {
	cp.pending = make([]map[int]pageResult, len(cp.job.Ranges))
	cp.nextSeq = make([]int, len(cp.job.Ranges))
	for i := range cp.pending {
		cp.pending[i] = map[int]pageResult{}
	}
	// Reading stops at the interrupt; writing finishes the pages in hand.
	readCtx, stopReading := context.WithCancel(cp.c.ctx)
	defer stopReading()
	pages := make(chan page, parallel*2)
	var scanErr error
	scanDone := make(chan struct{})
	go func() {
		scanErr = scan(readCtx, cp.src, user, nil, pageSize, cp.job.Ranges, parallel, pages)
		close(scanDone)
	}()
	var wg sync.WaitGroup
	var failMu sync.Mutex
	var fatal error
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range pages {
				failMu.Lock()
				stop := fatal != nil
				failMu.Unlock()
				if stop || cp.c.stopped() {
					continue // drain: scan is stopping
				}
				res, err := cp.write(work, p)
				if err != nil {
					failMu.Lock()
					if fatal == nil {
						fatal = err
					}
					failMu.Unlock()
					stopReading()
					continue
				}
				if err := cp.commit(p.r, p.seq, res); err != nil {
					failMu.Lock()
					if fatal == nil {
						fatal = err
					}
					failMu.Unlock()
					stopReading()
				}
			}
		}()
	}
	wg.Wait()
	<-scanDone
	switch {
	case fatal != nil:
		return fatal
	case scanErr != nil:
		return scanErr
	case cp.c.stopped():
		for _, r := range cp.job.Ranges {
			if !r.Done {
				return errStop
			}
		}
	}
	return nil
}

// write writes one page and settles each entity's outcome. An error means
// the page is not settled: the job stops and a resumed run writes it again.
func (cp *copier) write(ctx context.Context, p page) (pageResult, error) {
	res := pageResult{next: p.next}
	res.counts.Read = int64(len(p.items) + len(p.bad))
	for _, re := range p.bad {
		res.counts.Failed++
		cp.c.itemFailed("not read", 0, re.PartitionKey, re.RowKey, re)
	}
	if len(p.items) > 0 {
		outs, err := cp.dst.BulkWrite(ctx, p.items, entity.BulkOptions{Mode: cp.op, KeepWriteTokens: true})
		if len(outs) != len(p.items) {
			if err == nil {
				err = errors.New("bulk write returned no outcomes")
			}
			return res, err
		}
		for i, o := range outs {
			switch {
			case o.Err == nil:
				res.counts.Written++
			case ctx.Err() != nil:
				return res, ctx.Err()
			case errors.Is(o.Err, entity.ErrAlreadyExists) && cp.mode == "insert-or-skip":
				res.counts.Skipped++
			case errors.Is(o.Err, entity.ErrAlreadyExists) && cp.mode == "insert":
				stored, err := cp.dst.Get(ctx, o.PartitionKey, o.RowKey)
				if err != nil {
					return res, fmt.Errorf("read back the stored entity (%s) to tell a conflict from an earlier run's write: %w", keysText(o.PartitionKey, o.RowKey), err)
				}
				if stored.SameContent(p.items[i]) {
					res.counts.Existing++
				} else {
					res.counts.Conflicts++
					cp.c.itemFailed("conflict", 0, o.PartitionKey, o.RowKey, errors.New("stored with other properties; left as it is"))
				}
			case permanent(o.Err):
				res.counts.Failed++
				cp.c.itemFailed("failed", 0, o.PartitionKey, o.RowKey, o.Err)
			default:
				return res, o.Err
			}
		}
	}
	cp.mu.Lock()
	cp.live.add(res.counts)
	n := cp.job.Counts.Read + cp.live.Read
	cp.mu.Unlock()
	cp.prog.set(n)
	return res, nil
}

// commit records a settled page and moves its range's token on past every
// page settled in order.
func (cp *copier) commit(r, seq int, res pageResult) error {
	cp.mu.Lock()
	cp.pending[r][seq] = res
	moved := false
	for {
		x, ok := cp.pending[r][cp.nextSeq[r]]
		if !ok {
			break
		}
		delete(cp.pending[r], cp.nextSeq[r])
		cp.nextSeq[r]++
		cp.job.Ranges[r].Next = x.next
		cp.job.Ranges[r].Done = x.next == ""
		cp.job.Counts.add(x.counts)
		neg := x.counts
		cp.live.add(copyCounts{Read: -neg.Read, Written: -neg.Written, Skipped: -neg.Skipped, Existing: -neg.Existing, Conflicts: -neg.Conflicts, Failed: -neg.Failed})
		moved = true
	}
	if !moved {
		cp.mu.Unlock()
		return nil
	}
	tok, err := state.Encode(cp.job)
	if err == nil {
		cp.token = tok
	}
	cp.mu.Unlock()
	if err != nil {
		return err
	}
	cp.prog.setToken(tok)
	if cp.checkpoint != "" {
		// Under its own lock order: a later token may overtake an
		// earlier one only if written after it, which the mutex below
		// keeps from happening.
		cp.saveMu.Lock()
		defer cp.saveMu.Unlock()
		cp.mu.Lock()
		latest := cp.token
		cp.mu.Unlock()
		if err := state.Save(cp.checkpoint, latest); err != nil {
			return fmt.Errorf("--checkpoint: %w", err)
		}
	}
	return nil
}
