package large_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/large"
)

// docExample returns example i (from 0) of the package doc's Wire format
// section: its indented lines, without the comment markers.
func docExample(t *testing.T, i int) []string {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(src), "\n") {
		switch {
		case strings.HasPrefix(line, "//\tentity "):
			out = []string{strings.TrimPrefix(line, "//\t")}
		case len(out) > 0 && strings.HasPrefix(line, "//\t"):
			out = append(out, strings.TrimPrefix(line, "//\t"))
		case len(out) > 0 && i > 0:
			out, i = nil, i-1
		case len(out) > 0:
			return out
		}
	}
	t.Fatalf("doc.go has no wire format example %d", i)
	return nil
}

// staffOn returns a Table of Staff on f's table, container and processor,
// with the prefix of the doc's example.
func staffOn(t *testing.T, f *fixture, sum large.Checksum) *large.Table[Staff] {
	t.Helper()
	tbl, err := entity.NewTableFromService[Staff](env.TableService, f.table)
	if err != nil {
		t.Fatal(err)
	}
	staff, err := large.New(tbl, f.cont, large.Config{Processor: f.proc, Prefix: "employees/", DeleteDelay: -1, Grace: -1, Checksum: sum})
	if err != nil {
		t.Fatal(err)
	}
	return staff
}

// disposalKind is the kind of the disposal messages of f's container and
// the prefix, as the Wire format section says it is made.
func disposalKind(f *fixture, prefix string) string {
	sum := sha256.Sum256([]byte(f.cont.URL() + "\n" + prefix))
	return "tablekit.large.v1." + f.blobs + "." + hex.EncodeToString(sum[:4])
}

// The package doc's Wire format examples are exactly what the code
// writes, with each Config.Checksum: the entity's properties and the
// blob's name, content and metadata read back with raw aztables and
// azblob clients, and the message Delete sends peeked with a raw azqueue
// client, only the random parts masked.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	for i, sum := range []large.Checksum{large.ChecksumSHA256, large.ChecksumCRC32C} {
		t.Run(sum.String(), func(t *testing.T) {
			t.Parallel()
			testWireFormat(t, sum, docExample(t, i))
		})
	}
}

func testWireFormat(t *testing.T, sum large.Checksum, want []string) {
	ctx := context.Background()
	f := newFixture(t, testConfig())
	staff := staffOn(t, f, sum)
	e := Staff{Dept: "Sales", ID: "Ü'1", Name: "Jones", Photo: []byte("hello")}
	if err := staff.Insert(ctx, &e); err != nil {
		t.Fatal(err)
	}
	var version string
	mask := func(s string) string {
		if version == "" {
			return s
		}
		return strings.ReplaceAll(s, version, "<version>")
	}
	var lines []string
	add := func(head, format string, args ...any) {
		lines = append(lines, fmt.Sprintf("%-10s", head)+mask(fmt.Sprintf(format, args...)))
	}

	// The entity, as the service returns it.
	pager := f.client.NewListEntitiesPager(nil)
	var bodies [][]byte
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, page.Entities...)
	}
	if len(bodies) != 1 {
		t.Fatalf("%d entities, want 1", len(bodies))
	}
	var props map[string]any
	if err := json.Unmarshal(bodies[0], &props); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for name := range props {
		if !strings.HasPrefix(name, "odata.") && !strings.Contains(name, "@odata.") && name != "Timestamp" && name != "PartitionKey" && name != "RowKey" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if photo, ok := props["Photo"].(string); ok {
		version = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).FindString(photo)
	}
	for i, name := range append([]string{"PartitionKey", "RowKey"}, names...) {
		v, ok := props[name].(string)
		if !ok {
			t.Errorf("property %s is %T, not a String", name, props[name])
		}
		if name == "TkWrite" {
			v = "<write token>"
		}
		add(map[bool]string{true: "entity", false: ""}[i == 0], "%s: %s", name, v)
	}

	// The blob, its content and metadata.
	var blobName string
	var md map[string]*string
	for pager := f.cont.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Metadata: true}}); pager.More(); {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Segment.BlobItems {
			if blobName != "" {
				t.Fatalf("a second blob %s", *b.Name)
			}
			blobName, md = *b.Name, b.Metadata
		}
	}
	resp, err := f.cont.NewBlobClient(blobName).DownloadStream(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	content := make([]byte, 64)
	n, _ := resp.Body.Read(content)
	resp.Body.Close()
	add("blob", "%s", blobName)
	add("", "content: %s", content[:n])
	keys := []string{"tablekitpk", "tablekitrk", "tablekitprop", "tablekitsha256", "tablekitcrc32c"}
	for k, v := range md {
		if !slices.Contains(keys, strings.ToLower(k)) {
			t.Errorf("the blob has metadata %s = %q the doc does not name", k, *v)
		}
		md[strings.ToLower(k)] = v
	}
	for _, k := range keys {
		if v := md[k]; v != nil {
			add("", "%s: %s", k, *v)
		}
	}

	// The message Delete sends.
	if err := staff.Delete(ctx, "Sales", "Ü'1", entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	q := eventual.QueuesOf(env.QueueService, f.queue)[0].Work
	peeked, err := q.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	if err != nil {
		t.Fatal(err)
	}
	if len(peeked.Messages) != 1 {
		t.Fatalf("%d messages after the Delete, want 1", len(peeked.Messages))
	}
	text, err := base64.StdEncoding.DecodeString(*peeked.Messages[0].MessageText)
	if err != nil {
		t.Fatal(err)
	}
	var envelope struct {
		Kind    string          `json:"kind"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(text, &envelope); err != nil {
		t.Fatal(err)
	}
	kind := envelope.Kind
	if kind == disposalKind(f, "employees/") {
		kind = "tablekit.large.v1.<container>.<hash>"
	}
	add("message", "kind: %s", kind)
	add("", "payload: %s", envelope.Payload)

	if !slices.Equal(lines, want) {
		t.Errorf("written:\n\t%s\nthe doc's example:\n\t%s", strings.Join(lines, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// A disposal message as older versions sent it — "blobs" without
// "entity", of the kind the Wire format section names — is read through
// the blobs' metadata: the blob its entity no longer references is
// deleted, the one it references stays.
func TestOlderDisposalMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, testConfig())
	staff := staffOn(t, f, large.ChecksumSHA256)
	var names []string
	for _, id := range []string{"1", "2"} {
		e := Staff{Dept: "Sales", ID: id, Name: "Jones", Photo: []byte("photo " + id)}
		if err := staff.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
		got, err := staff.Get(ctx, "Sales", id)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, f.rawRefs(t)["Sales/"+id+"/Photo"].Blob)
		if id == "1" { // no photo any more; its blob is left over
			got.Photo = nil
			if err := staff.Replace(ctx, &got); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The Replace's own message would delete the first blob: drop it.
	q := eventual.QueuesOf(env.QueueService, f.queue)[0].Work
	if _, err := q.ClearMessages(ctx, nil); err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string][]string{"blobs": names})
	m, err := eventual.NewKind[json.RawMessage](disposalKind(f, "employees/")).Message(payload)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.proc.Enqueue(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := f.drain(ctx); err != nil {
		t.Fatal(err)
	}
	left := f.blobNames(t)
	if !slices.Equal(left, names[1:]) {
		t.Errorf("blobs left %q, want the referenced %q", left, names[1:])
	}
	if m := f.missing(t); len(m) > 0 {
		t.Errorf("references to missing blobs %q", m)
	}
}
