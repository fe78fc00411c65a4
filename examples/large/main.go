// Command large keeps an employee with a 5 MiB photo — more than an entity
// of the Table service may hold (1 MiB) — in a blob that the entity
// references by name, size and SHA-256: the design guide's large entities
// pattern (§6.11), package patterns/large. A queue's worker (package
// patterns/eventual) deletes the blob of a replaced photo; a tampered photo
// is refused.
//
// It runs on the storage account the environment names, creates the table
// EmployeePhotos, the blob container employee-photos and the queue
// photo-cleanup (with its poison queue) if they do not exist, and leaves
// what it wrote there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/large
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/large"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Employees string // table
	Photos    string // blob container
	Cleanup   string // queue, and its poison queue Cleanup + "-poison"
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Employees: "EmployeePhotos", Photos: "employee-photos", Cleanup: "photo-cleanup"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "large example:", err)
		os.Exit(1)
	}
}

// Employee is an employee with a photo too large for an entity: the photo
// lives in a blob, the entity keeps its reference in a property Photo.
type Employee struct {
	Dept  string `table:"PartitionKey,pk"`
	ID    string `table:"RowKey,rk"`
	ETag  string `table:",etag"`
	Name  string
	Title string
	Photo []byte `table:",blob"`
}

// photo returns a 5 MiB "photo" that depends on seed.
func photo(seed byte) []byte {
	b := bytes.Repeat([]byte("JFIF photo of an employee. "), 5<<20/27+1)[:5<<20]
	b[0] = seed
	return b
}

// run tells the story on acct, in the resources names gives, to out.
func run(ctx context.Context, acct *account.Account, names Names, out io.Writer) error {
	// The meter counts what each step costs; a service gives one to
	// account in main, or none.
	meter := cost.NewMeter()
	acct, err := acct.WithOptions(func(o *account.Options) { o.Meter = meter })
	if err != nil {
		return err
	}
	tables, err := acct.TableService()
	if err != nil {
		return err
	}
	queues, err := acct.QueueService()
	if err != nil {
		return err
	}
	tbl, err := entity.NewTableFromService[Employee](tables, names.Employees)
	if err != nil {
		return err
	}
	photos, err := acct.Container(names.Photos)
	if err != nil {
		return err
	}
	cleanup, err := eventual.New(eventual.QueuesOf(queues, names.Cleanup), nil, eventual.Config{})
	if err != nil {
		return err
	}
	// The story's clock, which it moves an hour on; a service leaves
	// Config.Now nil.
	var later atomic.Int64
	emps, err := large.New(tbl, photos, large.Config{
		Processor:   cleanup,
		DeleteDelay: time.Second, // a reader of a replaced photo has a second to finish (the default is a minute)
		Now:         func() time.Time { return time.Now().Add(time.Duration(later.Load())) },
	})
	if err != nil {
		return err
	}
	// The table, the container and the cleanup queues, unless they exist.
	if err := emps.Provision(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "== large: an employee with a 5 MiB photo, more than an entity holds (design guide §6.11)")
	costOf := func(f func() error) (cost.Snapshot, error) {
		before := meter.Snapshot()
		err := f()
		return meter.Snapshot().Sub(before), err
	}
	raw, err := entity.NewTableFromService[entity.DynamicEntity](tables, names.Employees)
	if err != nil {
		return err
	}

	const dept, id = "Engineering", "000123"
	e := Employee{Dept: dept, ID: id, Name: "Jonathan Jones", Title: "Engineer", Photo: photo(1)}
	tx, err := costOf(func() error { return emps.Insert(ctx, &e) })
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "1. Insert %s with a %d MiB photo: %s.\n", e.Name, len(e.Photo)>>20, tx)
	d, err := raw.Get(ctx, dept, id)
	if err != nil {
		return err
	}
	ref, _ := entity.Prop[string](&d, "Photo")
	fmt.Fprintf(out, "   The entity holds Name, Title and Photo = %s…\n", ref[:strings.Index(ref, `"sha256":"`)+len(`"sha256":"`)+8])

	var read Employee
	tx, err = costOf(func() error { read, err = emps.Get(ctx, dept, id); return err })
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "2. Get: %s; photo intact: %v (its SHA-256 checked as it arrived).\n", tx, sha256.Sum256(read.Photo) == sha256.Sum256(e.Photo))

	read.Title = "Principal engineer"
	tx, err = costOf(func() error { return emps.Replace(ctx, &read) })
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "3. Replace of the title: %s; the photo is the same, so it keeps its blob.\n", tx)

	read.Photo = photo(2)
	tx, err = costOf(func() error { return emps.Replace(ctx, &read) })
	if err != nil {
		return err
	}
	// The worker keeps the old photo's blob until it is Config.Grace (an
	// hour) old: the insert that wrote it might still have been resent
	// until then. The story's clock moves an hour on.
	later.Store(int64(time.Hour + time.Minute))
	if err := drain(ctx, cleanup); err != nil {
		return err
	}
	n, err := countBlobs(ctx, photos)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "4. Replace of the photo: %s; an hour later (Config.Grace) the worker deleted the old photo: %d blob left.\n", tx, n)

	// Someone changes one bit of the photo's blob behind the entity's back.
	d, err = raw.Get(ctx, dept, id)
	if err != nil {
		return err
	}
	ref, _ = entity.Prop[string](&d, "Photo")
	start := strings.Index(ref, `"blob":"`) + len(`"blob":"`)
	fake := photo(2)
	fake[len(fake)-1] ^= 1
	if _, err := photos.NewBlockBlobClient(ref[start:start+strings.Index(ref[start:], `"`)]).UploadBuffer(ctx, fake, nil); err != nil {
		return err
	}
	_, err = emps.Get(ctx, dept, id)
	if !errors.Is(err, large.ErrBlobCorrupt) {
		return fmt.Errorf("a read of the tampered photo: %v, want ErrBlobCorrupt", err)
	}
	fmt.Fprintf(out, "5. Someone changes one bit of the photo's blob: Get fails, ErrBlobCorrupt = %v.\n", errors.Is(err, large.ErrBlobCorrupt))

	// The application uploads a new photo; the worker deletes the tampered
	// blob, and the sweep finds nothing left over.
	now, err := raw.Get(ctx, dept, id) // the ETag to replace; the photo cannot be read
	if err != nil {
		return err
	}
	fresh := Employee{Dept: dept, ID: id, ETag: now.ETag, Name: read.Name, Title: read.Title, Photo: photo(3)}
	if err := emps.Replace(ctx, &fresh); err != nil {
		return err
	}
	later.Store(int64(2*time.Hour + time.Minute))
	if err := drain(ctx, cleanup); err != nil {
		return err
	}
	res, err := emps.Sweep(ctx)
	if err != nil {
		return err
	}
	got, err := emps.Get(ctx, dept, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "6. A new photo replaces it: readable again (%v); Sweep listed %d blob, %d referenced, %d orphan deleted.\n",
		got.Photo[0] == 3, res.Blobs, res.Referenced, res.Deleted)
	return nil
}

// drain runs the cleanup queue's worker until the queue is empty.
func drain(ctx context.Context, p *eventual.Processor) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	r, err := p.Drain(ctx)
	if err == nil && r.Poisoned > 0 {
		err = fmt.Errorf("%d cleanup messages poisoned", r.Poisoned)
	}
	return err
}

// countBlobs counts the container's blobs.
func countBlobs(ctx context.Context, c *container.Client) (int, error) {
	n := 0
	for pager := c.NewListBlobsFlatPager(nil); pager.More(); {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return 0, err
		}
		n += len(page.Segment.BlobItems)
	}
	return n, nil
}
