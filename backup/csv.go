package backup

import (
	"context"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
)

const csvTime = "2006-01-02T15:04:05.0000000Z"

// typeName is the Storage Explorer type name of a canonical value.
func typeName(v any) (string, bool) {
	switch v.(type) {
	case string:
		return "String", true
	case int32:
		return "Int32", true
	case int64:
		return "Int64", true
	case float64:
		return "Double", true
	case bool:
		return "Boolean", true
	case time.Time:
		return "DateTime", true
	case uuid.UUID:
		return "Guid", true
	case []byte:
		return "Binary", true
	}
	return "", false
}

func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		switch {
		case math.IsNaN(x):
			return "NaN"
		case math.IsInf(x, 1):
			return "Infinity"
		case math.IsInf(x, -1):
			return "-Infinity"
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.UTC().Format(csvTime)
	case uuid.UUID:
		return x.String()
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	}
	return fmt.Sprint(v)
}

// parseValue reads s as the type named typ ("Edm." prefix optional).
func parseValue(typ, s string) (any, error) {
	switch strings.TrimPrefix(typ, "Edm.") {
	case "String":
		return s, nil
	case "Int32":
		n, err := strconv.ParseInt(s, 10, 32)
		return int32(n), err
	case "Int64":
		return strconv.ParseInt(s, 10, 64)
	case "Double":
		switch s {
		case "NaN":
			return math.NaN(), nil
		case "Infinity", "INF":
			return math.Inf(1), nil
		case "-Infinity", "-INF":
			return math.Inf(-1), nil
		}
		x, err := strconv.ParseFloat(s, 64)
		if (err == nil || errors.Is(err, strconv.ErrRange)) && !keepsInteger(s, x) {
			return nil, errInexact
		}
		return x, err
	case "Boolean":
		return strconv.ParseBool(s)
	case "DateTime":
		t, err := time.Parse(time.RFC3339Nano, s)
		return t.UTC(), err
	case "Guid":
		return uuid.Parse(s)
	case "Binary":
		return base64.StdEncoding.DecodeString(s)
	}
	return nil, fmt.Errorf("unknown type %q", typ)
}

// errInexact refuses an integer that the Double it would become changes,
// as entity.Unmarshal does a backup line's.
var errInexact = errors.New("an integer that no Double holds exactly: type a 64-bit integer Int64")

// keepsInteger reports whether x, the Double that the number s parses to,
// is the number s says: always for a number with a fraction or an
// exponent; for an integer, when x is that integer exactly or s is x's
// shortest spelling (9223372036854776000 for 2^63, as JavaScript writes
// it) — the rule of entity.Unmarshal.
func keepsInteger(s string, x float64) bool {
	digits := strings.TrimPrefix(s, "-")
	if len(digits) <= 15 || strings.ContainsAny(digits, ".eE") {
		return true
	}
	if strconv.FormatFloat(x, 'f', -1, 64) == s {
		return true
	}
	n, ok := new(big.Int).SetString(strings.TrimPrefix(s, "+"), 10)
	if !ok {
		return false
	}
	f, acc := new(big.Float).SetInt(n).Float64()
	return acc == big.Exact && f == x
}

// WriteCSV writes rows as Storage Explorer's typed CSV with the property
// columns given, in that order (a property of a row that columns does not
// name is an error).
func WriteCSV(w io.Writer, columns []string, rows iter.Seq2[entity.DynamicEntity, error]) error {
	if w == nil {
		return &ConfigError{Field: "w", Reason: ReasonNil}
	}
	cw := csv.NewWriter(w)
	head := []string{"PartitionKey", "RowKey", "Timestamp"}
	index := make(map[string]int, len(columns))
	for i, c := range columns {
		if c == "PartitionKey" || c == "RowKey" || c == "Timestamp" || strings.HasSuffix(c, "@type") {
			return &ConfigError{Field: "columns", Reason: fmt.Sprintf("%q is reserved in the CSV", c)}
		}
		if _, dup := index[c]; dup {
			return &ConfigError{Field: "columns", Reason: fmt.Sprintf("%q twice", c)}
		}
		index[c] = i
		head = append(head, c, c+"@type")
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	if rows == nil { // no rows: the header alone
		cw.Flush()
		return cw.Error()
	}
	rec := make([]string, len(head))
	for d, err := range rows {
		if err != nil {
			return err
		}
		clear(rec)
		rec[0], rec[1] = d.PartitionKey, d.RowKey
		if !d.Timestamp.IsZero() {
			rec[2] = d.Timestamp.UTC().Format(csvTime)
		}
		for name, v := range d.Properties {
			i, ok := index[name]
			if !ok {
				return fmt.Errorf("backup: %s: property %q has no column", entityKeys(d.PartitionKey, d.RowKey), name)
			}
			typ, ok := typeName(v)
			if !ok {
				return fmt.Errorf("backup: %s: property %q has the Go type %T, not one of the eight EDM types", entityKeys(d.PartitionKey, d.RowKey), name, v)
			}
			rec[3+2*i], rec[4+2*i] = formatValue(v), typ
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV reads Storage Explorer's typed CSV (or an untyped one: a column
// without its "@type" partner is String), its cells separated by commas,
// semicolons or tabs — the delimiters Storage Explorer exports with (the
// comma, the list separator of the user's locale, or the tab): the
// delimiter is the one under which the header row names both a
// PartitionKey and a RowKey column (TestReadCSVDelimiters). A value whose
// type cell is empty takes the type given for its column in an earlier
// row, else String; an empty value with an empty type is no property. Timestamp is ignored, and
// so is a UTF-8 byte order mark before the header. A record that cannot be
// read — a value that does not parse as its type, an unknown type name, a
// record with another number of fields than the header — is yielded as a
// *LineError, with the keys it has, and the sequence goes on with the next
// record: the caller decides whether to stop. Input that is not CSV, and a
// header without PartitionKey and RowKey or with a column twice, yield a
// *LineError and end the sequence.
func ReadCSV(r io.Reader) iter.Seq2[entity.DynamicEntity, error] {
	return func(yield func(entity.DynamicEntity, error) bool) {
		if r == nil {
			yield(entity.DynamicEntity{}, &ConfigError{Field: "r", Reason: ReasonNil})
			return
		}
		for l, err := range readCSV(r) {
			if err != nil {
				yield(l.d, err)
				return
			}
			if !yield(l.d, l.err) {
				return
			}
		}
	}
}

// bom is the UTF-8 byte order mark some tools write before a CSV.
const bom = "\ufeff"

func readCSV(r io.Reader) iter.Seq2[line, error] {
	return func(yield func(line, error) bool) {
		cr := newCSVReader(r)
		cr.detect()
		head, err := cr.Read()
		if err != nil {
			if err == io.EOF {
				err = errors.New("empty input: no header row")
			}
			yield(line{}, &LineError{Line: 1, Err: err})
			return
		}
		head[0] = strings.TrimPrefix(head[0], bom)
		type column struct {
			name  string
			value int    // index of the value
			typ   int    // index of the type, -1 for none
			last  string // the type of the column's last typed cell
		}
		pk, rk := -1, -1
		var cols []column
		typeOf := map[string]int{}
		seen := map[string]bool{}
		for i, h := range head {
			if seen[h] {
				yield(line{}, &LineError{Line: 1, Err: fmt.Errorf("the header has the column %q twice", h)})
				return
			}
			seen[h] = true
			if name, ok := strings.CutSuffix(h, "@type"); ok {
				typeOf[name] = i
			}
		}
		for i, h := range head {
			switch {
			case strings.HasSuffix(h, "@type"), h == "Timestamp":
			case h == "PartitionKey":
				pk = i
			case h == "RowKey":
				rk = i
			default:
				t, ok := typeOf[h]
				if !ok {
					t = -1
				}
				cols = append(cols, column{name: h, value: i, typ: t})
			}
		}
		if pk < 0 || rk < 0 {
			yield(line{}, &LineError{Line: 1, Err: errors.New("the header has no PartitionKey or RowKey column")})
			return
		}
	records:
		for n := 2; ; n++ {
			rec, err := cr.Read()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(line{}, &LineError{Line: n, Err: err})
				return
			}
			if len(rec) != len(head) {
				l := line{n: n, err: &LineError{Line: n, Err: fmt.Errorf("%d fields, the header has %d", len(rec), len(head))}}
				if pk < len(rec) && rk < len(rec) {
					l.d = entity.DynamicEntity{PartitionKey: rec[pk], RowKey: rec[rk]}
				}
				if !yield(l, nil) {
					return
				}
				continue
			}
			d := entity.DynamicEntity{PartitionKey: rec[pk], RowKey: rec[rk]}
			for i := range cols {
				c := &cols[i]
				val, typ := rec[c.value], ""
				if c.typ >= 0 {
					typ = rec[c.typ]
				}
				if typ == "" {
					if val == "" {
						continue
					}
					typ = c.last
					if typ == "" {
						typ = "String"
					}
				}
				v, err := parseValue(typ, val)
				if err != nil {
					l := line{n: n, d: entity.DynamicEntity{PartitionKey: d.PartitionKey, RowKey: d.RowKey},
						err: &LineError{Line: n, Err: fmt.Errorf("column %q: %w", c.name, err)}}
					if !yield(l, nil) {
						return
					}
					continue records
				}
				c.last = typ
				d.Set(c.name, v)
			}
			if !yield(line{n: n, d: d}, nil) {
				return
			}
		}
	}
}

// ExportCSV writes the entities of tbl matching f (empty: all) to w as
// Storage Explorer's typed CSV, properties in byte order of their names.
// It reads the table twice: once to learn the columns, once to write.
func ExportCSV(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], w io.Writer, f filter.Expr) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if tbl == nil || w == nil {
		return &ConfigError{Field: "table or writer", Reason: ReasonNil}
	}
	if tbl.Protected() {
		return errEncrypted("")
	}
	if _, err := f.Build(); err != nil {
		return &ConfigError{Field: "filter", Reason: err.Error()}
	}
	seen := map[string]bool{}
	for d, err := range tbl.Query(ctx, entity.Query{Filter: f}) {
		if err != nil {
			return fmt.Errorf("backup: read columns: %w", err)
		}
		for name := range d.Properties {
			seen[name] = true
		}
	}
	cols := slices.Sorted(func(yield func(string) bool) {
		for k := range seen {
			if !yield(k) {
				return
			}
		}
	})
	return WriteCSV(w, cols, tbl.Query(ctx, entity.Query{Filter: f}))
}

// ImportCSV reads Storage Explorer's typed CSV (see ReadCSV) and writes its
// entities to tbl as Import writes a backup's.
func ImportCSV(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], r io.Reader, opts ImportOptions) (ImportSummary, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return ImportSummary{}, err
	}
	if tbl == nil || r == nil {
		return ImportSummary{}, &ConfigError{Field: "table or reader", Reason: ReasonNil}
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return ImportSummary{}, err
	}
	cr := &countingReader{r: r}
	return write(ctx, tbl, readCSV(cr), cr, opts)
}
