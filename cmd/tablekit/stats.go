package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
)

const statsUsage = `--table NAME [--filter EXPR] [--from-pk A --to-pk B] [--largest N]

Reads the table (or what --filter and the PartitionKey range select), in
PartitionKey ranges read in parallel, and counts its entities and partitions,
its size as the service bills it (4 bytes + 2 per key character + for each
property 8 bytes + 2 per name character + the value: String 4 + 2 per
character, Binary 4 + its length, Int32 4, Int64, Double and DateTime 8,
Guid 16, Boolean 1), the largest partitions, and what the scan cost in
storage transactions (package cost's meter).`

const statsExample = `  tablekit stats --table Orders --largest 5 --json`

type partStat struct {
	PartitionKey string `json:"partitionKey"`
	Entities     int64  `json:"entities"`
	Bytes        int64  `json:"bytes"`
}

func runStats(c *cli, args []string) int {
	fs := c.flags(statsUsage, statsExample)
	var cf connFlags
	cf.register(fs, "", "table's")
	var rf rangeFlags
	rf.register(fs, false)
	table := fs.String("table", "", "table to read")
	filterText := fs.String("filter", "", "OData filter of the entities to count")
	largest := fs.Int("largest", 10, "how many of the largest partitions to list")
	if code, done := c.parse(fs, args, 0); done {
		return code
	}
	if *largest < 0 {
		return c.fail(usagef("--largest cannot be negative"))
	}
	user, err := parseFilter(*filterText)
	if err != nil {
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
	before := c.meter.Snapshot()
	start := time.Now()
	ranges, _, err := c.planRanges(c.ctx, tbl, user, rf)
	if err != nil {
		if c.stopped() {
			return c.interrupted("nothing counted", "", "")
		}
		return c.fail(err)
	}
	prog := c.startProgress("entities", 0)
	defer prog.stop()
	pages := make(chan page, rf.parallel*2)
	var scanErr error
	done := make(chan struct{})
	go func() {
		scanErr = scan(c.ctx, tbl, user, nil, 0, ranges, rf.parallel, pages)
		close(done)
	}()
	parts := map[string]*partStat{}
	var entities, bytes, unread int64
	props := map[string]int64{}
	for p := range pages {
		for _, re := range p.bad {
			unread++
			c.itemFailed("not read", 0, re.PartitionKey, re.RowKey, re)
		}
		for i := range p.items {
			d := &p.items[i]
			sz := entitySize(d)
			ps := parts[d.PartitionKey]
			if ps == nil {
				ps = &partStat{PartitionKey: d.PartitionKey}
				parts[d.PartitionKey] = ps
			}
			ps.Entities++
			ps.Bytes += sz
			entities++
			bytes += sz
			for k := range d.Properties {
				props[k]++
			}
		}
		prog.set(entities)
	}
	<-done
	prog.stop()
	if scanErr != nil || c.stopped() {
		if c.stopped() {
			return c.interrupted(fmt.Sprintf("%d entities counted (incomplete)", entities), "", "")
		}
		return c.fail(scanErr)
	}
	el := time.Since(start)
	list := make([]partStat, 0, len(parts))
	for _, p := range parts {
		list = append(list, *p)
	}
	slices.SortFunc(list, func(a, b partStat) int {
		if a.Bytes != b.Bytes {
			if a.Bytes > b.Bytes {
				return -1
			}
			return 1
		}
		return strings.Compare(a.PartitionKey, b.PartitionKey)
	})
	list = list[:min(len(list), *largest)]
	used := c.meter.Snapshot().Sub(before)
	ops := map[string]int64{}
	for _, k := range used.Keys() {
		ops[string(k.Service)+" "+k.Op] = used.Count(k.Service, k.Op)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "table %s: %s entities in %s partitions, about %s bytes", name, group(entities), group(int64(len(parts))), group(bytes))
	if entities > 0 {
		fmt.Fprintf(&b, " (%s per entity, %d property names)", group(bytes/entities), len(props))
	}
	b.WriteString("\n")
	if len(list) > 0 {
		fmt.Fprintf(&b, "largest partitions:\n")
		fmt.Fprintf(&b, "  %12s  %14s  %s\n", "ENTITIES", "BYTES", "PARTITIONKEY")
		for _, p := range list {
			fmt.Fprintf(&b, "  %12s  %14s  %q\n", group(p.Entities), group(p.Bytes), p.PartitionKey)
		}
	}
	fmt.Fprintf(&b, "scan: %s storage transactions (%s table queries) in %s, %.0f entities/s\n", group(used.Total()), group(used.Count(cost.Table, cost.OpQuery)), el.Round(time.Millisecond), float64(entities)/el.Seconds())
	status, code := "done", exitOK
	if unread > 0 {
		status, code = "partial", exitPartial
	}
	c.summary(map[string]any{"command": "stats", "status": status, "table": name, "entities": entities, "partitions": len(parts), "bytes": bytes,
		"propertyNames": len(props), "largest": list, "unread": unread, "transactions": used.Total(), "transactionsByOperation": ops, "seconds": el.Seconds()}, b.String(), false)
	return code
}

// entitySize is the entity's size as the service counts it.
func entitySize(d *entity.DynamicEntity) int64 {
	n := int64(4 + 2*utf16Len(d.PartitionKey) + 2*utf16Len(d.RowKey))
	for k, v := range d.Properties {
		n += int64(8 + 2*utf16Len(k))
		switch x := v.(type) {
		case string:
			n += int64(4 + 2*utf16Len(x))
		case []byte:
			n += int64(4 + len(x))
		case int32:
			n += 4
		case bool:
			n++
		case uuid.UUID:
			n += 16
		default: // int64, float64, time.Time
			n += 8
		}
	}
	return n
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
