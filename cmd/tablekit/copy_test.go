package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A copy to another account, interrupted by SIGINT midway, leaves only
// whole entities and prints a token; resumed and stopped by SIGTERM, it
// prints a later one; resumed and killed with SIGKILL (a crash), it
// resumes from the token its --checkpoint file kept; the
// destination ends equal to the source, read raw with aztables — every
// EDM type, keys with quotes, unicode, spaces, %, + and the empty
// PartitionKey.
func testCopyInterruptedAndResumed(t *testing.T, s *source) {
	src, srcName, dst, total := s.tbl, s.name, s.other, n()
	ck := filepath.Join(t.TempDir(), "copy.ck")
	args := []string{"copy", "--connection-string", env.ConnectionString, "--table", srcName, "--to-connection-string", dst, "--to-table", "Dest",
		"--json", "--progress-interval", "20ms", "--parallel", "1", "--checkpoint", ck}
	// Slow enough that the signals land midway: small pages, few requests
	// a second. The last run goes at full speed, with pages of 1,000.
	slow := []string{"--max-rps", "25", "--page-size", "50"}
	if full() {
		slow = []string{"--max-rps", "200", "--page-size", "50"}
	}

	// 1. SIGINT midway: a clean stop with a token.
	p := startBin(t, append(args, slow...)...)
	if !p.waitProgress(200) {
		t.Fatalf("the copy ended before any progress: %s", p.wait())
	}
	p.signal(syscall.SIGINT)
	r := p.wait()
	if r.code != exitFailed {
		t.Fatalf("interrupted copy: %s", r)
	}
	ev := lastEvent(r.stderr, "interrupted")
	tok, _ := ev["resume"].(string)
	if tok == "" {
		t.Fatalf("no resume token after SIGINT: %s", r)
	}
	mid := rawRows(t, dst, "Dest")
	if len(mid) == 0 || len(mid) >= total {
		t.Fatalf("after SIGINT the destination holds %d of %d entities: not midway", len(mid), total)
	}
	want := s.want
	for k, v := range mid {
		if fmt.Sprint(want[k]) != fmt.Sprint(v) {
			t.Fatalf("half-written entity %s: %v, want %v", k, v, want[k])
		}
	}
	saved, err := os.ReadFile(ck)
	if err != nil || strings.TrimSpace(string(saved)) != tok {
		t.Fatalf("the checkpoint file holds %q (%v), the printed token is %q", saved, err, tok)
	}

	// 2. Resumed, then stopped by SIGTERM: a clean stop too.
	p = startBin(t, append(append(args, slow...), "--resume", tok)...)
	if !p.waitProgress(float64(len(mid) + 50)) {
		t.Fatalf("the resumed copy ended before more progress: %s", p.wait())
	}
	p.signal(syscall.SIGTERM)
	r = p.wait()
	tok2, _ := lastEvent(r.stderr, "interrupted")["resume"].(string)
	if r.code != exitFailed || tok2 == "" || tok2 == tok {
		t.Fatalf("SIGTERM: %s", r)
	}

	// 3. Resumed, then killed outright (a crash): no message, only the file.
	p = startBin(t, append(append(args, slow...), "--resume", tok2)...)
	if !p.waitProgress(float64(len(mid) + 150)) {
		t.Fatalf("the resumed copy ended before more progress: %s", p.wait())
	}
	p.signal(syscall.SIGKILL)
	if r := p.wait(); r.code == 0 {
		t.Fatalf("killed copy exited 0: %s", r)
	}

	// 4. Resumed from the file to the end.
	r = startBin(t, append(args, "--resume", "@"+ck)...).wait()
	if r.code != exitOK {
		t.Fatalf("resumed copy: %s", r)
	}
	sameRows(t, want, rawRows(t, dst, "Dest"))
	sameTyped(t, src, tableOf(t, dst, "Dest"))
	var sum map[string]any
	if err := jsonLine(r.stdout, &sum); err != nil || sum["status"] != "done" {
		t.Fatalf("summary %q: %v", r.stdout, err)
	}
}

// Every mode, on a destination holding some entities already.
func TestCopyModes(t *testing.T) {
	t.Parallel()
	src, srcName := newTable(t)
	fillTable(t, src, 300)
	cs := env.ConnectionString
	want := rawRows(t, cs, srcName)
	for _, mode := range []string{"insert-or-replace", "insert-or-merge", "insert-or-skip", "insert"} {
		t.Run(mode, func(t *testing.T) {
			dstName := env.TableName(t)
			dst := tableOf(t, cs, dstName)
			must(t, 0, "tables", "create", dstName, "--connection-string", cs)
			// Three entities the destination holds before: one as in the
			// source, one changed, one the source lacks a property of.
			ents := makeEntities(300)
			same, changed := ents[10], ents[20]
			changed.Properties = map[string]any{"S": "changed", "Extra": int32(1)}
			if _, err := dst.BulkWrite(t.Context(), append(ents[10:11:11], changed), entityOpts()); err != nil {
				t.Fatal(err)
			}
			_ = same
			r := tk(t, "copy", "--connection-string", cs, "--table", srcName, "--to-table", dstName, "--mode", mode, "--json")
			got := rawRows(t, cs, dstName)
			key := fmt.Sprintf("%q/%q", changed.PartitionKey, changed.RowKey)
			var sum map[string]any
			jsonLine(r.stdout, &sum)
			counts, _ := sum["counts"].(map[string]any)
			switch mode {
			case "insert-or-replace":
				if r.code != 0 {
					t.Fatal(r)
				}
				sameRows(t, want, got)
			case "insert-or-merge":
				if r.code != 0 {
					t.Fatal(r)
				}
				if got[key]["Extra"] == nil || fmt.Sprint(got[key]["S"]) != fmt.Sprint(want[key]["S"]) {
					t.Fatalf("merge: %v", got[key])
				}
			case "insert-or-skip":
				if r.code != 0 || counts["skipped"] != float64(2) {
					t.Fatal(r)
				}
				if got[key]["S"] != "changed" {
					t.Fatalf("skip overwrote: %v", got[key])
				}
			case "insert":
				if r.code != exitPartial || counts["conflicts"] != float64(1) || counts["existing"] != float64(1) || !strings.Contains(r.stderr, changed.RowKey) {
					t.Fatal(r)
				}
				if got[key]["S"] != "changed" {
					t.Fatalf("insert overwrote a conflict: %v", got[key])
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d entities, want %d", len(got), len(want))
			}
		})
	}
}

// --filter and a PartitionKey range copy exactly their entities.
func testCopyFilterAndRange(t *testing.T, s *source) {
	srcName, cs, all := s.name, env.ConnectionString, s.want
	dstName := env.TableName(t)
	must(t, 0, "copy", "--connection-string", cs, "--table", srcName, "--to-table", dstName,
		"--filter", "B eq true and I32 lt 0", "--from-pk", "O'Brien", "--to-pk", "p050")
	want := map[string]map[string]any{}
	for k, v := range all {
		pk := v["PartitionKey"].(string)
		i32 := v["I32"].(interface{ String() string }).String()
		if v["B"] == true && strings.HasPrefix(i32, "-") && compareUTF16(pk, "O'Brien") >= 0 && compareUTF16(pk, "p050") < 0 {
			want[k] = v
		}
	}
	if len(want) == 0 {
		t.Fatal("the test's selection is empty")
	}
	sameRows(t, want, rawRows(t, cs, dstName))
}
