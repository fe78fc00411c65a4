package indexentity_test

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
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
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
// Timestamp and TkWrite left out.
func canonical(t testing.TB, raw []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
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
	return b.String()
}

// rawLists returns the index entities of partition pk of table name
// (RowKeys starting "lastname_") as canonical lines, read with a plain
// aztables client.
func rawLists(t testing.TB, name, pk string) []string { return rawListsOf(t, name, pk, "lastname_") }

// rawListsOf is rawLists of the index entities whose RowKeys start with
// prefix.
func rawListsOf(t testing.TB, name, pk, prefix string) []string {
	t.Helper()
	f := "PartitionKey eq '" + pk + "'"
	pager := env.TableService.NewClient(name).NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f})
	var lines []string
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entities {
			var k struct{ RowKey string }
			if err := json.Unmarshal(e, &k); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(k.RowKey, prefix) {
				lines = append(lines, canonical(t, e))
			}
		}
	}
	return lines
}

func equalLines(t testing.TB, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: storage holds\n%s\nthe doc says\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWireFormat: the package doc's Wire format examples are exactly
// what a Set writes, read back with raw clients: the index entities of a
// SamePartition index and of an OtherPartition one, a spilled list, a
// Blob index's blob, and a message's payload as queued.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ex := docExamples(t)
	if len(ex) != 5 || len(ex[0]) != 2 || len(ex[1]) != 3 || len(ex[2]) != 3 || len(ex[3]) != 1 {
		t.Fatalf("the doc's examples: %q", ex)
	}
	guide := []Employee{
		{PartitionKey: "Sales", RowKey: "000123", LastName: "Jones"},
		{PartitionKey: "Sales", RowKey: "000152", LastName: "Jones"},
		{PartitionKey: "Sales", RowKey: "000140", LastName: "Smith"},
	}

	local := newFixture(t, driftCases[0])
	local.insert(t, guide...)
	equalLines(t, "same partition", rawLists(t, local.w.emps.Name(), "Sales"), ex[0])

	other := newFixture(t, driftCases[1])
	if err := other.s.Insert(ctx, &guide[0]); err != nil {
		t.Fatal(err)
	}
	peek, err := other.w.qs[0].Work.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(2))})
	if err != nil || len(peek.Messages) != 1 {
		t.Fatalf("queued: %v, %v", peek, err)
	}
	equalLines(t, "message payload", []string{payload(t, *peek.Messages[0].MessageText)}, ex[3])
	other.settle(t)
	other.insert(t, guide[1:]...)
	var want []string
	for _, l := range ex[0] {
		want = append(want, strings.Replace(l, `"PartitionKey":"Sales"`, `"PartitionKey":"lastname_Sales"`, 1))
	}
	equalLines(t, "other partition", rawLists(t, other.w.entries.Name(), "lastname_Sales"), want)

	spill := newFixture(t, driftCases[0])
	indexentity.SetMaxEntityBytes(spill.s, 400)
	spill.insert(t,
		Employee{PartitionKey: "Sales", RowKey: "000001", LastName: "Jones"},
		Employee{PartitionKey: "Sales", RowKey: "000002", LastName: "Jones"},
		Employee{PartitionKey: "Sales", RowKey: "000003", LastName: "Jones"},
	)
	equalLines(t, "a spilled list", rawLists(t, spill.w.emps.Name(), "Sales"), ex[1])

	blob := newFixture(t, driftCases[3])
	blob.insert(t, guide...)
	text, ok := rawBlob(t, blob.w.blobs(env), "lastname/Sales Jones.keys")
	if !ok || text != strings.Join(ex[2], "\n")+"\n" {
		t.Errorf("the blob holds %q (found %t), the doc says %q", text, ok, strings.Join(ex[2], "\n")+"\n")
	}
	props, err := blob.w.blobs(env).NewBlobClient("lastname/Sales Jones.keys").GetProperties(ctx, nil)
	if err != nil || props.ContentType == nil || *props.ContentType != "text/plain; charset=utf-8" {
		t.Errorf("the blob's content type: %v, %v", props.ContentType, err)
	}
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

// TestWireFormatTableWide: the doc's example of a TableWide index is
// what a Set writes, read back with a plain client.
func TestWireFormatTableWide(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ex := docExamples(t)
	if len(ex) != 5 || len(ex[4]) != 2 {
		t.Fatalf("the doc's examples: %q", ex)
	}
	w := newWideWorld(t, 2)
	s, p := w.set(t, env, patterntest.Fast())
	for _, e := range []Employee{
		{PartitionKey: "Sales", RowKey: "000123", City: "Paris"},
		{PartitionKey: "Sales", RowKey: "000152", City: "Paris"},
		{PartitionKey: "HR", RowKey: "000007", City: "Paris"},
	} {
		if err := s.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	if err := patterntest.Drain(ctx, p, w.qs); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, pk := range []string{"city_Paris 0", "city_Paris 1"} {
		got = append(got, rawListsOf(t, w.entries.Name(), pk, "city_")...)
	}
	equalLines(t, "table-wide", got, ex[4])
}
