package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// cancelOnProgress is a stderr that cancels a run once a --json progress
// event counts at least min: an in-process Ctrl-C at a known point.
type cancelOnProgress struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	min    float64
	cancel context.CancelFunc
}

func (w *cancelOnProgress) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for _, line := range strings.Split(string(p), "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil && ev["event"] == "progress" {
			if n, _ := ev["count"].(float64); n >= w.min {
				w.cancel()
			}
		}
	}
	return len(p), nil
}

// An export stopped midway leaves FILE.partial cut at a segment's end and a
// token; resumed, it ends byte-identical to an export that was not stopped.
func testExportInterruptedAndResumed(t *testing.T, s *source) {
	name, cs := s.name, env.ConnectionString
	dir := t.TempDir()
	straight := filepath.Join(dir, "straight.jsonl.gz")
	must(t, 0, "export", "--connection-string", cs, "--table", name, "--out", straight, "--segment", "50")

	out := filepath.Join(dir, "stopped.jsonl.gz")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errw := &cancelOnProgress{min: 100, cancel: cancel}
	var stdout bytes.Buffer
	code := run(ctx, []string{"export", "--connection-string", cs, "--table", name, "--out", out, "--segment", "50", "--json", "--progress-interval", "1ms"}, nil, &stdout, errw)
	if code != exitFailed {
		t.Fatalf("stopped export: exit %d\n%s%s", code, stdout.String(), errw.buf.String())
	}
	ev := lastEvent(errw.buf.String(), "interrupted")
	tok, _ := ev["resume"].(string)
	if tok == "" {
		t.Fatalf("no token: %s", errw.buf.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the unfinished export is under its final name: %v", err)
	}
	part, err := os.ReadFile(out + ".partial")
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(straight)
	if len(part) == 0 || len(part) >= len(whole) || !bytes.Equal(part, whole[:len(part)]) {
		t.Fatalf("the partial file (%d bytes) is not a proper prefix of the export (%d bytes)", len(part), len(whole))
	}
	// Whole gzip members only: it reads to its end without error.
	zr, err := gzip.NewReader(bytes.NewReader(part))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zr.Read(make([]byte, 1<<20)); err != nil && err.Error() != "EOF" {
		t.Fatal(err)
	}

	must(t, 0, "export", "--connection-string", cs, "--table", name, "--out", out, "--segment", "50", "--resume", tok)
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, whole) {
		t.Fatalf("resumed export differs from one not stopped (%d and %d bytes)", len(got), len(whole))
	}
}

// An import stopped by SIGINT resumes from its token; lines that cannot be
// written are each reported with their line number and keys, and the rest
// are written.
func testImportReportsBadLinesInterruptedAndResumed(t *testing.T, s *source) {
	other := s.other
	ents := makeEntities(n())
	var lines []string
	lines = append(lines, `{"tablekit.backup":1}`)
	bad := map[int]string{}
	for i, e := range ents {
		b, err := entityMarshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
		switch i {
		case 7:
			lines = append(lines, `{"PartitionKey":"bad","RowKey":"not json`)
			bad[len(lines)] = ""
		case 300:
			lines = append(lines, `{"PartitionKey":"a#b","RowKey":"hash"}`)
			bad[len(lines)] = "hash"
		case n() * 9 / 20:
			lines = append(lines, `{"PartitionKey":"x","RowKey":"r","N@odata.type":"Edm.Int65","N":"1"}`)
			bad[len(lines)] = "r"
		}
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Join(lines, "\n") + "\n"))
	zw.Close()
	file := filepath.Join(t.TempDir(), "in.jsonl.gz")
	os.WriteFile(file, gz.Bytes(), 0o644)
	args := []string{"import", "--connection-string", other, "--table", "Back", "--in", file, "--segment", "50", "--json", "--progress-interval", "20ms"}

	p := startBin(t, append(args, "--max-rps", "40")...)
	if !p.waitProgress(100) {
		t.Fatalf("the import ended before any progress: %s", p.wait())
	}
	p.signal(syscall.SIGINT)
	r := p.wait()
	tok, _ := lastEvent(r.stderr, "interrupted")["resume"].(string)
	if r.code != exitFailed || tok == "" {
		t.Fatalf("interrupted import: %s", r)
	}
	r = startBin(t, append(args, "--resume", tok)...).wait()
	if r.code != exitPartial {
		t.Fatalf("resumed import: %s", r)
	}
	// Each bad line reported (by the run that reached it), with its line.
	all := r.stderr
	for line := range bad {
		found := false
		for _, l := range strings.Split(all, "\n") {
			var ev map[string]any
			if json.Unmarshal([]byte(l), &ev) == nil && ev["event"] == "item" && ev["line"] == float64(line) {
				found = true
			}
		}
		if !found && line > 150 { // the first run may have reported the early ones
			t.Errorf("line %d not reported: %s", line, all)
		}
	}
	got := rawRows(t, other, "Back")
	if len(got) != len(ents) {
		t.Fatalf("%d entities imported, want %d", len(got), len(ents))
	}
}

// The CSV is Storage Explorer's: a header of PartitionKey, RowKey,
// Timestamp, then each property and its @type column; every EDM type comes
// back through an export and an import; Storage Explorer's own rows, whose
// later type cells may be empty, import.
func testCSVIsStorageExplorersFormat(t *testing.T, s *source) {
	name, cs := s.name, env.ConnectionString
	dir := t.TempDir()
	file := filepath.Join(dir, "t.csv")
	must(t, 0, "export", "--connection-string", cs, "--table", name, "--out", file)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil || len(recs) != len(s.want)+1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	head := strings.Join(recs[0], ",")
	if !strings.HasPrefix(head, "PartitionKey,RowKey,Timestamp,B,B@type,Bin,Bin@type,D,D@type,DW,DW@type,Emp,Emp@type,G,G@type,I32,I32@type,I64,I64@type,S,S@type,Sparse,Sparse@type,T,T@type") {
		t.Fatalf("header %q", head)
	}
	types := map[string]bool{}
	for _, rec := range recs[1:] {
		for i := 4; i < len(rec); i += 2 {
			types[rec[i]] = true
		}
	}
	for _, ty := range []string{"Boolean", "Binary", "Double", "String", "Guid", "Int32", "Int64", "DateTime"} {
		if !types[ty] {
			t.Errorf("no %s column in %v", ty, types)
		}
	}
	must(t, 0, "import", "--connection-string", cs, "--table", "FromCsv"+name[2:12], "--in", file)
	sameRows(t, s.want, rawRows(t, cs, "FromCsv"+name[2:12]))

	sample := "PartitionKey,RowKey,Timestamp,Age,Age@type,Name,Name@type,When,When@type\r\n" +
		"p,1,2024-05-01T10:00:00.000Z,30,Int32,Ann,String,2024-05-01T10:00:00.000Z,DateTime\r\n" +
		"p,2,2024-05-01T10:00:00.000Z,31,,\"Bo, \"\"B\"\"\",,,\r\n" +
		"p,3,2024-05-01T10:00:00.000Z,x,Int32,Cy,String,,\r\n"
	se := filepath.Join(dir, "se.csv")
	os.WriteFile(se, []byte(sample), 0o644)
	r := tk(t, "import", "--connection-string", cs, "--table", "FromSE"+name[2:12], "--in", se)
	if r.code != exitPartial || !strings.Contains(r.stderr, "line 4") {
		t.Fatalf("Storage Explorer sample: %s", r)
	}
	got := rawRows(t, cs, "FromSE"+name[2:12])
	if len(got) != 2 || got[`"p"/"2"`]["Name"] != `Bo, "B"` || got[`"p"/"2"`]["Age"] == nil {
		t.Fatalf("imported %v", got)
	}
}
