// Command keys shows the key builders of package keys at work, without a
// service: a log tail whose RowKeys sort newest first (design guide §6.7),
// a compound-key range over one employee's reviews (§6.6), a prefix range
// over a secondary index (§6.1), and buckets that spread writes (§6.12).
//
// The rows are sorted with keys.Compare, the order in which the Table
// service returns them, and filtered with the same ranges a query would
// send.
//
//	go run ./examples/keys
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "keys example:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	logTail(w)
	if err := compoundRange(w); err != nil {
		return err
	}
	prefixRange(w)
	buckets(w)
	givenTimes(w)
	return nil
}

// givenTimes keys orders by their own timestamps, one of them back-dated:
// the inverted ticks of each order's time and its id, so the newest comes
// first and two orders of the same instant both keep their keys. A
// Sequencer is for events stamped now: it never goes back, so it would key
// the back-dated order as the latest time it gave.
func givenTimes(w io.Writer) {
	fmt.Fprintln(w, "== given timestamps: inverted ticks of the record's own time + its id")
	march := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	orders := []struct {
		id     string
		placed time.Time
	}{
		{"A-1001", march},
		{"A-1002", march},                    // the same instant
		{"A-0999", march.AddDate(0, 0, -10)}, // back-dated: entered late
	}
	type row struct{ rowKey, id string }
	var rows []row
	for _, o := range orders {
		rows = append(rows, row{keys.Compound(keys.InvertedTicks(o.placed), o.id), o.id})
	}
	slices.SortFunc(rows, func(a, b row) int { return keys.Compare(a.rowKey, b.rowKey) })
	for _, r := range rows {
		parts, _ := keys.SplitCompound(r.rowKey)
		t, _ := keys.ParseInvertedTicks(parts[0])
		fmt.Fprintf(w, "  %s  %s  %s\n", r.rowKey, t.Format(time.DateTime), r.id)
	}
	var seq keys.Sequencer
	seq.Next(march)
	wrong, _ := seq.Next(orders[2].placed)
	fmt.Fprintf(w, "  (a Sequencer would have keyed A-0999 at %s, not %s)\n", wrong.Format(time.DateTime), orders[2].placed.Format(time.DateTime))
}

// logTail writes log entries with inverted-ticks RowKeys, some in the same
// tick, and reads the three newest the way "$top=3" would.
func logTail(w io.Writer) {
	fmt.Fprintln(w, "== log tail (§6.7): RowKey = inverted ticks, newest first")
	start := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	var seq keys.Sequencer
	type entry struct{ rowKey, message string }
	var table []entry
	for i, msg := range []string{"service started", "request 1", "request 2", "request 3 (same tick)", "shutdown"} {
		at := start.Add(time.Duration(i) * time.Second)
		if i == 3 {
			at = start.Add(2 * time.Second) // same instant as request 2
		}
		t, n := seq.Next(at)
		table = append(table, entry{keys.InvertedTicksSeq(t, n), msg})
	}
	slices.SortFunc(table, func(a, b entry) int { return keys.Compare(a.rowKey, b.rowKey) })
	for i, e := range table[:3] {
		t, n, _ := keys.ParseInvertedTicksSeq(e.rowKey)
		fmt.Fprintf(w, "  %d. %s  %s  (#%d in its tick)  %s\n", i+1, e.rowKey, t.Format(time.TimeOnly), n, e.message)
	}
	fmt.Fprintf(w, "  plain .NET-compatible key for %s: %s\n", start.Format(time.RFC3339), keys.InvertedTicks(start))
}

// compoundRange stores review rows under compound RowKeys and selects one
// employee's reviews with CompoundPrefix.
func compoundRange(w io.Writer) error {
	fmt.Fprintln(w, "== compound key range (§6.6): every review of employee 000123")
	var rows []string
	for _, r := range [][]string{
		{"empid", keys.Pad(123, 6), "2012"},
		{"empid", keys.Pad(123, 6), "2013"},
		{"empid", keys.Pad(1230, 6), "2012"},
		{"empid", keys.Pad(124, 6), "2012"},
		{"empid", keys.Pad(12, 6), "2014"},
		{"name", "O'Brien, Mary", "2012"}, // a part with a space and a quote
	} {
		k, err := keys.CompoundChecked(r...)
		if err != nil {
			return err
		}
		rows = append(rows, k)
	}
	slices.SortFunc(rows, keys.Compare)

	from, to := keys.CompoundPrefix("empid", keys.Pad(123, 6))
	fmt.Fprintf(w, "  filter: PartitionKey eq 'Sales' and %s\n", rowKeyRange(from, to))
	fmt.Fprintln(w, "  the partition in service order, * = returned by the filter:")
	for _, k := range rows {
		mark := " "
		if keys.Compare(from, k) <= 0 && keys.Compare(k, to) < 0 {
			mark = "*"
		}
		parts, err := keys.SplitCompound(k)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s %-26q -> %q\n", mark, k, parts)
	}
	from, to = keys.CompoundPrefix("name", "O'Brien, Mary")
	fmt.Fprintf(w, "  quotes are doubled in filters: %s\n", rowKeyRange(from, to))
	return nil
}

// prefixRange selects the email index entries that start with "email_j".
func prefixRange(w io.Writer) {
	fmt.Fprintln(w, "== prefix range (§6.1): index entries email_j…")
	rows := []string{"email_adams@contoso.com", "email_jones@contoso.com", "email_jonesj@contoso.com", "email_kim@contoso.com", "empid_000223"}
	from, to := keys.PrefixRange("email_j")
	fmt.Fprintf(w, "  filter: %s\n", rowKeyRange(from, to))
	for _, k := range rows {
		if keys.Compare(from, k) <= 0 && keys.Compare(k, to) < 0 {
			fmt.Fprintln(w, "  ", k)
		}
	}
}

// buckets spreads one day's writes over four partitions and lists the
// partitions a reader fans out to.
func buckets(w io.Writer) {
	fmt.Fprintln(w, "== buckets (§6.12): spread writes over 4 partitions")
	counts := map[string]int{}
	for i := range 1000 {
		counts[keys.Bucket(fmt.Sprintf("order-%06d", i), 4)]++
	}
	var ids []string
	for b := range keys.Buckets(4) {
		ids = append(ids, fmt.Sprintf("20140731-%s: %d", b, counts[b]))
	}
	fmt.Fprintln(w, "  ", strings.Join(ids, ", "))
}

// rowKeyRange is the typed filter of a key range, as its $filter text.
func rowKeyRange(from, to string) string {
	f, err := filter.RowKeyRange(from, to).Build()
	if err != nil {
		return "invalid range: " + err.Error()
	}
	return f
}
