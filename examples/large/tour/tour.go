// Package tour is the large-entities step of tablekit's tour: an employee
// with a 5 MiB photo, more than an entity of the Table service may hold
// (1 MiB), kept in a blob that the entity references by name, size and
// SHA-256 (design guide §6.11). A crash between the upload and the entity
// leaves an orphan that the sweep deletes; a tampered photo is refused.
package tour

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/large"
)

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

// Tour creates its own table, container and queue, runs the story against
// them, printing what happens and what it costs to out, and deletes them.
func Tour(ctx context.Context, env *demo.Env, out io.Writer) (err error) {
	var drops []func() error
	defer func() {
		for _, d := range drops {
			err = errors.Join(err, d())
		}
		if err == nil {
			fmt.Fprintln(out, "Deleted the table, the container and the queues.")
		}
	}()
	client, drop, err := env.ScratchTable(ctx, "largetour")
	if err != nil {
		return err
	}
	drops = append(drops, drop)
	cont, drop, err := env.ScratchContainer(ctx, "largetour")
	if err != nil {
		return err
	}
	drops = append(drops, drop)
	work, drop, err := env.ScratchQueue(ctx, "largetour")
	if err != nil {
		return err
	}
	drops = append(drops, drop)
	qparts, err := azqueue.ParseURL(work.URL())
	if err != nil {
		return err
	}
	bparts, err := blob.ParseURL(cont.URL())
	if err != nil {
		return err
	}
	tparts, err := entity.NewTable[Employee](client)
	if err != nil {
		return err
	}

	fmt.Fprintln(out, "== large: an employee with a 5 MiB photo, more than an entity holds (design guide §6.11)")
	s := &story{ctx: ctx, out: out, env: env, meter: cost.NewMeter(), table: tparts.Name(), container: bparts.ContainerName, queue: qparts.QueueName}
	s.metered = env.With(s.meter.Policy())
	if s.emps, s.cont, s.proc, err = s.open(s.metered, large.Config{}); err != nil {
		return err
	}
	if err := s.proc.CreateQueues(ctx); err != nil {
		return err
	}
	drops = append(drops, func() error {
		_, err := env.QueueService.DeleteQueue(context.WithoutCancel(ctx), s.queue+eventual.PoisonSuffix, nil)
		return err
	})
	return s.run()
}

type story struct {
	ctx                     context.Context
	out                     io.Writer
	env, metered            *demo.Env
	meter                   *cost.Meter
	table, container, queue string
	emps                    *large.Table[Employee]
	cont                    *container.Client
	proc                    *eventual.Processor
	later                   atomic.Int64 // how far the story's clock has moved on
}

// open returns the story's Table through env's clients.
func (s *story) open(env *demo.Env, cfg large.Config) (*large.Table[Employee], *container.Client, *eventual.Processor, error) {
	tbl, err := entity.NewTableFromService[Employee](env.TableService, s.table)
	if err != nil {
		return nil, nil, nil, err
	}
	cont := env.BlobService.ServiceClient().NewContainerClient(s.container)
	p, err := eventual.New(eventual.QueuesOf(env.QueueService, s.queue), nil, eventual.Config{PollInterval: 20 * time.Millisecond, MaxPollInterval: 200 * time.Millisecond})
	if err != nil {
		return nil, nil, nil, err
	}
	cfg.DeleteDelay = time.Second // readers of a replaced photo have a second to finish: a tour's minute
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Now().Add(time.Duration(s.later.Load())) }
	}
	cfg.Processor = p
	emps, err := large.New(tbl, cont, cfg)
	return emps, cont, p, err
}

// cost runs f and says how many storage transactions it took.
func (s *story) cost(f func() error) (cost.Snapshot, error) {
	before := s.meter.Snapshot()
	err := f()
	return s.meter.Snapshot().Sub(before), err
}

// blobs counts the container's blobs.
func (s *story) blobs() (int, error) {
	n := 0
	for pager := s.cont.NewListBlobsFlatPager(nil); pager.More(); {
		page, err := pager.NextPage(s.ctx)
		if err != nil {
			return 0, err
		}
		n += len(page.Segment.BlobItems)
	}
	return n, nil
}

// work runs the processor's workers until the container holds want blobs
// (the replaced ones deleted), for at most a minute.
func (s *story) work(want int) (int, error) {
	ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.proc.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for {
		n, err := s.blobs()
		if err != nil || n == want {
			return n, err
		}
		select {
		case <-ctx.Done():
			return n, nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *story) run() error {
	const dept, id = "Engineering", "000123"
	e := Employee{Dept: dept, ID: id, Name: "Jonathan Jones", Title: "Engineer", Photo: photo(1)}
	tx, err := s.cost(func() error { return s.emps.Insert(s.ctx, &e) })
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "1. Insert %s with a %d MiB photo: %s.\n", e.Name, len(e.Photo)>>20, tx)
	d, err := s.stored(dept, id)
	if err != nil {
		return err
	}
	ref := d.Properties["Photo"].(string)
	fmt.Fprintf(s.out, "   The entity holds Name, Title and Photo = %s…\n", ref[:strings.Index(ref, `"sha256":"`)+len(`"sha256":"`)+8])

	var read Employee
	tx, err = s.cost(func() error { read, err = s.emps.Get(s.ctx, dept, id); return err })
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "2. Get: %s; photo intact: %v (its SHA-256 checked as it arrived).\n", tx, sha256.Sum256(read.Photo) == sha256.Sum256(e.Photo))

	read.Title = "Principal engineer"
	tx, err = s.cost(func() error { return s.emps.Replace(s.ctx, &read) })
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "3. Replace of the title: %s; the photo is the same, so it keeps its blob.\n", tx)

	read.Photo = photo(2)
	tx, err = s.cost(func() error { return s.emps.Replace(s.ctx, &read) })
	if err != nil {
		return err
	}
	// The worker keeps the old photo's blob until it is Config.Grace (an
	// hour) old: the insert that wrote it might still have been resent
	// until then. The story's clock moves an hour on.
	s.later.Store(int64(time.Hour + time.Minute))
	n, err := s.work(1)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "4. Replace of the photo: %s; an hour later (Config.Grace) a worker deleted the old photo: %d blob left.\n", tx, n)

	if err := s.crash(dept, id, read); err != nil {
		return err
	}
	if err := s.tamper(dept, id); err != nil {
		return err
	}
	tx, err = s.cost(func() error { return s.emps.Delete(s.ctx, dept, id, entity.AnyETag) })
	if err != nil {
		return err
	}
	if n, err = s.work(0); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "7. Delete: %s; then a worker deleted the photo: %d blobs left.\n", tx, n)
	return nil
}

// stored reads the entity as the service stores it.
func (s *story) stored(dept, id string) (entity.DynamicEntity, error) {
	raw, err := entity.NewTableFromService[entity.DynamicEntity](s.env.TableService, s.table)
	if err != nil {
		return entity.DynamicEntity{}, err
	}
	return raw.Get(s.ctx, dept, id)
}

// crash runs a replace that dies after uploading its photo, before writing
// the entity: the employee still reads whole, and the sweep deletes the
// orphan once it is older than the grace period.
func (s *story) crash(dept, id string, e Employee) error {
	killer := demo.NewKiller(2) // the read and the upload get through
	emps, _, _, err := s.open(s.env.With(killer), large.Config{})
	if err != nil {
		return err
	}
	e.Photo = photo(3)
	err = emps.Replace(s.ctx, &e)
	if !errors.Is(err, demo.ErrKilled) {
		return fmt.Errorf("the crashing replace: %v", err)
	}
	n, err := s.blobs()
	if err != nil {
		return err
	}
	got, err := s.emps.Get(s.ctx, dept, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "5. A replace crashed after uploading a new photo: %d blobs; the employee still reads whole, with the photo of step 4: %v.\n",
		n, got.Photo[0] == 2)
	// An hour later, the sweep: orphans older than the grace period go.
	later, _, _, err := s.open(s.env, large.Config{Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	if err != nil {
		return err
	}
	res, err := later.Sweep(s.ctx)
	if err != nil {
		return err
	}
	if n, err = s.blobs(); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "   Sweep, past the one-hour grace period: %d blobs listed, %d referenced, %d orphan deleted; %d blob left.\n", res.Blobs, res.Referenced, res.Deleted, n)
	return nil
}

// tamper changes the photo's blob behind the entity's back: the read
// refuses it.
func (s *story) tamper(dept, id string) error {
	d, err := s.stored(dept, id)
	if err != nil {
		return err
	}
	ref := d.Properties["Photo"].(string)
	start := strings.Index(ref, `"blob":"`) + len(`"blob":"`)
	name := ref[start : start+strings.Index(ref[start:], `"`)]
	fake := photo(2)
	fake[len(fake)-1] ^= 1
	if _, err := s.cont.NewBlockBlobClient(name).UploadBuffer(s.ctx, fake, nil); err != nil {
		return err
	}
	_, err = s.emps.Get(s.ctx, dept, id)
	fmt.Fprintf(s.out, "6. Someone changes one bit of the photo's blob: Get fails, ErrBlobCorrupt = %v.\n", errors.Is(err, large.ErrBlobCorrupt))
	return nil
}
