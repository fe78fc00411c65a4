package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/bloblog"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program's story as main does, on the test account with
// a container of its own, and checks what it says and what it leaves.
func TestRun(t *testing.T) {
	names := Names{Logs: env.ContainerName(t)}
	t.Cleanup(func() {
		if _, err := env.BlobService.DeleteContainer(context.Background(), names.Logs, nil); err != nil {
			t.Error(err)
		}
	})
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`Logged 9000 records \(3 hours\) in 21 storage transactions: 6 blob creations, 9 appends of up to 128 KiB, 3 metadata updates, 3 listings.`),
		regexp.MustCompile(`As table entities, 9000 records are 90 transactions`),
		regexp.MustCompile(`   queue/2014/07/31/1800/000001.log +\d+ bytes  18:00:00.0 to 18:\d\d:\d\d.\d\n   queue/2014/07/31/1800/000002.log .* to 18:59:58.8\n   queue/2014/07/31/1900/000001.log .*\n   queue/2014/07/31/1900/000002.log .*\n   queue/2014/07/31/2000/000001.log .*\n   queue/2014/07/31/2000/000002.log .* to 20:59:58.8\n`),
		regexp.MustCompile(`Reading 19:20 to 19:35: 750 records. Of hour 19's 2 blobs, the metadata ruled out 1; listings: 1, downloads: 1.`),
		regexp.MustCompile(`first: 19:20:00.0 GetMessages .* message=0004000\n   last:  19:34:58.8 GetMessages .* message=0004749\n`),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("output lacks %s", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}

	// The container holds every record once, in order, read with a reader
	// on a client of its own.
	c := env.BlobService.ServiceClient().NewContainerClient(names.Logs)
	r, err := bloblog.NewReader(c, bloblog.Config{Service: "queue"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	n := 0
	for rec, err := range r.Read(t.Context(), start, start.Add(3*time.Hour)) {
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("message=%07d", n); !strings.HasSuffix(string(rec.Data), want) {
			t.Fatalf("record %d is %q, want it to end with %s", n, rec.Data, want)
		}
		n++
	}
	if n != 9000 {
		t.Errorf("the container holds %d records, want 9000", n)
	}
}
