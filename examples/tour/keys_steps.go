package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/keys"
)

// LogLine is a log-tail entity: RowKey is the inverted ticks of its time,
// so the newest line sorts first (design guide §6.7).
type LogLine struct {
	Source  string `table:"PartitionKey,pk"`
	Key     string `table:"RowKey,rk"`
	Message string
}

// Review is an employee's yearly review under a compound RowKey
// (employee id, year), design guide §6.6.
type Review struct {
	Department string `table:"PartitionKey,pk"`
	Key        string `table:"RowKey,rk"`
	Rating     int32
}

func keyOrder(ctx context.Context, env *demo.Env, w io.Writer) error {
	client, drop, err := newTable(ctx, env, "tourkeys")
	if err != nil {
		return err
	}
	defer drop()
	logs, err := entity.NewTable[LogLine](client)
	if err != nil {
		return err
	}
	start := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	var seq keys.Sequencer
	var lines []LogLine
	for i, msg := range []string{"started", "request 1", "request 2", "request 3, same tick", "stopping"} {
		at := start.Add(time.Duration(min(i, 3)) * time.Second)
		tick, n := seq.Next(at)
		lines = append(lines, LogLine{Source: "web", Key: keys.InvertedTicksSeq(tick, n), Message: msg})
	}
	if _, err := logs.BulkWrite(ctx, lines, entity.BulkOptions{Mode: entity.OpInsert}); err != nil {
		return err
	}
	fmt.Fprintln(w, "The three newest log lines, with one query of $top=3 (RowKey = inverted ticks):")
	for l, err := range logs.Query(ctx, entity.Query{Filter: filter.PK("web"), Limit: 3}) {
		if err != nil {
			return err
		}
		at, _, err := keys.ParseInvertedTicksSeq(l.Key)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s  %s  %s\n", l.Key, at.Format("15:04:05"), l.Message)
	}
	fmt.Fprintf(w, "keys.InvertedTicks matches .NET's (DateTime.MaxValue.Ticks - t.Ticks).ToString(\"D19\"): %s\n", keys.InvertedTicks(start))

	reviews, err := entity.NewTable[Review](client)
	if err != nil {
		return err
	}
	var rs []Review
	for _, emp := range []string{"000122", "000123", "000124"} {
		for _, year := range []string{"2011", "2012", "2013"} {
			rs = append(rs, Review{Department: "Sales", Key: keys.Compound("empid", emp, year), Rating: 3})
		}
	}
	if _, err := reviews.BulkWrite(ctx, rs, entity.BulkOptions{}); err != nil {
		return err
	}
	from, to := keys.CompoundPrefix("empid", "000123")
	fmt.Fprintf(w, "All reviews of employee 000123 with one range query, RowKey ge %q and lt %q:\n", from, to)
	for r, err := range reviews.Query(ctx, entity.Query{Filter: filter.And(filter.PK("Sales"), filter.RowKeyRange(from, to))}) {
		if err != nil {
			return err
		}
		parts, err := keys.SplitCompound(r.Key)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %q -> %q\n", r.Key, parts)
	}
	return nil
}
