package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/google/uuid"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
)

func testQueryFormats(t *testing.T, s *source) {
	name, cs, want := s.name, env.ConnectionString, s.want
	// A quote inside a literal, typed literals, and --select.
	r := must(t, 0, "query", "--connection-string", cs, "--table", name, "--filter", "PartitionKey eq 'O''Brien' and I64 ge 9223372036854775000L and B eq false", "--select", "S,I64")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	n := 0
	for _, v := range want {
		if v["PartitionKey"] == "O'Brien" && v["B"] == false && fmt.Sprint(v["I64"]) >= "9223372036854775000" {
			n++
		}
	}
	if n == 0 || len(lines) != n {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), n, r)
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["PartitionKey"] != "O'Brien" || m["I64@odata.type"] != "Edm.Int64" || m["D"] != nil || m["S"] == nil {
			t.Fatalf("line %s: %v", l, err)
		}
	}
	// --top, csv.
	r = must(t, 0, "query", "--connection-string", cs, "--table", name, "--top", "7", "--format", "csv", "--pk", "")
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil || len(recs) != 8 || recs[0][0] != "PartitionKey" || recs[1][0] != "" {
		t.Fatalf("csv: %v %s", err, r)
	}
	// table: aligned columns with a header.
	r = must(t, 0, "query", "--connection-string", cs, "--table", name, "--top", "3", "--format", "table", "--select", "I32,S")
	tl := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	col := strings.Index(tl[0], "I32")
	if len(tl) != 4 || !strings.HasPrefix(tl[0], "PartitionKey") || col < 0 {
		t.Fatalf("table:\n%s", r.stdout)
	}
	for _, l := range tl[1:] {
		if len(l) <= col || !strings.ContainsRune("-0123456789", rune(l[col])) {
			t.Fatalf("the I32 column is not aligned:\n%s", r.stdout)
		}
	}
	// A table scan is named.
	r = must(t, 0, "query", "--connection-string", cs, "--table", name, "--filter", "I32 eq 5")
	if !strings.Contains(r.stderr, "scan") {
		t.Fatalf("no table-scan note: %s", r)
	}
}

// billedSize is the service's formula for an entity's size, written apart
// from the command's.
func billedSize(d entity.DynamicEntity) int64 {
	u16 := func(s string) int64 { return int64(len(utf16.Encode([]rune(s)))) }
	n := 4 + 2*u16(d.PartitionKey) + 2*u16(d.RowKey)
	for k, x := range d.Properties {
		n += 8 + 2*u16(k)
		switch y := x.(type) {
		case string:
			n += 4 + 2*u16(y)
		case []byte:
			n += 4 + int64(len(y))
		case bool:
			n++
		case int32:
			n += 4
		case int64, float64, time.Time:
			n += 8
		case uuid.UUID:
			n += 16
		default:
			panic(fmt.Sprintf("%T", x))
		}
	}
	return n
}

func testStats(t *testing.T, s *source) {
	src, name, cs, want := s.tbl, s.name, env.ConnectionString, s.want
	parts := map[string]bool{}
	var bytes int64
	for d, err := range src.Query(context.Background(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		parts[d.PartitionKey] = true
		bytes += billedSize(d)
	}
	r := must(t, 0, "stats", "--connection-string", cs, "--table", name, "--json", "--largest", "3")
	var st struct {
		Entities, Partitions, Bytes, Transactions int64
		Largest                                   []partStat
		ByOp                                      map[string]int64 `json:"transactionsByOperation"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatal(err, r)
	}
	if st.Entities != int64(len(want)) || st.Partitions != int64(len(parts)) || st.Bytes != bytes || len(st.Largest) != 3 || st.Largest[0].Bytes < st.Largest[2].Bytes {
		t.Fatalf("stats %+v, want %d entities, %d partitions, %d bytes", st, len(want), len(parts), bytes)
	}
	// The cost is the queries the scan made: at least a page per 1,000.
	if st.ByOp["table Query"] < int64(len(want)/1000) || st.Transactions != st.ByOp["table Query"] {
		t.Fatalf("transactions %v", st.ByOp)
	}
	r = must(t, 0, "stats", "--connection-string", cs, "--table", name)
	if !strings.Contains(r.stdout, "largest partitions") || !strings.Contains(r.stdout, "storage transactions") {
		t.Fatal(r)
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	src, name := newTable(t)
	fillTable(t, src, 600)
	cs := env.ConnectionString
	count := func(pred func(map[string]any) bool) int {
		k := 0
		for _, v := range rawRows(t, cs, name) {
			if pred(v) {
				k++
			}
		}
		return k
	}
	inP := func(pk string) func(map[string]any) bool {
		return func(v map[string]any) bool { return v["PartitionKey"] == pk }
	}
	inEmpty, inObrien := count(inP("")), count(inP("O'Brien"))
	r := must(t, 0, "delete", "--connection-string", cs, "--table", name, "--pk", "", "--pk", "O'Brien", "--dry-run", "--json")
	var dry map[string]any
	json.Unmarshal([]byte(r.stdout), &dry)
	if dry["wouldDelete"] != float64(inEmpty+inObrien) || dry["partitions"] != float64(2) || count(inP("")) != inEmpty {
		t.Fatalf("dry run: %s (want %d)", r, inEmpty+inObrien)
	}
	r = must(t, 0, "delete", "--connection-string", cs, "--table", name, "--pk", "", "--pk", "O'Brien", "--json")
	var done map[string]any
	json.Unmarshal([]byte(r.stdout), &done)
	if done["deleted"] != float64(inEmpty+inObrien) || count(inP("")) != 0 || count(inP("O'Brien")) != 0 {
		t.Fatalf("delete: %s", r)
	}
	// By filter: transactions of 100, fewer than one per entity.
	before := len(rawRows(t, cs, name))
	neg := count(func(v map[string]any) bool { return strings.HasPrefix(fmt.Sprint(v["I32"]), "-") })
	r = must(t, 0, "delete", "--connection-string", cs, "--table", name, "--filter", "I32 lt 0", "--json")
	json.Unmarshal([]byte(r.stdout), &done)
	if done["deleted"] != float64(neg) || len(rawRows(t, cs, name)) != before-neg || done["transactions"].(float64) >= float64(neg) {
		t.Fatalf("delete by filter: %s (want %d)", r, neg)
	}
	// Again: nothing left to delete.
	r = must(t, 0, "delete", "--connection-string", cs, "--table", name, "--filter", "I32 lt 0", "--json")
	json.Unmarshal([]byte(r.stdout), &done)
	if done["deleted"] != float64(0) {
		t.Fatal(r)
	}
	must(t, 0, "delete", "--connection-string", cs, "--table", name, "--all")
	if left := len(rawRows(t, cs, name)); left != 0 {
		t.Fatalf("%d left after --all", left)
	}
}

type order struct{ ID string }

func TestQueuePeekReplayPurge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := env.QueueName(t)
	blobs := env.Container(t)
	cs := env.ConnectionString
	acct := env.Account()
	svc, _ := acct.QueueService()
	p, err := eventual.New(eventual.QueuesOf(svc, q), blobs, eventual.Config{RetryDelay: eventual.NoRetryDelay, MaxDeliveries: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CreateQueues(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range []string{q, q + "-poison"} {
			if qc, err := acct.Queue(n); err == nil {
				qc.Delete(context.Background(), nil)
			}
		}
	})
	failing := eventual.NewKind[order]("Failing.v1")
	unknown := eventual.NewKind[order]("Unknown.v9")
	if err := eventual.Handle(p, failing, func(ctx context.Context, o order) error { return fmt.Errorf("the warehouse refused order %s", o.ID) }, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		m, _ := failing.Message(order{fmt.Sprint(i)})
		m.ID = fmt.Sprintf("fail-%d", i)
		u, _ := unknown.Message(order{fmt.Sprint(i)})
		u.ID = fmt.Sprintf("unknown-%d", i)
		if err := p.Enqueue(ctx, m, u); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := p.Drain(ctx); err != nil || rep.InPoison != 6 {
		t.Fatalf("drain: %+v %v", rep, err)
	}
	r := must(t, 0, "queue", "peek", "--connection-string", cs, "--queue", q, "--poison", "--container", blobs.URL()[strings.LastIndex(strings.TrimRight(blobs.URL(), "/"), "/")+1:], "--json")
	var msgs []peeked
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m peeked
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err, r)
		}
		msgs = append(msgs, m)
	}
	if len(msgs) != 6 {
		t.Fatalf("%d poison messages: %s", len(msgs), r)
	}
	for _, m := range msgs {
		switch m.Kind {
		case "Failing.v1":
			if !strings.HasPrefix(m.ID, "fail-") || m.Attempts != 2 || m.Reason != eventual.ReasonFailed || !strings.Contains(m.Error, "the warehouse refused order") {
				t.Errorf("%+v", m)
			}
		case "Unknown.v9":
			if m.Reason != eventual.ReasonUnknownKind || m.Attempts != 1 {
				t.Errorf("%+v", m)
			}
		default:
			t.Errorf("%+v", m)
		}
	}
	container := blobs.URL()[strings.LastIndex(strings.TrimRight(blobs.URL(), "/"), "/")+1:]
	// Replay the unknown kind only.
	r = must(t, 0, "queue", "replay", "--connection-string", cs, "--queue", q, "--container", container, "--kind", "Unknown.v9", "--json")
	if !strings.Contains(r.stdout, `"replayed":3`) {
		t.Fatal(r)
	}
	r = must(t, 0, "queue", "peek", "--connection-string", cs, "--queue", q)
	if strings.Count(r.stdout, "Unknown.v9") != 3 || strings.Contains(r.stdout, "Failing.v1") {
		t.Fatalf("work queue after replay:\n%s", r.stdout)
	}
	// Purge the poison queue: a dry run counts, then the messages and
	// their records go.
	r = must(t, 0, "queue", "purge", "--connection-string", cs, "--queue", q, "--dry-run", "--json")
	if !strings.Contains(r.stdout, `"messages":3`) {
		t.Fatal(r)
	}
	must(t, 0, "queue", "purge", "--connection-string", cs, "--queue", q, "--container", container, "--yes")
	r = must(t, 0, "queue", "peek", "--connection-string", cs, "--queue", q, "--poison")
	if !strings.Contains(r.stdout, "(no messages)") {
		t.Fatal(r)
	}
	for b, err := range listBlobs(t, blobs) {
		if err == nil && strings.HasPrefix(b, eventual.PoisonRecordPrefix) {
			t.Errorf("record %s left after purge", b)
		}
	}
	must(t, 0, "queue", "purge", "--connection-string", cs, "--queue", q, "--work", "--yes")
	r = must(t, 0, "queue", "peek", "--connection-string", cs, "--queue", q)
	if !strings.Contains(r.stdout, "(no messages)") {
		t.Fatal(r)
	}
}

func TestTablesAndPlan(t *testing.T) {
	t.Parallel()
	cs := env.ConnectionString
	name := env.TableName(t)
	must(t, 0, "tables", "create", name, "--connection-string", cs)
	r := must(t, 0, "tables", "create", name, "--connection-string", cs)
	if !strings.Contains(r.stdout, "exists already") {
		t.Fatal(r)
	}
	r = must(t, 0, "tables", "list", "--connection-string", cs, "--prefix", name[:len(name)-3])
	if strings.TrimSpace(r.stdout) != name {
		t.Fatalf("list: %s", r)
	}
	tbl := tableOf(t, cs, name)
	fillTable(t, tbl, 500)
	r = must(t, 0, "plan", "--connection-string", cs, "--table", name, "--shards", "4")
	var p shardPlanFile
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || len(p.Bounds) != 3 || p.Fingerprint == "" {
		t.Fatalf("plan: %v %s", err, r)
	}
	must(t, 0, "tables", "delete", name, "--connection-string", cs, "--yes")
	r = must(t, 0, "tables", "list", "--connection-string", cs, "--prefix", name)
	if strings.TrimSpace(r.stdout) != "" {
		t.Fatal(r)
	}
}
