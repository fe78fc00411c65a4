package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/keyspace"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

const deleteUsage = `--table NAME (--pk P ... | --filter EXPR | --from-pk A --to-pk B | --all) [--dry-run]

Deletes the entities of whole partitions (--pk, as often as needed), those a
filter selects, a PartitionKey range, or (--all) every entity of the table,
in entity group transactions of up to 100 deletes (one billed transaction
each), partitions in parallel, paced by the throttle.Limiter. The query
reads the keys only. --dry-run deletes nothing and says what would go: the
count, and the partitions with the most entities. An entity already gone
(deleted by someone else, or by an interrupted run) counts as gone. Deleting
is idempotent: after Ctrl-C, run the same command again.`

const deleteExample = `  tablekit delete --table Logs --filter "Timestamp lt datetime'2024-01-01T00:00:00Z'" --dry-run
  tablekit delete --table Logs --pk 2023-12 --pk 2023-11`

func runDelete(c *cli, args []string) int {
	fs := c.flags(deleteUsage, deleteExample)
	var cf connFlags
	cf.register(fs, "", "table's")
	var rf rangeFlags
	rf.register(fs, false)
	table := fs.String("table", "", "table to delete from")
	var pks multiFlag
	fs.Var(&pks, "pk", "delete this whole partition (repeatable)")
	filterText := fs.String("filter", "", "OData filter of the entities to delete")
	all := fs.Bool("all", false, "delete every entity of the table (the table stays)")
	dry := fs.Bool("dry-run", false, "delete nothing: count what would go")
	show := fs.Int("show", 20, "with --dry-run, how many partitions to list")
	if code, done := c.parse(fs, args, 0); done {
		return code
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["pk"] && !given["filter"] && !given["from-pk"] && !given["to-pk"] && !*all {
		return c.fail(usagef("say what to delete: --pk, --filter, --from-pk/--to-pk, or --all for every entity"))
	}
	if *all && (given["pk"] || given["filter"] || given["from-pk"] || given["to-pk"]) {
		return c.fail(usagef("--all deletes every entity: give it alone, or select with --pk, --filter or a range instead"))
	}
	if given["pk"] && (given["from-pk"] || given["to-pk"]) {
		return c.fail(usagef("give --pk or --from-pk/--to-pk, not both"))
	}
	user, err := parseFilter(*filterText)
	if err != nil {
		return c.fail(err)
	}
	if _, err := rf.base(); err != nil {
		return c.fail(err)
	}
	cn, err := c.connect(&cf, true)
	if err != nil {
		return c.fail(err)
	}
	name := tableName(cn, *table)
	tbl, err := c.table(cn, name)
	if err != nil {
		return c.fail(err)
	}
	var ranges []scanRange
	if given["pk"] {
		for _, pk := range pks {
			// Exactly the partition: the next key after pk is pk + U+0000.
			ranges = append(ranges, scanRange{Range: keyspace.Range{From: pk, To: pk + "\x00"}})
		}
	} else if ranges, _, err = c.planRanges(c.ctx, tbl, user, rf); err != nil {
		if c.stopped() {
			return c.interrupted("nothing deleted", "", "")
		}
		return c.fail(err)
	}
	work, cancelWork := c.workContext()
	defer cancelWork()
	readCtx, stopReading := context.WithCancel(c.ctx)
	defer stopReading()
	prog := c.startProgress("entities", 0)
	defer prog.stop()
	pages := make(chan page, rf.parallel*2)
	var scanErr error
	scanned := make(chan struct{})
	go func() {
		scanErr = scan(readCtx, tbl, user, []string{filter.RowKeyProperty}, 0, ranges, rf.parallel, pages)
		close(scanned)
	}()
	var deleted, gone, seen atomic.Int64
	var mu sync.Mutex
	byPart := map[string]int64{}
	var fatal error
	var wg sync.WaitGroup
	for range rf.parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range pages {
				mu.Lock()
				stop := fatal != nil
				mu.Unlock()
				if stop || c.stopped() {
					continue
				}
				for _, re := range p.bad { // keys are all a delete needs
					p.items = append(p.items, entity.DynamicEntity{PartitionKey: re.PartitionKey, RowKey: re.RowKey})
				}
				seen.Add(int64(len(p.items)))
				if *dry {
					mu.Lock()
					for _, d := range p.items {
						byPart[d.PartitionKey]++
					}
					mu.Unlock()
					prog.set(seen.Load())
					continue
				}
				for _, b := range batchesOf(p.items) {
					d, g, err := deleteBatch(work, tbl, b.pk, b.rks)
					deleted.Add(int64(d))
					gone.Add(int64(g))
					prog.set(deleted.Load() + gone.Load())
					if err != nil {
						mu.Lock()
						if fatal == nil {
							fatal = err
						}
						mu.Unlock()
						stopReading()
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	<-scanned
	prog.stop()
	if fatal == nil {
		fatal = scanErr
	}
	doneText := fmt.Sprintf("%d entities deleted", deleted.Load())
	if fatal != nil {
		if c.stopped() && errors.Is(fatal, context.Canceled) {
			return c.interrupted(doneText, "", "")
		}
		code := c.fail(fatal)
		c.warn("%s; run the same command again to go on", doneText)
		return code
	}
	if c.stopped() {
		if *dry {
			return c.interrupted(fmt.Sprintf("%d entities counted (incomplete)", seen.Load()), "", "")
		}
		return c.interrupted(doneText, "", "")
	}
	if *dry {
		type ps struct {
			PartitionKey string `json:"partitionKey"`
			Entities     int64  `json:"entities"`
		}
		list := make([]ps, 0, len(byPart))
		for k, v := range byPart {
			list = append(list, ps{k, v})
		}
		slices.SortFunc(list, func(a, b ps) int {
			if a.Entities != b.Entities {
				return int(b.Entities - a.Entities)
			}
			return strings.Compare(a.PartitionKey, b.PartitionKey)
		})
		var b strings.Builder
		fmt.Fprintf(&b, "dry run: would delete %s entities in %s partitions of %s (at least %s transactions of up to 100)\n", group(seen.Load()), group(int64(len(byPart))), name, group(minTransactions(list, func(p ps) int64 { return p.Entities })))
		for _, p := range list[:min(len(list), *show)] {
			fmt.Fprintf(&b, "  %12s  %q\n", group(p.Entities), p.PartitionKey)
		}
		if len(list) > *show {
			fmt.Fprintf(&b, "  … and %d more partitions\n", len(list)-*show)
		}
		c.summary(map[string]any{"command": "delete", "status": "done", "dryRun": true, "wouldDelete": seen.Load(), "partitions": len(byPart), "largest": list[:min(len(list), *show)], "transactions": c.meter.Snapshot().Total()}, b.String(), false)
		return exitOK
	}
	text := fmt.Sprintf("deleted %s entities from %s (%s already gone) in %s, %s storage transactions\n", group(deleted.Load()), name, group(gone.Load()), prog.elapsed().Round(1e7), group(c.meter.Snapshot().Total()))
	c.summary(map[string]any{"command": "delete", "status": "done", "deleted": deleted.Load(), "alreadyGone": gone.Load(), "seconds": prog.elapsed().Seconds(), "transactions": c.meter.Snapshot().Total()}, text, false)
	return exitOK
}

func minTransactions[T any](list []T, n func(T) int64) int64 {
	var t int64
	for _, x := range list {
		t += (n(x) + 99) / 100
	}
	return t
}

type delBatch struct {
	pk  string
	rks []string
}

// batchesOf groups a page's keys by partition into batches of at most 100.
func batchesOf(items []entity.DynamicEntity) []delBatch {
	var out []delBatch
	idx := map[string]int{}
	for _, d := range items {
		i, ok := idx[d.PartitionKey]
		if !ok || len(out[i].rks) == entity.MaxBatchOperations {
			out = append(out, delBatch{pk: d.PartitionKey})
			i = len(out) - 1
			idx[d.PartitionKey] = i
		}
		out[i].rks = append(out[i].rks, d.RowKey)
	}
	return out
}

// deleteBatch deletes the entities in one transaction; one that is already
// gone is left out and the rest sent again.
func deleteBatch(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], pk string, rks []string) (deleted, gone int, err error) {
	for len(rks) > 0 {
		b := tbl.NewBatch()
		for _, rk := range rks {
			b.Delete(pk, rk, entity.AnyETag)
		}
		_, err := tbl.Submit(ctx, b)
		if err == nil {
			return deleted + len(rks), gone, nil
		}
		var te *entity.TransactionError
		if errors.As(err, &te) && errors.Is(err, entity.ErrNotFound) && te.Index >= 0 && te.Index < len(rks) {
			gone++
			rks = append(rks[:te.Index:te.Index], rks[te.Index+1:]...)
			continue
		}
		return deleted, gone, fmt.Errorf("delete from partition %q: %w", pk, err)
	}
	return deleted, gone, nil
}
