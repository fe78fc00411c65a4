package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Three processes, --shard 0/3, 1/3 and 2/3, copy one table together, and
// export it together: the union is exactly what one run copies, and the
// three share one plan, which each prints.
func testShardedRunsEqualOneRun(t *testing.T, s *source) {
	srcName, cs, want := s.name, env.ConnectionString, s.want

	// Three processes at once, copying into one table.
	sharded := env.TableName(t)
	must(t, 0, "tables", "create", sharded, "--connection-string", cs)
	var procs []*proc
	for k := range 3 {
		procs = append(procs, startBin(t, "copy", "--connection-string", cs, "--table", srcName, "--to-table", sharded, "--shard", shardArg(k, 3)))
	}
	plans := map[string]bool{}
	planRE := regexp.MustCompile(`plan ([0-9a-f]{12})`)
	var counts []string
	for _, p := range procs {
		r := p.wait()
		if r.code != 0 {
			t.Fatalf("shard: %s", r)
		}
		m := planRE.FindStringSubmatch(r.stderr)
		if m == nil {
			t.Fatalf("shard printed no plan: %s", r)
		}
		plans[m[1]] = true
		counts = append(counts, strings.TrimSpace(r.stdout))
	}
	if len(plans) != 1 {
		t.Fatalf("the shards used different plans: %v", plans)
	}
	// What one run copies is the source (TestOnOneTable/CopyInterruptedAndResumed).
	sameRows(t, want, rawRows(t, cs, sharded))
	for _, c := range counts {
		if strings.Contains(c, ": 0 entities read") {
			t.Errorf("a shard copied nothing: %v", counts)
		}
	}

	// A shared plan file, three exports, three imports.
	dir := t.TempDir()
	plan := filepath.Join(dir, "t.plan")
	must(t, 0, "plan", "--connection-string", cs, "--table", srcName, "--shards", "3", "--out", plan)
	procs = procs[:0]
	for k := range 3 {
		procs = append(procs, startBin(t, "export", "--connection-string", cs, "--table", srcName, "--shard", shardArg(k, 3), "--shard-plan", plan,
			"--out", filepath.Join(dir, "part"+shardArg(k, 3)[:1]+".jsonl.gz")))
	}
	for _, p := range procs {
		if r := p.wait(); r.code != 0 {
			t.Fatalf("export shard: %s", r)
		}
	}
	back := env.TableName(t)
	for k := range 3 {
		f := filepath.Join(dir, "part"+shardArg(k, 3)[:1]+".jsonl.gz")
		if st, err := os.Stat(f); err != nil || st.Size() < 100 {
			t.Fatalf("%s: %v", f, err)
		}
		must(t, 0, "import", "--connection-string", cs, "--table", back, "--in", f, "--mode", "insert")
	}
	sameRows(t, want, rawRows(t, cs, back))
}

func shardArg(k, n int) string { return string(rune('0'+k)) + "/" + string(rune('0'+n)) }
