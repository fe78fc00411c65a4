package backup_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/integration/crashtest"
)

// ExportBlob killed at every storage request of its blob writes (the
// table reads go on healthy clients), and called again, ends with a blob
// whose bytes are those of an export that did not crash.
func TestExportBlobResumesAfterACrashAtEveryRequest(t *testing.T) {
	src := newTable(t)
	load(t, src, sized(300))
	opts := backup.ExportOptions{SegmentEntities: sized(100)}
	whole := export(t, src, opts)
	cont := env.Container(t)
	// Requests of one uncrashed run: properties, then per segment a stage
	// and a commit (4 segments: 3 of a third of the entities and the
	// header's).
	counter := crashtest.NewKiller(-1)
	name := "count.gz"
	bb := env.With(counter).BlobService.ServiceClient().NewContainerClient(containerName(cont.URL())).NewBlockBlobClient(name)
	if _, err := backup.ExportBlob(t.Context(), src, bb, opts); err != nil {
		t.Fatal(err)
	}
	n := counter.Passed()
	if n < 4 {
		t.Fatalf("an uncrashed ExportBlob made %d blob requests", n)
	}
	for k := range n {
		for _, executed := range []bool{false, true} {
			t.Run(fmt.Sprintf("k=%d executed=%v", k, executed), func(t *testing.T) {
				name := fmt.Sprintf("b-%d-%v.gz", k, executed)
				killer := crashtest.NewKiller(k)
				if executed {
					killer = crashtest.NewExecutedKiller(k)
				}
				dead := env.With(killer).BlobService.ServiceClient().NewContainerClient(containerName(cont.URL())).NewBlockBlobClient(name)
				if _, err := backup.ExportBlob(t.Context(), src, dead, opts); !errors.Is(err, crashtest.ErrKilled) {
					t.Fatalf("crashed run: %v", err)
				}
				healthy := cont.NewBlockBlobClient(name)
				if _, err := backup.ExportBlob(t.Context(), src, healthy, opts); err != nil {
					t.Fatalf("resumed run: %v", err)
				}
				resp, err := healthy.DownloadStream(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !bytes.Equal(got, whole) {
					t.Fatalf("resumed blob has %d bytes, the uncrashed export %d", len(got), len(whole))
				}
				// A finished export called again writes nothing more.
				if _, err := backup.ExportBlob(t.Context(), src, healthy, opts); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func containerName(u string) string {
	// .../devstoreaccount1/<container>
	for i := len(u) - 1; i >= 0; i-- {
		if u[i] == '/' {
			return u[i+1:]
		}
	}
	return u
}
