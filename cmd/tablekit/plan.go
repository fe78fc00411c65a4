package main

import (
	"encoding/json"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/keyspace"
	"github.com/tablekit/tablekit/cmd/tablekit/internal/state"
)

const planUsage = `--table NAME --shards N [--from-pk A --to-pk B] [--out FILE]

Cuts the table's PartitionKey space (or the range given) into N ranges of
similar shares — of its entities for a table of up to 16,000 (listed,
keys only), of the spread of its partitions over the key space for a larger
one (a few hundred one-entity queries at most, no scan) — and writes the
plan as JSON: the boundaries, each an existing PartitionKey,
and a fingerprint. Give the file to the n processes of a sharded copy or
export (--shard k/n --shard-plan FILE) so that they share one plan even when
the table changes while they start; without a plan each process probes the
table itself, which gives every process the same plan only for a table that
is not being written.`

const planExample = `  tablekit plan --table Orders --shards 3 --out orders.plan
  tablekit copy --table Orders --to-connection-string "$DST" --shard 0/3 --shard-plan orders.plan   # and 1/3, 2/3`

func runPlan(c *cli, args []string) int {
	fs := c.flags(planUsage, planExample)
	var cf connFlags
	cf.register(fs, "", "table's")
	table := fs.String("table", "", "table to plan")
	shards := fs.Int("shards", 0, "number of ranges (processes)")
	fromPK := fs.String("from-pk", "", "first PartitionKey (inclusive)")
	toPK := fs.String("to-pk", "", "PartitionKey to stop before (exclusive)")
	out := fs.String("out", "", "write the plan to this file (default: stdout)")
	if code, done := c.parse(fs, args, 0); done {
		return code
	}
	if *shards < 1 || *shards > 10000 {
		return c.fail(usagef("--shards must be 1 to 10000"))
	}
	r := keyspace.Range{From: *fromPK, To: *toPK}
	if r.Empty() {
		return c.fail(usagef("--to-pk %q is not above --from-pk %q", *toPK, *fromPK))
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
	bounds, err := keyspace.Split(c.ctx, prober(tbl), lister(tbl), r, *shards, 0)
	if err != nil {
		if c.stopped() {
			return c.interrupted("no plan written", "", "")
		}
		return c.fail(err)
	}
	if bounds == nil {
		bounds = []string{}
	}
	p := shardPlanFile{Table: name, Range: r, Bounds: bounds, Fingerprint: keyspace.Fingerprint(bounds)}
	b, _ := json.MarshalIndent(p, "", "  ")
	b = append(b, '\n')
	if *out == "" {
		c.data.Write(b)
	} else if err := state.WriteFileAtomic(*out, b); err != nil {
		return c.fail(err)
	}
	if len(bounds)+1 < *shards {
		c.say("the table splits into %d ranges only: shards %d to %d will have nothing to do", len(bounds)+1, len(bounds), *shards-1)
	}
	c.say("plan %s: %d ranges, %d storage transactions", p.Fingerprint, len(bounds)+1, c.meter.Snapshot().Total())
	return exitOK
}
