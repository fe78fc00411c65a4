package secondaryindex_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// docExamples returns the example blocks of the package doc's "Wire
// format" section: the runs of lines indented by a tab, in order.
func docExamples(t testing.TB) [][]string {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(src), "// # Wire format\n")
	if !ok {
		t.Fatal("doc.go has no Wire format section")
	}
	section, _, _ = strings.Cut(section, "\n// # ")
	var blocks [][]string
	var cur []string
	for _, line := range strings.Split(section, "\n") {
		if ex, ok := strings.CutPrefix(line, "//\t"); ok {
			cur = append(cur, ex)
			continue
		}
		if cur != nil {
			blocks = append(blocks, cur)
			cur = nil
		}
	}
	return blocks
}

// canonical writes an entity as the service returned it the way the doc
// shows it: PartitionKey, RowKey, then the properties in byte order of
// their names, each type annotation before its property; odata metadata,
// Timestamp and TkWrite left out. It reports whether TkWrite was there.
func canonical(t testing.TB, raw []byte) (string, bool) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	_, token := m["TkWrite"]
	var names []string
	for k := range m {
		switch {
		case strings.HasPrefix(k, "odata."), k == "Timestamp", k == "PartitionKey", k == "RowKey", strings.HasPrefix(k, "TkWrite"), strings.HasSuffix(k, "@odata.type"):
		default:
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var b bytes.Buffer
	b.WriteString(`{"PartitionKey":` + string(m["PartitionKey"]) + `,"RowKey":` + string(m["RowKey"]))
	for _, k := range names {
		if a, ok := m[k+"@odata.type"]; ok {
			b.WriteString(`,"` + k + `@odata.type":` + string(a))
		}
		b.WriteString(`,"` + k + `":` + string(m[k]))
	}
	b.WriteString("}")
	return b.String(), token
}

// rawPartition returns partition pk of table name as canonical lines,
// and which of them carried TkWrite.
func rawPartition(t testing.TB, name, pk string) (lines []string, tokens []bool) {
	t.Helper()
	f := "PartitionKey eq '" + pk + "'"
	pager := env.TableService.NewClient(name).NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f})
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entities {
			line, tok := canonical(t, e)
			lines = append(lines, line)
			tokens = append(tokens, tok)
		}
	}
	if env.Cosmos() { // no key order there: sort the lines, which start with the keys
		idx := make([]int, len(lines))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(i, j int) int { return strings.Compare(lines[i], lines[j]) })
		sorted, toks := make([]string, len(idx)), make([]bool, len(idx))
		for k, i := range idx {
			sorted[k], toks[k] = lines[i], tokens[i]
		}
		lines, tokens = sorted, toks
	}
	return lines, tokens
}

func equalLines(t testing.TB, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: the service holds\n%s\nthe doc says\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWireFormat: the package doc's Wire format examples are exactly
// what a Set writes, read back with raw clients: the SamePartition
// entries and the primary, the OtherPartition reservation and the
// message's payload as queued, and the entries once the worker ran.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ex := docExamples(t)
	if len(ex) != 4 || len(ex[0]) != 3 || len(ex[1]) != 2 || len(ex[2]) != 2 || len(ex[3]) != 2 {
		t.Fatalf("the doc's examples: %q", ex)
	}
	john := func() *Employee {
		return &Employee{PartitionKey: "Sales", RowKey: "empid_000123", FirstName: "John", LastName: "Jones", Email: "jonesj@contoso.com", Age: 30}
	}

	tbl := employees(t, env)
	if err := localSet(t, tbl).Insert(ctx, john()); err != nil {
		t.Fatal(err)
	}
	lines, tokens := rawPartition(t, tbl.Name(), "Sales")
	equalLines(t, "same partition", lines, ex[0])
	if len(tokens) == 3 && (!tokens[0] || !tokens[1]) {
		t.Errorf("TkWrite on the unique entry and the primary: %v", tokens)
	}

	tbl = employees(t, env)
	qs := patterntest.Queues(t, env, 1)
	s, _ := remoteSet(t, env, qs, tbl, nil, fast())
	if err := s.Insert(ctx, john()); err != nil {
		t.Fatal(err)
	}
	lines, _ = rawPartition(t, tbl.Name(), "email_Sales")
	peek, err := qs[0].Work.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(2))})
	if err != nil || len(peek.Messages) != 1 {
		t.Fatalf("queued: %v, %v", peek, err)
	}
	lines = append(lines, payload(t, *peek.Messages[0].MessageText))
	equalLines(t, "other partition, before the worker", lines, ex[1])

	if err := drainSet(ctx, t, env, qs, tbl); err != nil {
		t.Fatal(err)
	}
	email, _ := rawPartition(t, tbl.Name(), "email_Sales")
	name, _ := rawPartition(t, tbl.Name(), "name_Sales")
	equalLines(t, "other partition, after the worker", append(email, name...), ex[2])

	// TableWide, 16 buckets (the default).
	tbl = employees(t, env)
	qs = patterntest.Queues(t, env, 1)
	p, err := eventual.New(patterntest.SameQueues(t, env, qs), nil, fast())
	if err != nil {
		t.Fatal(err)
	}
	ws, err := secondaryindex.New(tbl, withProcessor(remoteConfig(nil), p), emailIndex(secondaryindex.TableWide), nameIndex(secondaryindex.TableWide))
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Insert(ctx, john()); err != nil {
		t.Fatal(err)
	}
	drainWide(t, p, qs)
	email, _ = rawPartition(t, tbl.Name(), "email_"+keys.Bucket("jonesj@contoso.com", secondaryindex.DefaultBuckets))
	name, _ = rawPartition(t, tbl.Name(), "name_"+keys.Bucket("Jones", secondaryindex.DefaultBuckets))
	equalLines(t, "table-wide, after the worker", append(email, name...), ex[3])
}

// payload is the payload of a queued message: eventual's envelope is a
// JSON object, sent as is or base64-encoded.
func payload(t testing.TB, text string) string {
	t.Helper()
	body := []byte(text)
	if b, err := base64.StdEncoding.DecodeString(text); err == nil {
		body = b
	}
	var env struct {
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("message %q: %v", text, err)
	}
	return string(env.Payload)
}
