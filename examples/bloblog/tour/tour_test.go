package tour_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/bloblog/tour"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

func TestTour(t *testing.T) {
	ctx := context.Background()
	var out strings.Builder
	if err := tour.Tour(ctx, demo.New(env.Account(), env.ConnectionString), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`Logged 9000 records \(3 hours\) in 22 storage transactions: 6 blob creations, 9 appends of up to 128 KiB, 3 metadata updates, 3 listings.`),
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
	// The tour leaves no container behind.
	for p := env.BlobService.NewListContainersPager(nil); p.More(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page.ContainerItems {
			if strings.HasPrefix(*c.Name, "bloblogtour") {
				t.Errorf("container %s left behind", *c.Name)
			}
		}
	}
}
