package backup_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
)

// The package doc's example is exactly what Export writes.
func TestWireFormatExample(t *testing.T) {
	const doc = `{"tablekit.backup":1}
{"PartitionKey":"p","RowKey":"1","Count":7,"Name":"Ann","Total@odata.type":"Edm.Double","Total":2.0}`
	tbl := newTable(t)
	d := entity.DynamicEntity{PartitionKey: "p", RowKey: "1"}
	d.Set("Name", "Ann").Set("Count", int32(7)).Set("Total", 2.0)
	if err := tbl.Insert(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := backup.Export(t.Context(), tbl, &buf, backup.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(lines(t, buf.Bytes()), "\n"); got != doc {
		t.Fatalf("Export wrote\n%s\nthe doc says\n%s", got, doc)
	}
}
