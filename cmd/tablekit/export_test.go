package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	blobsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/tablekit/tablekit/entity"
)

// An export, an import into an empty table of another account and an
// export of that table are byte-identical: to a file, to parts with a
// manifest, and through a blob.
func testExportImportExportIsByteIdentical(t *testing.T, s *source) {
	src, srcName, other := s.tbl, s.name, s.other
	// Several segments, and parts of a few of them each.
	seg, split := "90", "6KB"
	if full() {
		seg, split = "300", "20KB"
	}
	dir := t.TempDir()
	cs := env.ConnectionString
	first := filepath.Join(dir, "first.jsonl.gz")
	must(t, 0, "export", "--connection-string", cs, "--table", srcName, "--out", first, "--segment", seg)
	must(t, 0, "import", "--connection-string", other, "--table", "Copy1", "--in", first)
	second := filepath.Join(dir, "second.jsonl.gz")
	must(t, 0, "export", "--connection-string", other, "--table", "Copy1", "--out", second, "--segment", seg)
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if len(a) < 1000 || !bytes.Equal(a, b) {
		t.Fatalf("exports differ: %d and %d bytes", len(a), len(b))
	}
	sameRows(t, s.want, rawRows(t, other, "Copy1"))
	sameTyped(t, src, tableOf(t, other, "Copy1"))
	if _, err := os.Stat(first + ".partial"); !os.IsNotExist(err) {
		t.Fatalf("a .partial file is left: %v", err)
	}

	// Split into parts with a manifest; the parts joined are the export.
	man := filepath.Join(dir, "split", "orders.json")
	os.Mkdir(filepath.Dir(man), 0o755)
	r := must(t, 0, "export", "--connection-string", cs, "--table", srcName, "--out", man, "--segment", seg, "--split-size", split, "--json")
	if !strings.Contains(r.stdout, `"parts":[{`) {
		t.Fatalf("summary without parts: %s", r)
	}
	parts, _ := filepath.Glob(filepath.Join(dir, "split", "orders.part*.jsonl.gz"))
	if len(parts) < 3 {
		t.Fatalf("parts %v", parts)
	}
	var joined []byte
	for _, p := range parts {
		b, _ := os.ReadFile(p)
		joined = append(joined, b...)
	}
	if !bytes.Equal(joined, a) {
		t.Fatalf("parts joined differ from the export")
	}
	must(t, 0, "import", "--connection-string", other, "--table", "Copy2", "--in", man)
	sameRows(t, s.want, rawRows(t, other, "Copy2"))

	// To stdout: the same bytes; from stdin.
	r = must(t, 0, "export", "--connection-string", cs, "--table", srcName, "--out", "-", "--segment", seg, "--quiet")
	if r.stdout != string(a) {
		t.Fatalf("export to stdout differs from the file (%d and %d bytes)", len(r.stdout), len(a))
	}
	if r := tkIn(t, t.Context(), a, "import", "--connection-string", other, "--table", "Copy4", "--in", "-"); r.code != 0 {
		t.Fatalf("import from stdin: %s", r)
	}
	sameRows(t, s.want, rawRows(t, other, "Copy4"))

	// Through a blob of the other account, written with its connection
	// string, read with a SAS URL.
	must(t, 0, "export", "--connection-string", cs, "--table", srcName, "--out", "blob:backups/first.jsonl.gz", "--blob-connection-string", other, "--segment", seg)
	bb, err := blockblob.NewClientFromConnectionString(other, "backups", "first.jsonl.gz", nil)
	if err != nil {
		t.Fatal(err)
	}
	blobSAS, err := bb.GetSASURL(blobsas.BlobPermissions{Read: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	r = must(t, 0, "import", "--connection-string", other, "--table", "Copy3", "--in", blobSAS)
	if strings.Contains(r.stdout+r.stderr, blobSASSig(blobSAS)) {
		t.Fatalf("the blob SAS's signature is in the output: %s", r)
	}
	third := filepath.Join(dir, "third.jsonl.gz")
	must(t, 0, "export", "--connection-string", other, "--table", "Copy3", "--out", third, "--segment", seg)
	c, _ := os.ReadFile(third)
	if !bytes.Equal(a, c) {
		t.Fatalf("export through a blob differs")
	}
}

// source is the table the tests that only read their source share, of n()
// entities with every EDM type under awkward keys, and a second account.
type source struct {
	tbl   *entity.Table[entity.DynamicEntity]
	name  string
	want  map[string]map[string]any // the table read raw
	other string                    // the second account's connection string
}

// TestOnOneTable runs the tests that only read their source on one table,
// and those that need a second account on one second Azurite, in parallel:
// one table filled instead of one per test.
func TestOnOneTable(t *testing.T) {
	t.Parallel()
	tbl, name := newTable(t)
	fillTable(t, tbl, n())
	s := &source{tbl: tbl, name: name, want: rawRows(t, env.ConnectionString, name), other: secondAccount(t)}
	for _, c := range []struct {
		name string
		test func(*testing.T, *source)
	}{
		{"CopyInterruptedAndResumed", testCopyInterruptedAndResumed},
		{"CopyFilterAndRange", testCopyFilterAndRange},
		{"ExportImportExportIsByteIdentical", testExportImportExportIsByteIdentical},
		{"ExportInterruptedAndResumed", testExportInterruptedAndResumed},
		{"ImportReportsBadLinesInterruptedAndResumed", testImportReportsBadLinesInterruptedAndResumed},
		{"CSVIsStorageExplorersFormat", testCSVIsStorageExplorersFormat},
		{"ShardedRunsEqualOneRun", testShardedRunsEqualOneRun},
		{"QueryFormats", testQueryFormats},
		{"Stats", testStats},
		{"NoSecretInAnyOutput", testNoSecretInAnyOutput},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, s)
		})
	}
}

func blobSASSig(u string) string {
	_, q, _ := strings.Cut(u, "sig=")
	q, _, _ = strings.Cut(q, "&")
	return q
}
