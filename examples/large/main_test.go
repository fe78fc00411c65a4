package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program's story as main does, on the test account with
// a table, a container and queues of its own, and checks what it says and
// what it leaves.
func TestRun(t *testing.T) {
	names := Names{Employees: env.TableName(t), Photos: env.ContainerName(t), Cleanup: env.QueueName(t)}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = env.BlobService.DeleteContainer(ctx, names.Photos, nil)
		_, _ = env.QueueService.DeleteQueue(ctx, names.Cleanup, nil)
		_, _ = env.QueueService.DeleteQueue(ctx, names.Cleanup+"-poison", nil)
	})
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`1\. Insert Jonathan Jones with a 5 MiB photo: 2 transactions: blob PutBlob=1, table Insert=1\.`),
		regexp.MustCompile(`Photo = \{"blob":"[^"]+/Engineering/000123/Photo/[0-9a-f-]{36}","size":5242880,"sha256":"[0-9a-f]{8}…`),
		regexp.MustCompile(`2\. Get: 2 transactions: blob GetBlob=1, table Get=1; photo intact: true`),
		regexp.MustCompile(`3\. Replace of the title: 2 transactions: table Get=1, table Update=1;`),
		regexp.MustCompile(`4\. Replace of the photo: 4 transactions: blob PutBlob=1, queue PutMessage=1, table Get=1, table Update=1; an hour later \(Config\.Grace\) the worker deleted the old photo: 1 blob left\.`),
		regexp.MustCompile(`5\. .*ErrBlobCorrupt = true\.`),
		regexp.MustCompile(`6\. A new photo replaces it: readable again \(true\); Sweep listed 1 blob, 1 referenced, 0 orphan deleted\.`),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("output lacks %s", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}

	// What the account holds, read with clients of its own: the entity,
	// the one blob it references, whose content has the SHA-256 it names,
	// and no message left in the queues.
	raw, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, names.Employees)
	if err != nil {
		t.Fatal(err)
	}
	e, err := raw.Get(t.Context(), "Engineering", "000123")
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := entity.Prop[string](&e, "Photo")
	c := env.BlobService.ServiceClient().NewContainerClient(names.Photos)
	var blobs []string
	for p := c.NewListBlobsFlatPager(nil); p.More(); {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Segment.BlobItems {
			blobs = append(blobs, *b.Name)
		}
	}
	if len(blobs) != 1 || !strings.Contains(ref, `"blob":"`+blobs[0]+`"`) {
		t.Fatalf("blobs %q, reference %s", blobs, ref)
	}
	resp, err := c.NewBlobClient(blobs[0]).DownloadStream(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if data[0] != 3 || !strings.Contains(ref, hex.EncodeToString(sum[:])) {
		t.Errorf("the blob holds photo %d, its SHA-256 is not the one referenced", data[0])
	}
	for _, q := range []string{names.Cleanup, names.Cleanup + "-poison"} {
		props, err := env.QueueService.NewQueueClient(q).GetProperties(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := *props.ApproximateMessagesCount; n != 0 {
			t.Errorf("queue %s holds %d messages", q, n)
		}
	}
}
