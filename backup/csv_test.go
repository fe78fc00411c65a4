package backup_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

// A table exported as Storage Explorer's typed CSV and imported into an
// empty table holds the same entities, every EDM type kept: both tables
// give the same backup bytes.
func TestCSVRoundTripKeepsEveryType(t *testing.T) {
	n := sized(400)
	src := newTable(t)
	load(t, src, n)
	var csvOut bytes.Buffer
	if err := backup.ExportCSV(t.Context(), src, &csvOut, filter.Expr{}); err != nil {
		t.Fatal(err)
	}
	head := strings.SplitN(csvOut.String(), "\n", 2)[0]
	if !strings.HasPrefix(head, "PartitionKey,RowKey,Timestamp,B,B@type,Bin,Bin@type,") {
		t.Fatalf("header %q", head)
	}
	dst := newTable(t)
	sum, err := backup.ImportCSV(t.Context(), dst, bytes.NewReader(csvOut.Bytes()), backup.ImportOptions{Mode: backup.Insert})
	if err != nil || sum.Written != int64(n) {
		t.Fatalf("import: %+v %v", sum, err)
	}
	if a, b := export(t, src, backup.ExportOptions{}), export(t, dst, backup.ExportOptions{}); !bytes.Equal(a, b) {
		t.Fatal("the table imported from CSV differs from the exported one")
	}
}

// What Storage Explorer 1.40 writes when it leaves the types of all rows
// but the first empty: the column's earlier type holds; an empty value
// with no type is no property; "Edm."-prefixed names are read too.
func TestReadCSVStorageExplorerSample(t *testing.T) {
	const in = "PartitionKey,RowKey,Timestamp,aggType,aggType@type,alarmStatus,alarmStatus@type,date,date@type,big,big@type\n" +
		"1979671,1000,2025-09-22T09:45:35.2743359Z,2,Int32,,String,2025-09-22T09:45:35.2743359Z,DateTime,5000000000,Edm.Int64\n" +
		"1979671,11,,4,,ACK,,,,,\n"
	var got []entity.DynamicEntity
	for d, err := range backup.ReadCSV(strings.NewReader(in)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	if len(got) != 2 {
		t.Fatalf("%d rows", len(got))
	}
	if v, ok := entity.Prop[int32](&got[1], "aggType"); !ok || v != 4 {
		t.Errorf("row 2 aggType = %#v, want Int32 4 (the type of row 1)", got[1].Properties["aggType"])
	}
	if v, ok := entity.Prop[string](&got[0], "alarmStatus"); !ok || v != "" {
		t.Errorf("row 1 alarmStatus = %#v, want the empty String", got[0].Properties["alarmStatus"])
	}
	if _, ok := got[1].Properties["date"]; ok {
		t.Errorf("row 2 has a date although its cell is empty")
	}
	if v, ok := entity.Prop[int64](&got[0], "big"); !ok || v != 5000000000 {
		t.Errorf("big = %#v", got[0].Properties["big"])
	}
}

func TestReadCSVRefusesWithTheLine(t *testing.T) {
	for name, c := range map[string]struct {
		in   string
		line int
	}{
		"no keys":      {"A,A@type\nx,String\n", 1},
		"bad int":      {"PartitionKey,RowKey,N,N@type\np,r,x,Int32\n", 2},
		"unknown type": {"PartitionKey,RowKey,N,N@type\np,r,1,Decimal\n", 2},
		"short record": {"PartitionKey,RowKey,N,N@type\np,r\n", 2},
		"empty":        {"", 1},
	} {
		var err error
		for _, e := range backup.ReadCSV(strings.NewReader(c.in)) {
			if e != nil {
				err = e
			}
		}
		var le *backup.LineError
		if !errors.As(err, &le) || le.Line != c.line {
			t.Errorf("%s: %v, want a LineError at line %d", name, err, c.line)
		}
	}
}

// A record that cannot be read fails alone: ReadCSV yields its error, with
// the line and keys, and goes on with the next record; ImportCSV writes
// every other record and names the bad ones. A byte order mark before the
// header is read past; a column named twice is refused before any record.
func TestCSVOneBadRecordAmongMany(t *testing.T) {
	const in = "\ufeffPartitionKey,RowKey,N,N@type\n" +
		"p,1,1,Int32\n" +
		"p,2,two,Int32\n" +
		"p,3,3,Decimal\n" +
		"p,4\n" +
		"p,5,5,Int32\n"
	var keys []string
	var lines []int
	for d, err := range backup.ReadCSV(strings.NewReader(in)) {
		var le *backup.LineError
		if err != nil {
			if !errors.As(err, &le) {
				t.Fatalf("record error %v is not a LineError", err)
			}
			lines = append(lines, le.Line)
			continue
		}
		keys = append(keys, d.RowKey)
	}
	if strings.Join(keys, ",") != "1,5" || len(lines) != 3 || lines[0] != 3 || lines[2] != 5 {
		t.Fatalf("read %v, errors at lines %v; want 1 and 5 read, lines 3, 4, 5 refused", keys, lines)
	}
	dst := newTable(t)
	sum, err := backup.ImportCSV(t.Context(), dst, strings.NewReader(in), backup.ImportOptions{})
	var ie *backup.ImportError
	if !errors.As(err, &ie) || ie.Failed != 3 || sum.Written != 2 || count(t, dst) != 2 {
		t.Fatalf("import: %+v %v, want 2 written and 3 failed", sum, err)
	}
	for i, f := range sum.Failed {
		if f.PartitionKey != "p" || f.RowKey != fmt.Sprint(i+2) || !errors.Is(f.Err, backup.ErrFormat) {
			t.Errorf("failure %d: %+v", i, f)
		}
	}
	for _, err := range backup.ReadCSV(strings.NewReader("PartitionKey,RowKey,N,N\np,1,a,b\n")) {
		var le *backup.LineError
		if !errors.As(err, &le) || le.Line != 1 {
			t.Fatalf("a column twice: %v, want a LineError at line 1", err)
		}
	}
}
