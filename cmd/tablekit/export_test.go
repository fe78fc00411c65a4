package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An export, an import into an empty table of another account and an
// export of that table are byte-identical: to a file, to parts with a
// manifest, and through a blob.
func testExportImportExportIsByteIdentical(t *testing.T, other string) {
	src, srcName := newTable(t)
	fillTable(t, src, n())
	dir := t.TempDir()
	cs := env.ConnectionString
	first := filepath.Join(dir, "first.jsonl.gz")
	must(t, 0, "export", "--connection-string", cs, "--table", srcName, "--out", first, "--segment", "300")
	must(t, 0, "import", "--connection-string", other, "--table", "Copy1", "--in", first)
	second := filepath.Join(dir, "second.jsonl.gz")
	must(t, 0, "export", "--connection-string", other, "--table", "Copy1", "--out", second, "--segment", "300")
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if len(a) < 1000 || !bytes.Equal(a, b) {
		t.Fatalf("exports differ: %d and %d bytes", len(a), len(b))
	}
	sameRows(t, rawRows(t, cs, srcName), rawRows(t, other, "Copy1"))
	sameTyped(t, src, tableOf(t, other, "Copy1"))
	if _, err := os.Stat(first + ".partial"); !os.IsNotExist(err) {
		t.Fatalf("a .partial file is left: %v", err)
	}

	// Split into parts with a manifest; the parts joined are the export.
	man := filepath.Join(dir, "split", "orders.json")
	os.Mkdir(filepath.Dir(man), 0o755)
	r := must(t, 0, "export", "--connection-string", cs, "--table", srcName, "--out", man, "--segment", "300", "--split-size", "20KB", "--json")
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
	sameRows(t, rawRows(t, cs, srcName), rawRows(t, other, "Copy2"))

	// Through a blob of the other account.
	must(t, 0, "export", "--connection-string", cs, "--table", srcName, "--out", "blob:backups/first.jsonl.gz", "--blob-connection-string", other, "--segment", "300")
	must(t, 0, "import", "--connection-string", other, "--table", "Copy3", "--in", "blob:backups/first.jsonl.gz")
	third := filepath.Join(dir, "third.jsonl.gz")
	must(t, 0, "export", "--connection-string", other, "--table", "Copy3", "--out", third, "--segment", "300")
	c, _ := os.ReadFile(third)
	if !bytes.Equal(a, c) {
		t.Fatalf("export through a blob differs")
	}
}

// TestAcrossAccounts runs the tests that need a second account on one
// second Azurite, in parallel.
func TestAcrossAccounts(t *testing.T) {
	t.Parallel()
	other := secondAccount(t)
	t.Run("CopyInterruptedAndResumed", func(t *testing.T) { t.Parallel(); testCopyInterruptedAndResumed(t, other) })
	t.Run("ExportImportExportIsByteIdentical", func(t *testing.T) { t.Parallel(); testExportImportExportIsByteIdentical(t, other) })
	t.Run("ImportReportsBadLinesInterruptedAndResumed", func(t *testing.T) {
		t.Parallel()
		testImportReportsBadLinesInterruptedAndResumed(t, other)
	})
}
