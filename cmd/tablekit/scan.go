package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/keyspace"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

// scanRange is one PartitionKey range of a job and how far it has come:
// Next is the query token to go on from ("" with Done false: the start).
type scanRange struct {
	keyspace.Range
	Next string `json:"next,omitempty"`
	Done bool   `json:"done,omitempty"`
}

// rangeFilter is user and the range's PartitionKey bounds.
func rangeFilter(user filter.Expr, r keyspace.Range) filter.Expr {
	var parts []filter.Expr
	if r.From != "" {
		parts = append(parts, filter.Ge(filter.PartitionKeyProperty, r.From))
	}
	if r.To != "" {
		parts = append(parts, filter.Lt(filter.PartitionKeyProperty, r.To))
	}
	return filter.And(append(parts, user)...)
}

// prober finds the first PartitionKey in a range with a one-entity query
// that returns the keys only.
func prober(tbl *entity.Table[entity.DynamicEntity]) keyspace.Prober {
	return func(ctx context.Context, from, to string) (string, bool, error) {
		q := entity.Query{Filter: rangeFilter(filter.Expr{}, keyspace.Range{From: from, To: to}), Select: []string{filter.PartitionKeyProperty}, Limit: 1, ContinueOnRowError: true}
		for e, err := range tbl.Query(ctx, q) {
			if err != nil {
				var re *entity.RowError
				if errors.As(err, &re) {
					return re.PartitionKey, true, nil
				}
				return "", false, err
			}
			return e.PartitionKey, true, nil
		}
		return "", false, nil
	}
}

// lister reads a page of the keys of a range's entities.
func lister(tbl *entity.Table[entity.DynamicEntity]) keyspace.Lister {
	return func(ctx context.Context, from, to, token string) ([]string, string, error) {
		q := entity.Query{Filter: rangeFilter(filter.Expr{}, keyspace.Range{From: from, To: to}), Select: []string{filter.PartitionKeyProperty}, ContinueOnRowError: true}
		p, err := tbl.QueryPage(ctx, q, token)
		if err != nil {
			return nil, "", err
		}
		pks := make([]string, 0, len(p.Items)+len(p.RowErrors))
		for _, e := range p.Items {
			pks = append(pks, e.PartitionKey)
		}
		for _, re := range p.RowErrors {
			pks = append(pks, re.PartitionKey)
		}
		return pks, p.Next, nil
	}
}

// rangeFlags choose the part of a table a job reads and how it is cut.
type rangeFlags struct {
	fromPK, toPK string
	shard        string
	shardPlan    string
	parallel     int
}

func (f *rangeFlags) register(fs *flag.FlagSet, shardable bool) {
	fs.StringVar(&f.fromPK, "from-pk", "", "first PartitionKey of the range to read (inclusive)")
	fs.StringVar(&f.toPK, "to-pk", "", "PartitionKey the range ends before (exclusive; empty: to the end)")
	fs.IntVar(&f.parallel, "parallel", 4, "PartitionKey ranges read (and written) at once")
	if shardable {
		fs.StringVar(&f.shard, "shard", "", "k/n: this process does the k-th of n PartitionKey ranges (0 <= k < n); run n processes for the whole table")
		fs.StringVar(&f.shardPlan, "shard-plan", "", "file written by 'tablekit plan' holding the ranges --shard picks from (default: probe the table)")
	}
}

func (f *rangeFlags) base() (keyspace.Range, error) {
	r := keyspace.Range{From: f.fromPK, To: f.toPK}
	if r.Empty() {
		return r, usagef("--to-pk %q is not above --from-pk %q", f.toPK, f.fromPK)
	}
	if f.parallel < 1 || f.parallel > 256 {
		return r, usagef("--parallel must be 1 to 256")
	}
	return r, nil
}

// shardPlanFile is what 'tablekit plan' writes.
type shardPlanFile struct {
	Table       string         `json:"table"`
	Range       keyspace.Range `json:"range"`
	Bounds      []string       `json:"bounds"`
	Fingerprint string         `json:"fingerprint"`
}

// planRanges returns the ranges a fresh job reads: --from-pk/--to-pk, the
// shard's part of it, cut into pieces read in parallel. scope describes
// them for messages and tokens.
func (c *cli) planRanges(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], user filter.Expr, f rangeFlags) (ranges []scanRange, scope string, err error) {
	r, err := f.base()
	if err != nil {
		return nil, "", err
	}
	scope = r.String()
	if f.shard != "" {
		sh, err := keyspace.ParseShard(f.shard)
		if err != nil {
			return nil, "", usagef("%v", err)
		}
		var bounds []string
		if f.shardPlan != "" {
			b, err := os.ReadFile(f.shardPlan)
			if err != nil {
				return nil, "", usagef("--shard-plan: %v", err)
			}
			var p shardPlanFile
			if err := json.Unmarshal(b, &p); err != nil {
				return nil, "", usagef("--shard-plan %s is not a plan of 'tablekit plan': %v", f.shardPlan, err)
			}
			if p.Range != r {
				return nil, "", usagef("--shard-plan covers %s, not %s (give the same --from-pk and --to-pk)", p.Range, r)
			}
			if err := keyspace.CheckBounds(r, p.Bounds); err != nil {
				return nil, "", usagef("--shard-plan: %v", err)
			}
			if len(p.Bounds) > sh.N-1 {
				return nil, "", usagef("--shard-plan has %d ranges, more than the %d shards of --shard %s", len(p.Bounds)+1, sh.N, sh)
			}
			bounds = p.Bounds
		} else {
			bounds, err = keyspace.Split(ctx, prober(tbl), lister(tbl), r, sh.N, 0)
			if err != nil {
				return nil, "", err
			}
		}
		fp := keyspace.Fingerprint(bounds)
		sr, ok := sh.Pick(r, bounds)
		if !ok {
			c.say("shard %s: nothing to do: the table splits into %d ranges only (plan %s)", sh, len(bounds)+1, fp)
			return nil, fmt.Sprintf("shard %s of %s: empty (plan %s)", sh, scope, fp), nil
		}
		c.say("shard %s: %s (plan %s: every process of this job must print the same plan)", sh, sr, fp)
		scope = fmt.Sprintf("shard %s of %s: %s (plan %s)", sh, scope, sr, fp)
		r = sr
	}
	pieces := f.parallel * 2
	if f.parallel == 1 || user.Plan().Kind != filter.TableScan {
		pieces = 1 // one partition, or no parallel reads asked for
	}
	bounds, err := keyspace.Split(ctx, prober(tbl), lister(tbl), r, pieces, 0)
	if err != nil {
		return nil, "", err
	}
	for _, x := range keyspace.Ranges(r, bounds) {
		ranges = append(ranges, scanRange{Range: x})
	}
	return ranges, scope, nil
}

// page is one page of a range, in its order (seq).
type page struct {
	r, seq int
	items  []entity.DynamicEntity
	bad    []*entity.RowError
	next   string
}

// scan reads the ranges that are not done, up to parallel at once, each
// page by page from its token, and sends the pages to out, which it closes
// at the end. It stops when ctx ends; a read that fails stops it with its
// error.
func scan(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], user filter.Expr, sel []string, pageSize int, ranges []scanRange, parallel int, out chan<- page) error {
	defer close(out)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan int)
	errc := make(chan error, parallel)
	for range parallel {
		go func() {
			var first error
			for i := range work {
				if first != nil {
					continue
				}
				q := entity.Query{Filter: rangeFilter(user, ranges[i].Range), Select: sel, PageSize: pageSize, ContinueOnRowError: true}
				next := ranges[i].Next
				for seq := 0; ; seq++ {
					p, err := tbl.QueryPage(ctx, q, next)
					if err != nil {
						if ctx.Err() == nil {
							first = err
							cancel(err)
						}
						break
					}
					select {
					case out <- page{r: i, seq: seq, items: p.Items, bad: p.RowErrors, next: p.Next}:
					case <-ctx.Done():
					}
					if p.Next == "" || ctx.Err() != nil {
						break
					}
					next = p.Next
				}
			}
			errc <- first
		}()
	}
feed:
	for i, r := range ranges {
		if r.Done {
			continue
		}
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	var first error
	for range parallel {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// permanent reports an entity's failure that another run would meet
// again: an entity the service (or tablekit's checks) refuses. Other
// failures — transport, throttling after retries, an unknown outcome, a
// missing table, authorization — stop the job, resumably.
func permanent(err error) bool {
	if errors.Is(err, entity.ErrInvalid) || errors.Is(err, entity.ErrDecode) {
		return true
	}
	status := 0
	var se *entity.ServiceError
	var te *entity.TransactionError
	switch {
	case errors.As(err, &te):
		status = te.StatusCode
	case errors.As(err, &se):
		status = se.StatusCode
	}
	switch status {
	case 400, 413:
		return true
	}
	return false
}

// keysText names an entity in a message.
func keysText(pk, rk string) string {
	return fmt.Sprintf("PartitionKey %q, RowKey %q", pk, rk)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
