package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

// tokenTable is a table whose rows carry write tokens (TkWrite), as the
// rows of the index patterns do: inserted through a write-token view, half
// of them changed by Modify, and one row written without a token.
func tokenTable(t *testing.T) string {
	t.Helper()
	src, name := newTable(t)
	tok := src.WithWriteTokens()
	for i := range 6 {
		d := entity.DynamicEntity{PartitionKey: fmt.Sprintf("p%d", i%2), RowKey: fmt.Sprintf("r%02d", i)}
		d.Set("N", int64(i)).Set("S", "O'Brien ü")
		if err := tok.Insert(t.Context(), &d); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			var err error
			if d, err = tok.Modify(t.Context(), d.PartitionKey, d.RowKey, func(e *entity.DynamicEntity) error {
				e.Set("N", int64(10*i))
				return nil
			}, entity.ModifyOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	d := entity.DynamicEntity{PartitionKey: "p0", RowKey: "plain"}
	d.Set("N", int64(-1))
	if err := src.Insert(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	return name
}

// Rows carrying TkWrite are copied and imported with it: the destination
// holds the source's rows read raw, export → import → export is
// byte-identical, and a second copy or import in insert mode finds every
// row already there (exit 0, no conflict).
func TestCopyAndImportKeepWriteTokens(t *testing.T) {
	t.Parallel()
	cs := env.ConnectionString
	srcName := tokenTable(t)
	want := rawRows(t, cs, srcName)
	copyTo := func(dst, mode string) (result, map[string]any) {
		r := tk(t, "copy", "--connection-string", cs, "--table", srcName, "--to-table", dst, "--mode", mode, "--json")
		var sum map[string]any
		jsonLine(r.stdout, &sum)
		counts, _ := sum["counts"].(map[string]any)
		return r, counts
	}

	dst := env.TableName(t)
	if r, counts := copyTo(dst, "insert"); r.code != 0 || counts["written"] != float64(7) {
		t.Fatalf("first copy: %s", r)
	}
	sameRows(t, want, rawRows(t, cs, dst))
	if r, counts := copyTo(dst, "insert"); r.code != 0 || counts["existing"] != float64(7) || counts["conflicts"] != nil {
		t.Fatalf("second copy: %s", r)
	}
	sameRows(t, want, rawRows(t, cs, dst))

	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.jsonl.gz"), filepath.Join(dir, "second.jsonl.gz")
	must(t, 0, "export", "--connection-string", cs, "--table", srcName, "--out", first)
	back := env.TableName(t)
	must(t, 0, "import", "--connection-string", cs, "--table", back, "--in", first)
	must(t, 0, "export", "--connection-string", cs, "--table", back, "--out", second)
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if !bytes.Equal(a, b) || !bytes.Contains(gunzip(t, a), []byte(`"TkWrite":`)) {
		t.Fatalf("export → import → export differs:\n%s\n%s", gunzip(t, a), gunzip(t, b))
	}
	sameRows(t, want, rawRows(t, cs, back))
	if r := must(t, 0, "import", "--connection-string", cs, "--table", back, "--in", first, "--mode", "insert"); !strings.Contains(r.stdout, "7 already there, 0 conflicts") {
		t.Fatalf("a second import in insert mode: %s", r)
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// import takes its input's format from --in's name: .jsonl.gz and .jsonl
// (gzip, as export writes under any name, or not; the last line with or
// without its newline), .json (a manifest), .csv and .csv.gz (gzip, as
// export --out NAME.csv.gz writes it, or not); each gives the source's rows. Any other name is refused before
// any request unless --format says the format, and then read as it says.
func TestImportFormatFromTheName(t *testing.T) {
	t.Parallel()
	cs := env.ConnectionString
	src, srcName := newTable(t)
	fillTable(t, src, 60)
	want := rawRows(t, cs, srcName)
	dir := t.TempDir()
	gz, csv := filepath.Join(dir, "e.jsonl.gz"), filepath.Join(dir, "e.csv")
	must(t, 0, "export", "--connection-string", cs, "--table", srcName, "--out", gz, "--segment", "25")
	must(t, 0, "export", "--connection-string", cs, "--table", srcName, "--out", csv)
	zipped, _ := os.ReadFile(gz)
	lines := gunzip(t, zipped)
	csvData, _ := os.ReadFile(csv)
	// export --out NAME.csv.gz writes the CSV gzip-compressed.
	csvGz := filepath.Join(dir, "x.csv.gz")
	must(t, 0, "export", "--connection-string", cs, "--table", srcName, "--out", csvGz)
	if b, _ := os.ReadFile(csvGz); !bytes.Equal(gunzip(t, b), csvData) {
		t.Fatalf("export --out x.csv.gz wrote %.200q, not the CSV of --out x.csv gzip-compressed", b)
	}
	files := map[string][]byte{
		"e.jsonl.gz":      zipped,
		"gzip.jsonl":      zipped, // export --out x.jsonl writes gzip
		"plain.jsonl":     lines,
		"nonl.jsonl":      bytes.TrimSuffix(lines, []byte("\n")),
		"CRLF.JSONL":      bytes.ReplaceAll(lines, []byte("\n"), []byte("\r\n")),
		"e.csv":           csvData,
		"e.csv.gz":        gzipBytes(csvData),
		"plain.jsonl.txt": lines,
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			table := env.TableName(t)
			if strings.HasSuffix(name, ".txt") {
				r := tk(t, "import", "--connection-string", cs, "--table", table, "--in", path)
				if r.code != exitUsage || !strings.Contains(r.stderr, "--format") || !strings.Contains(r.stderr, ".jsonl") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
					t.Fatalf("an --in of an unknown extension: %s", r)
				}
				must(t, 0, "import", "--connection-string", cs, "--table", table, "--in", path, "--format", "jsonl")
			} else {
				must(t, 0, "import", "--connection-string", cs, "--table", table, "--in", path, "--segment", "10")
			}
			sameRows(t, want, rawRows(t, cs, table))
		})
	}
}

// An import into a missing table creates it and says so on stderr (a JSON
// event with --json); into an existing one it says nothing of the kind.
func TestImportSaysItCreatedTheTable(t *testing.T) {
	t.Parallel()
	cs := env.ConnectionString
	src, srcName := newTable(t)
	fillTable(t, src, 5)
	file := filepath.Join(t.TempDir(), "e.jsonl.gz")
	must(t, 0, "export", "--connection-string", cs, "--table", srcName, "--out", file)
	table := env.TableName(t)
	r := must(t, 0, "import", "--connection-string", cs, "--table", table, "--in", file)
	if !strings.Contains(r.stderr, "created table "+table) {
		t.Fatalf("an import into a missing table: %s", r)
	}
	r = must(t, 0, "import", "--connection-string", cs, "--table", table, "--in", file)
	if strings.Contains(r.stderr, "created") {
		t.Fatalf("an import into an existing table: %s", r)
	}
	other := env.TableName(t)
	r = must(t, 0, "import", "--connection-string", cs, "--table", other, "--in", file, "--json")
	if !strings.Contains(r.stderr, `"event":"created"`) || !strings.Contains(r.stderr, other) {
		t.Fatalf("an import into a missing table, --json: %s", r)
	}
	if r := must(t, 0, "import", "--help"); !strings.Contains(r.stdout+r.stderr, "created table NAME") {
		t.Fatalf("import --help does not say it creates the table: %s", r)
	}
}

// tables create and delete take the table as --table, as every other
// command does, or as the argument; two different names are refused.
func TestTablesTakeTheTableFlag(t *testing.T) {
	t.Parallel()
	cs := env.ConnectionString
	name := env.TableName(t)
	if r := must(t, 0, "tables", "create", "--table", name, "--connection-string", cs); !strings.Contains(r.stdout, "created table "+name) {
		t.Fatal(r)
	}
	if r := must(t, 0, "tables", "create", name, "--table", name, "--connection-string", cs); !strings.Contains(r.stdout, "exists already") {
		t.Fatal(r)
	}
	if r := tk(t, "tables", "create", name, "--table", name+"x", "--connection-string", cs); r.code != exitUsage || !strings.Contains(r.stderr, "two table names") {
		t.Fatal(r)
	}
	if r := must(t, 0, "tables", "list", "--connection-string", cs, "--prefix", name); strings.TrimSpace(r.stdout) != name {
		t.Fatal(r)
	}
	must(t, 0, "tables", "delete", "--table", name, "--yes", "--connection-string", cs)
	if r := must(t, 0, "tables", "list", "--connection-string", cs, "--prefix", name); strings.TrimSpace(r.stdout) != "" {
		t.Fatal(r)
	}
}
