package main

import (
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/cmd/tablekit/internal/keyspace"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

const queryUsage = `--table NAME [--filter EXPR] [--select A,B] [--top N] [--format jsonl|csv|table]

Prints the entities a filter selects (all, without one). The filter is read
into package filter's expression — every literal typed and escaped, every
name checked — and what reaches the service is what package filter builds.
A filter that makes the service scan the table, or another trap of the
design guide, is named on stderr.

Formats: jsonl prints each entity as the service's JSON with its type
annotations (the lines of an export); csv is Storage Explorer's typed CSV;
table is aligned columns, long values cut on a terminal. The default is
table on a terminal, else jsonl. csv and table hold the rows in memory to
find the columns, unless --select names them.`

const queryExample = `  tablekit query --table Orders --filter "PartitionKey eq 'Sales' and Total ge 100.0" --select Total,Status --top 20
  tablekit query --table Orders --pk Sales --format csv > sales.csv`

func runQuery(c *cli, args []string) int {
	fs := c.flags(queryUsage, queryExample)
	var cf connFlags
	cf.register(fs, "", "table's")
	table := fs.String("table", "", "table to read")
	filterText := fs.String("filter", "", "OData filter, such as \"PartitionKey eq 'Sales' and Age ge 30\"")
	pk := fs.String("pk", "", "only this PartitionKey (with --filter: both)")
	fromPK := fs.String("from-pk", "", "first PartitionKey (inclusive)")
	toPK := fs.String("to-pk", "", "PartitionKey to stop before (exclusive)")
	sel := fs.String("select", "", "comma-separated properties to return (PartitionKey and RowKey always come)")
	top := fs.Int("top", 0, "at most this many entities (0: all)")
	format := fs.String("format", "", "jsonl, csv or table (default: table on a terminal, else jsonl)")
	if code, done := c.parse(fs, args, 0); done {
		return code
	}
	if *format == "" {
		*format = "jsonl"
		if c.outTTY {
			*format = "table"
		}
	}
	if *format != "jsonl" && *format != "csv" && *format != "table" {
		return c.fail(usagef("--format %q: want jsonl, csv or table", *format))
	}
	if *top < 0 {
		return c.fail(usagef("--top cannot be negative"))
	}
	user, err := parseFilter(*filterText)
	if err != nil {
		return c.fail(err)
	}
	pkSet := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "pk" {
			pkSet = true
		}
	})
	if pkSet {
		user = filter.And(filter.PK(*pk), user)
	}
	r := keyspace.Range{From: *fromPK, To: *toPK}
	if r.Empty() {
		return c.fail(usagef("--to-pk %q is not above --from-pk %q", *toPK, *fromPK))
	}
	user = rangeFilter(user, r)
	if _, err := user.Build(); err != nil {
		return c.fail(err)
	}
	if *filterText != "" {
		for _, w := range user.Plan().Warnings {
			c.say("note: %s", w.Message)
		}
	}
	columns := splitList(*sel)
	cn, err := c.connect(&cf, true)
	if err != nil {
		return c.fail(err)
	}
	tbl, err := c.table(cn, tableName(cn, *table))
	if err != nil {
		return c.fail(err)
	}
	q := entity.Query{Filter: user, Select: columns, Limit: *top, ContinueOnRowError: true}
	var rows []entity.DynamicEntity
	var bad int
	var n int64
	var qerr error
	for d, err := range tbl.Query(c.ctx, q) {
		if err != nil {
			if re, ok := err.(*entity.RowError); ok {
				bad++
				c.itemFailed("not read", 0, re.PartitionKey, re.RowKey, re)
				continue
			}
			qerr = err
			break
		}
		n++
		if *format != "jsonl" {
			rows = append(rows, d)
			continue
		}
		line, err := entity.MarshalStored(&d)
		if err != nil {
			bad++
			c.itemFailed("not printed", 0, d.PartitionKey, d.RowKey, err)
			continue
		}
		if _, err := c.data.Write(append(line, '\n')); err != nil {
			return c.fail(fmt.Errorf("write: %w", err))
		}
	}
	if qerr == nil {
		switch *format {
		case "csv":
			cols := columns
			if len(cols) == 0 {
				cols = propertyColumns(rows)
			}
			qerr = backup.WriteCSV(c.data, cols, func(yield func(entity.DynamicEntity, error) bool) {
				for _, r := range rows {
					if !yield(r, nil) {
						return
					}
				}
			})
		case "table":
			cols := columns
			if len(cols) == 0 {
				cols = propertyColumns(rows)
			}
			qerr = writeTable(c.data, cols, rows, c.outTTY)
		}
	}
	if qerr != nil {
		if c.stopped() {
			return c.interrupted(fmt.Sprintf("%d entities printed", n), "", "")
		}
		return c.fail(qerr)
	}
	c.summary(map[string]any{"command": "query", "status": map[bool]string{true: "partial", false: "done"}[bad > 0], "entities": n, "failed": bad, "transactions": c.meter.Snapshot().Total()}, "", true)
	if bad > 0 {
		return exitPartial
	}
	return exitOK
}

// propertyColumns is the union of the rows' property names, in byte order.
func propertyColumns(rows []entity.DynamicEntity) []string {
	seen := map[string]bool{}
	var cols []string
	for _, r := range rows {
		for k := range r.Properties {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	slices.Sort(cols)
	return cols
}

// writeTable writes rows as aligned columns; on a terminal long values are
// cut.
func writeTable(w io.Writer, cols []string, rows []entity.DynamicEntity, cut bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := append([]string{"PartitionKey", "RowKey", "Timestamp"}, cols...)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		cells := []string{cell(r.PartitionKey, cut), cell(r.RowKey, cut), r.Timestamp.UTC().Format(time.RFC3339)}
		for _, col := range cols {
			v, ok := r.Properties[col]
			if !ok {
				cells = append(cells, "")
				continue
			}
			cells = append(cells, cell(formatValue(v), cut))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// cell makes a value safe for one aligned cell: control characters and
// tabs escaped, and at most 40 characters on a terminal.
func cell(s string, cut bool) string {
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == utf8.RuneError }) {
		q := strconv.Quote(s)
		s = q[1 : len(q)-1]
	}
	if cut && utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:39]) + "…"
	}
	return s
}

func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case time.Time:
		return x.UTC().Format("2006-01-02T15:04:05.0000000Z")
	case uuid.UUID:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}
