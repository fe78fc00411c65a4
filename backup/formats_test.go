package backup_test

import (
	"bytes"
	"errors"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
)

// TestReadCSVDelimiters reads and imports one typed CSV written with each
// delimiter Storage Explorer exports with — comma, semicolon (the list
// separator of many locales), tab — with a byte order mark and CR LF, and
// quoted cells that hold the other delimiters: each gives the same
// entities, stored with their types (read back raw).
func TestReadCSVDelimiters(t *testing.T) {
	rows := [][]string{
		{"PartitionKey", "RowKey", "Timestamp", "Name", "Name@type", "N", "N@type", "D", "D@type"},
		{"p", "1", "2025-09-22T09:45:35.2743359Z", `"a,b;c` + "\t" + `d"`, "String", "7", "Int32", "2.5", "Double"},
		{"p", "2", "", "plain", "", "-8", "", "", ""},
		{`"q;,"`, "3", "", `""`, "String", "5000000000", "Int64", "9223372036854776000", "Double"},
	}
	var want map[string]string
	for _, sep := range []string{",", ";", "\t"} {
		var b strings.Builder
		b.WriteString("\ufeff")
		for _, r := range rows {
			b.WriteString(strings.Join(r, sep) + "\r\n")
		}
		in := b.String()
		var got []entity.DynamicEntity
		for d, err := range backup.ReadCSV(strings.NewReader(in)) {
			if err != nil {
				t.Fatalf("delimiter %q: %v", sep, err)
			}
			got = append(got, d)
		}
		if len(got) != 3 {
			t.Fatalf("delimiter %q: %d entities, want 3", sep, len(got))
		}
		if v := got[0].Properties["Name"]; v != "a,b;c\td" {
			t.Errorf("delimiter %q: Name %#v", sep, v)
		}
		if v := got[1].Properties["N"]; v != int32(-8) {
			t.Errorf("delimiter %q: row 2's N %#v, want Int32 -8 (its column's type)", sep, v)
		}
		if got[2].PartitionKey != "q;," || got[2].Properties["N"] != int64(5000000000) || got[2].Properties["D"] != float64(1<<63) {
			t.Errorf("delimiter %q: row 3 %q %#v", sep, got[2].PartitionKey, got[2].Properties)
		}
		tbl := newTable(t)
		sum, err := backup.ImportCSV(t.Context(), tbl, strings.NewReader(in), backup.ImportOptions{})
		if err != nil || sum.Written != 3 {
			t.Fatalf("delimiter %q: import %+v, %v", sep, sum, err)
		}
		stored := rawRows(t, tbl)
		if want == nil {
			want = stored
			continue
		}
		if !maps.Equal(stored, want) {
			diff(t, "delimiter "+sep, stored, want)
		}
	}
	if !strings.Contains(want["p\x001"], `"N@odata.type":"Edm.Int32"`) && !strings.Contains(want["p\x001"], `"N":7`) {
		t.Errorf("row 1 stored as %s", want["p\x001"])
	}
}

// TestReadCSVRefusesAnInexactDouble: a Double cell that is an integer no
// Double holds exactly fails its record with a *LineError, and the
// records around it are read; the shortest spelling of a Double is read
// as that Double.
func TestReadCSVRefusesAnInexactDouble(t *testing.T) {
	in := "PartitionKey,RowKey,D,D@type\np,1,9007199254740992,Double\np,2,9223372036854775807,Double\np,3,9223372036854776000,Double\n"
	var good []float64
	var bad []int
	for d, err := range backup.ReadCSV(strings.NewReader(in)) {
		var le *backup.LineError
		if errors.As(err, &le) {
			bad = append(bad, le.Line)
			continue
		}
		good = append(good, d.Properties["D"].(float64))
	}
	if len(bad) != 1 || bad[0] != 3 || len(good) != 2 || good[0] != 1<<53 || good[1] != 1<<63 {
		t.Errorf("refused lines %v, read %v: want line 3 refused, 2^53 and 2^63 read", bad, good)
	}
}

// TestImportCRLFLines imports a backup whose lines end in CR LF (and one
// in LF: a file edited in two places): every entity is stored, a String
// holding an escaped CR LF keeps it.
func TestImportCRLFLines(t *testing.T) {
	body := `{"tablekit.backup":1}` + "\r\n" +
		`{"PartitionKey":"p","RowKey":"1","S":"a\r\nb","N":7}` + "\r\n" +
		`{"PartitionKey":"p","RowKey":"2","L@odata.type":"Edm.Int64","L":"9223372036854775807"}` + "\n" +
		`{"PartitionKey":"p","RowKey":"3","D@odata.type":"Edm.Double","D":2.0}` + "\r\n"
	tbl := newTable(t)
	sum, err := backup.Import(t.Context(), tbl, bytes.NewReader(gzipped(body)), backup.ImportOptions{})
	if err != nil || sum.Written != 3 || len(sum.Failed) != 0 {
		t.Fatalf("import: %+v, %v", sum, err)
	}
	for rk, want := range map[string]any{"1": "a\r\nb", "2": int64(math.MaxInt64), "3": 2.0} {
		d, err := tbl.Get(t.Context(), "p", rk)
		if err != nil {
			t.Fatal(err)
		}
		var got any
		for k, v := range d.Properties {
			if k != "N" {
				got = v
			}
		}
		if got != want {
			t.Errorf("row %s: %#v, want %#v", rk, got, want)
		}
	}
}

// TestImportUnannotatedIntegers imports a backup whose numbers carry no
// annotation, at the ends of Int32, 2^53 and Int64: an integer in Int32
// range is stored as an Int32, any other as the Double it is, and one that
// no Double holds exactly fails its line alone with a *LineError, naming
// it — never stored rounded. The table is read back through a second,
// plain view.
func TestImportUnannotatedIntegers(t *testing.T) {
	cases := []struct {
		lit  string
		want any // nil: the line fails
	}{
		{"2147483647", int32(math.MaxInt32)},
		{"-2147483648", int32(math.MinInt32)},
		{"2147483648", float64(1 << 31)},
		{"-2147483649", float64(-1<<31 - 1)},
		{"9007199254740992", float64(1 << 53)},
		{"9007199254740993", nil},
		{"9223372036854775807", nil},
		{"9223372036854775808", float64(1 << 63)},
		{"9223372036854776000", float64(1 << 63)},
		{"-9223372036854775808", float64(-1 << 63)},
		{"-9223372036854775809", nil},
	}
	var b strings.Builder
	b.WriteString(`{"tablekit.backup":1}` + "\n")
	for i, c := range cases {
		b.WriteString(`{"PartitionKey":"p","RowKey":"` + string(rune('a'+i)) + `","N":` + c.lit + "}\n")
	}
	tbl := newTable(t)
	sum, err := backup.Import(t.Context(), tbl, bytes.NewReader(gzipped(b.String())), backup.ImportOptions{})
	var ie *backup.ImportError
	if !errors.As(err, &ie) {
		t.Fatalf("import: %+v, %v, want an *ImportError naming the lines refused", sum, err)
	}
	failed := map[int]bool{}
	for _, f := range sum.Failed {
		var le *backup.LineError
		if !errors.As(f.Err, &le) || !strings.Contains(f.Err.Error(), "no Double holds exactly") {
			t.Errorf("line %d: %v, want a *LineError saying no Double holds it", f.Line, f.Err)
		}
		failed[f.Line] = true
	}
	for i, c := range cases {
		line, rk := i+2, string(rune('a'+i))
		d, err := tbl.Get(t.Context(), "p", rk)
		if c.want == nil {
			if !failed[line] || !errors.Is(err, entity.ErrNotFound) {
				t.Errorf("%s: line %d failed %v, stored %v (%v): want it refused, not stored", c.lit, line, failed[line], d.Properties, err)
			}
			continue
		}
		if failed[line] || err != nil || d.Properties["N"] != c.want {
			t.Errorf("%s: stored %#v (%v, failed %v), want %#v", c.lit, d.Properties["N"], err, failed[line], c.want)
		}
	}
}
