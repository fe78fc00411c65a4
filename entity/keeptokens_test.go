package entity_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

// TestBulkWriteKeepsWriteTokens: BulkWrite with KeepWriteTokens stores the
// TkWrite each entity holds as it is, in insert and upsert modes, on a
// plain table and on one WithWriteTokens (which would start a new chain);
// without it the property is removed, so that a property bag read and
// written back never restores an old chain. Read back raw.
func TestBulkWriteKeepsWriteTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	plain, err := entity.NewTable[entity.DynamicEntity](env.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	const chain = "......BAyY97B3Qx2Lm8Pq"
	row := func(pk, rk string) entity.DynamicEntity {
		return entity.DynamicEntity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"Name": "n", "TkWrite": chain}}
	}
	for _, c := range []struct {
		name string
		tbl  *entity.Table[entity.DynamicEntity]
		mode entity.OpKind
		keep bool
		want string
	}{
		{"insert, kept", plain, entity.OpInsert, true, chain},
		{"upsert, kept", plain, entity.OpUpsertReplace, true, chain},
		{"tokens table, insert, kept", plain.WithWriteTokens(), entity.OpInsert, true, chain},
		{"insert, not kept", plain, entity.OpInsert, false, ""},
		{"upsert, not kept", plain, entity.OpUpsertMerge, false, ""},
	} {
		rows := []entity.DynamicEntity{row(c.name, "1"), row(c.name, "2")}
		if _, err := c.tbl.BulkWrite(ctx, rows, entity.BulkOptions{Mode: c.mode, KeepWriteTokens: c.keep}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, rk := range []string{"1", "2"} {
			resp, err := env.TableService.NewClient(plain.Name()).GetEntity(ctx, c.name, rk, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got entity.DynamicEntity
			if err := entity.Unmarshal(resp.Value, &got); err != nil {
				t.Fatal(err)
			}
			if v, _ := got.Properties["TkWrite"].(string); v != c.want || got.Properties["Name"] != "n" {
				t.Errorf("%s: stored %v, want TkWrite %q", c.name, got.Properties, c.want)
			}
		}
	}
}
