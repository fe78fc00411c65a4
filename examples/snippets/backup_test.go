package snippets

import (
	"bytes"
	"context"
	"testing"

	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

// TestBackup runs README's backup block: a table exported in two ranges
// with checkpoints, imported into another, and written as CSV.
func TestBackup(t *testing.T) {
	ctx := context.Background()
	tbl, err := entity.NewTable[entity.DynamicEntity](env.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	other, err := entity.NewTable[entity.DynamicEntity](env.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, pk := range []string{"a", "m", "z"} {
		d := entity.DynamicEntity{PartitionKey: pk, RowKey: "1"}
		if err := tbl.Insert(ctx, d.Set("N", int64(7))); err != nil {
			t.Fatal(err)
		}
	}
	var file, csvFile bytes.Buffer
	var saved []backup.Checkpoint
	save := func(c backup.Checkpoint) error { saved = append(saved, c); return nil }
	var sum backup.Summary
	var restored backup.ImportSummary
	err = func() (err error) {
		// readme:begin backup
		sum, err = backup.Export(ctx, tbl, &file, backup.ExportOptions{ // tbl: *entity.Table[entity.DynamicEntity]
			Ranges:     []backup.Range{{To: "m"}, {From: "m"}},             // read in parallel, written in order
			Checkpoint: func(c backup.Checkpoint) error { return save(c) }, // resume: truncate to c.Bytes, pass c.Token
		})
		if err != nil {
			return err
		}
		restored, err = backup.Import(ctx, other, &file, backup.ImportOptions{Mode: backup.Insert})
		if err != nil {
			return err
		}
		return backup.ExportCSV(ctx, tbl, &csvFile, filter.Expr{}) // Azure Storage Explorer's typed CSV
		// readme:end
	}()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Entities != 3 || restored.Written != 3 {
		t.Fatalf("exported %d, imported %d", sum.Entities, restored.Written)
	}
	got, err := other.Get(ctx, "m", "1")
	if err != nil || got.Properties["N"] != int64(7) {
		t.Fatalf("imported entity: %+v %v", got, err)
	}
	if len(saved) == 0 || !bytes.HasPrefix(csvFile.Bytes(), []byte("PartitionKey,RowKey,Timestamp,N,N@type\n")) {
		t.Fatalf("checkpoints %d, csv %q", len(saved), csvFile.String())
	}
}
