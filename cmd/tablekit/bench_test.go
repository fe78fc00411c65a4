package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkCopyVsExportImport copies a table to another account, and in
// the same iteration exports it to a file and imports that file into the
// other account, on the same data, in the same process, on the same two
// Azurites: the rates of the three and copy's rate as a share of the slower
// of export and import (the goal: 0.9 or more). 2,000 entities; 100,000
// with TABLEKIT_FULL=1; TABLEKIT_BENCH_N entities when set.
func BenchmarkCopyVsExportImport(b *testing.B) {
	src, srcName := newTable(b)
	total := benchN()
	if s := os.Getenv("TABLEKIT_BENCH_N"); s != "" {
		total, _ = strconv.Atoi(s)
	}
	fillTable(b, src, total)
	other := secondAccount(b)
	cs := env.ConnectionString
	dir := b.TempDir()
	var te, ti, tc time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		file := filepath.Join(dir, fmt.Sprintf("e%d.jsonl.gz", i))
		t0 := time.Now()
		must(b, 0, "export", "--connection-string", cs, "--table", srcName, "--out", file, "--quiet")
		t1 := time.Now()
		must(b, 0, "import", "--connection-string", other, "--table", fmt.Sprintf("Imported%d", i), "--in", file, "--quiet")
		t2 := time.Now()
		must(b, 0, "copy", "--connection-string", cs, "--table", srcName, "--to-connection-string", other, "--to-table", fmt.Sprintf("Copied%d", i), "--quiet")
		t3 := time.Now()
		te += t1.Sub(t0)
		ti += t2.Sub(t1)
		tc += t3.Sub(t2)
	}
	rate := func(d time.Duration) float64 { return float64(total) * float64(b.N) / d.Seconds() }
	b.ReportMetric(rate(te), "export-records/s")
	b.ReportMetric(rate(ti), "import-records/s")
	b.ReportMetric(rate(tc), "copy-records/s")
	b.ReportMetric(rate(tc)/min(rate(te), rate(ti)), "copy/slower")
}
