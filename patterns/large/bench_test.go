package large_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/keys"
)

// Benchmarks of an employee with a 5 MiB photo beside the same bytes
// handled with raw azblob and aztables, on the same Azurite in the same
// run:
//
//	go test -run '^$' -bench . -benchtime 50x ./patterns/large/

const photoSize = 5 << 20

// benchFixture is a metered fixture holding one employee with a 5 MiB
// photo.
func benchFixture(b *testing.B) (*fixture, *cost.Meter, string) {
	b.Helper()
	meter := cost.NewMeter()
	f := newFixture(b, testConfig()).on(b, env.With(meter.Policy()))
	e := Employee{Dept: "Sales", ID: "000123", Name: "Jones", Photo: payload(9, photoSize)}
	if err := f.emps.Insert(context.Background(), &e); err != nil {
		b.Fatal(err)
	}
	return f, meter, photoBlob(b, f)
}

func reportTx(b *testing.B, meter *cost.Meter, before cost.Snapshot) {
	b.ReportMetric(float64(meter.Snapshot().Sub(before).Total())/float64(b.N), "storage-tx/op")
}

// BenchmarkRead reads the employee and its photo, SHA-256 checked, beside a
// plain download of the same blob into a buffer of its size (raw). MB/s is
// the photo's bytes. tablekit is a Table that has seen the employee
// before, which starts the photo's download while it reads the entity;
// tablekit-cold one that has not (Config.Hints < 0): the entity's read,
// then the photo's.
func BenchmarkRead(b *testing.B) {
	ctx := context.Background()
	f, meter, name := benchFixture(b)
	get := func(f *fixture) func(b *testing.B) {
		return func(b *testing.B) {
			b.SetBytes(photoSize)
			before := meter.Snapshot()
			for b.Loop() {
				e, err := f.emps.Get(ctx, "Sales", "000123")
				if err != nil || len(e.Photo) != photoSize {
					b.Fatal(err)
				}
			}
			reportTx(b, meter, before)
		}
	}
	cold := *f
	cold.cfg.Hints = -1
	b.Run("tablekit", get(f))
	b.Run("tablekit-cold", get(cold.on(b, f.env)))
	b.Run("raw", func(b *testing.B) {
		b.SetBytes(photoSize)
		blob := f.cont.NewBlobClient(name)
		before := meter.Snapshot()
		for b.Loop() {
			resp, err := blob.DownloadStream(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			buf := bytes.NewBuffer(make([]byte, 0, *resp.ContentLength))
			_, err = io.Copy(buf, resp.Body)
			resp.Body.Close()
			if err != nil || buf.Len() != photoSize {
				b.Fatal(err)
			}
		}
		reportTx(b, meter, before)
	})
}

// BenchmarkWrite inserts a new employee with a 5 MiB photo per op
// (tablekit: the photo hashed and uploaded, then the entity with its
// reference), beside an upload of the photo and an aztables insert of an
// entity naming it (raw: no hash, no check).
func BenchmarkWrite(b *testing.B) {
	ctx := context.Background()
	f, meter, _ := benchFixture(b)
	photo := payload(10, photoSize)
	i := 0 // a new employee per op, across the runs of -count
	b.Run("tablekit", func(b *testing.B) {
		b.SetBytes(photoSize)
		before := meter.Snapshot()
		for b.Loop() {
			e := Employee{Dept: "Bench", ID: keys.Pad(int64(i), 6), Name: "Jones", Photo: photo}
			if err := f.emps.Insert(ctx, &e); err != nil {
				b.Fatal(err)
			}
			i++
		}
		reportTx(b, meter, before)
	})
	b.Run("raw", func(b *testing.B) {
		b.SetBytes(photoSize)
		before := meter.Snapshot()
		for b.Loop() {
			name := "raw/" + uuid.NewString()
			if _, err := f.cont.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(photo)), nil); err != nil {
				b.Fatal(err)
			}
			body, err := json.Marshal(aztables.EDMEntity{
				Entity:     aztables.Entity{PartitionKey: "Raw", RowKey: keys.Pad(int64(i), 6)},
				Properties: map[string]any{"Name": "Jones", "Photo": name},
			})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.client.AddEntity(ctx, body, nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
		reportTx(b, meter, before)
	})
}
