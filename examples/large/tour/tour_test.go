package tour_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/large/tour"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

func TestTour(t *testing.T) {
	var out strings.Builder
	if err := tour.Tour(context.Background(), demo.New(env.Account(), env.ConnectionString), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`1\. Insert Jonathan Jones with a 5 MiB photo: 2 transactions: blob PutBlob=1, table Insert=1\.`),
		regexp.MustCompile(`Photo = \{"blob":"[^"]+/Engineering/000123/Photo/[0-9a-f-]{36}","size":5242880,"sha256":"[0-9a-f]{8}…`),
		regexp.MustCompile(`2\. Get: 2 transactions: blob GetBlob=1, table Get=1; photo intact: true`),
		regexp.MustCompile(`3\. Replace of the title: 2 transactions: table Get=1, table Update=1;`),
		regexp.MustCompile(`4\. Replace of the photo: 4 transactions: blob PutBlob=1, queue PutMessage=1, table Get=1, table Update=1; an hour later \(Config\.Grace\) a worker deleted the old photo: 1 blob left\.`),
		regexp.MustCompile(`5\. A replace crashed after uploading a new photo: 2 blobs; the employee still reads whole, with the photo of step 4: true\.`),
		regexp.MustCompile(`Sweep, past the one-hour grace period: 2 blobs listed, 1 referenced, 1 orphan deleted; 1 blob left\.`),
		regexp.MustCompile(`6\. .*ErrBlobCorrupt = true\.`),
		regexp.MustCompile(`7\. Delete: 3 transactions: queue PutMessage=1, table Delete=1, table Get=1; then a worker deleted the photo: 0 blobs left\.`),
		regexp.MustCompile(`Deleted the table, the container and the queues\.`),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("output lacks %s", want)
		}
	}
	t.Log("\n" + out.String())
}
