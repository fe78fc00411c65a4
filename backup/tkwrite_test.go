package backup_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
)

// tokenRows is a table whose rows carry write tokens (TkWrite), as rows of
// secondaryindex and indexentity do: inserted through a write-token view
// of the table, half of them then changed by Modify (a longer chain), and
// one row written without a token. Two partitions.
func tokenRows(t *testing.T) *entity.Table[entity.DynamicEntity] {
	t.Helper()
	src := newTable(t)
	tok := src.WithWriteTokens()
	for i := range 6 {
		d := entity.DynamicEntity{PartitionKey: partOf(i), RowKey: fmt.Sprintf("r%02d", i)}
		d.Set("N", int64(i)).Set("By", "backup")
		if err := tok.Insert(t.Context(), &d); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			if _, err := tok.Modify(t.Context(), d.PartitionKey, d.RowKey, func(e *entity.DynamicEntity) error {
				e.Set("N", int64(10*i))
				return nil
			}, entity.ModifyOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	plain := entity.DynamicEntity{PartitionKey: "a", RowKey: "plain"}
	plain.Set("N", int64(-1))
	if err := src.Insert(t.Context(), &plain); err != nil {
		t.Fatal(err)
	}
	return src
}

// An export of rows carrying TkWrite, imported into a new table, exports
// the same bytes, and the new table holds, read raw, the rows of the
// first, TkWrite included, in both modes; importing the backup again in
// Insert mode finds every row already there, no conflict.
func TestRoundTripKeepsWriteTokens(t *testing.T) {
	src := tokenRows(t)
	data := export(t, src, backup.ExportOptions{})
	if n := strings.Count(strings.Join(lines(t, data), "\n"), `"TkWrite":`); n != 6 {
		t.Fatalf("the backup holds %d TkWrite members, want 6:\n%s", n, lines(t, data))
	}
	wantRaw := rawRows(t, src)
	for _, mode := range []backup.Mode{backup.Upsert, backup.Insert} {
		t.Run(fmt.Sprintf("mode %d", mode), func(t *testing.T) {
			dst := newTable(t)
			if _, err := backup.Import(t.Context(), dst, bytes.NewReader(data), backup.ImportOptions{Mode: mode}); err != nil {
				t.Fatal(err)
			}
			if got := export(t, dst, backup.ExportOptions{}); !bytes.Equal(got, data) {
				t.Fatalf("export → import → export differs:\n%q\nwant\n%q", lines(t, got), lines(t, data))
			}
			if got := rawRows(t, dst); !maps.Equal(got, wantRaw) {
				t.Fatalf("the imported table holds, read raw, %q, want %q", got, wantRaw)
			}
			sum, err := backup.Import(t.Context(), dst, bytes.NewReader(data), backup.ImportOptions{Mode: backup.Insert})
			if err != nil || sum.Existing != 7 || sum.Written != 0 || len(sum.Conflicts) != 0 {
				t.Fatalf("a second import in Insert mode: %+v, %v; want 7 existing", sum, err)
			}
		})
	}
}

// An import of rows carrying TkWrite killed at every request, before it
// is sent and after the service executed it, and resumed from its last
// checkpoint, leaves the table holding the backup's rows, TkWrite
// included, in both modes and from the Storage Explorer CSV too; the
// resumed run reports no conflict.
func TestImportOfWriteTokensSurvivesACrashAtEveryRequest(t *testing.T) {
	src := tokenRows(t)
	data := export(t, src, backup.ExportOptions{})
	wantRaw := rawRows(t, src)
	for _, tc := range importCases(t, src, data) {
		mode, importer, data := tc.mode, tc.importer, tc.data
		t.Run(tc.name, func(t *testing.T) {
			crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
				dst := newTable(t)
				var done int64
				return crashtest.Run{
					Work: func(ctx context.Context, v *integration.Env) error {
						_, err := importer(ctx, viewOf(t, v, dst.Name()), bytes.NewReader(data), backup.ImportOptions{Mode: mode, SegmentEntities: 4,
							Checkpoint: func(c backup.ImportCheckpoint) error { done = c.Entities; return nil }})
						return err
					},
					Recover: func(ctx context.Context) error {
						sum, err := importer(ctx, dst, bytes.NewReader(data), backup.ImportOptions{Mode: mode, SegmentEntities: 4, ResumeAfter: done})
						if err == nil && (len(sum.Conflicts) > 0 || sum.Entities != 7) {
							err = fmt.Errorf("resumed import %+v", sum)
						}
						return err
					},
					Check: func(t *testing.T) {
						if got := rawRows(t, dst); !maps.Equal(got, wantRaw) {
							t.Fatalf("the table after a crash and a resumed import holds, read raw, %q, want %q", got, wantRaw)
						}
					},
				}
			}})
		})
	}
}
