package bloblog_test

import (
	"context"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/patterns/bloblog"
)

// TestWireFormat: the package doc's Wire format example is exactly what a
// Logger writes — the blob's name and type, its metadata and its bytes —
// read back with a raw azblob client; only the Logger's random id is
// masked.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := containerOf(env, newContainer(t))
	logs, err := bloblog.New(ctx, c, bloblog.Config{Service: "queue"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2014, 7, 31, 18, 0, 0, 123456789, time.UTC)
	if err := logs.Append(at, []byte("GET /orders 200")); err != nil {
		t.Fatal(err)
	}
	if err := logs.Append(time.Date(2014, 7, 31, 18, 5, 0, 0, time.UTC), []byte("two\nlines")); err != nil {
		t.Fatal(err)
	}
	if err := logs.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	include := container.ListBlobsInclude{Metadata: true}
	for p := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: include}); p.More(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Segment.BlobItems {
			got = append(got, "blob "+*it.Name+" ("+string(*it.Properties.BlobType)+")")
			var meta []string
			for k, v := range it.Metadata {
				meta = append(meta, strings.ToLower(k)+"="+*v)
			}
			slices.Sort(meta)
			got = append(got, "metadata "+strings.Join(meta, " "))
			resp, err := c.NewBlobClient(*it.Name).DownloadStream(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			for line := range strings.Lines(string(body)) {
				got = append(got, strings.ReplaceAll(line, "\n", `\n`))
			}
		}
	}
	id := regexp.MustCompile(`bloblogwriter=[0-9a-f-]{36}`)
	for i := range got {
		got[i] = id.ReplaceAllString(got[i], "bloblogwriter=<id>")
	}
	want := wireExample(t)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("written:\n%s\ndoc.go says:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// wireExample returns the indented lines of the doc's Wire format section.
func wireExample(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		switch {
		case line == "// # Wire format":
			in = true
		case in && strings.HasPrefix(line, "// # "):
			return out
		case in && strings.HasPrefix(line, "//\t"):
			out = append(out, strings.TrimPrefix(line, "//\t"))
		}
	}
	t.Fatal("doc.go has no wire format example")
	return nil
}
