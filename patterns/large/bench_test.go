package large_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/json"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/large"
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

// measure starts counting an op's storage transactions and this
// process's CPU time (Azurite runs in another process: only the client's
// counts); the returned function reports both per op.
func measure(b *testing.B, meter *cost.Meter) func() {
	before, cpu := meter.Snapshot(), cpuNow()
	return func() {
		b.ReportMetric(float64(meter.Snapshot().Sub(before).Total())/float64(b.N), "storage-tx/op")
		b.ReportMetric(float64((cpuNow()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRead reads the employee and its photo, checked, beside a plain
// download of the same blob into a buffer of its size (raw: one
// allocation, no growth, no check). MB/s is the photo's bytes. tablekit is
// a Table with the default Config.Checksum (SHA-256) that has seen the
// employee before, which starts the photo's download while it reads the
// entity; tablekit-cold one that has not (Config.Hints < 0): the entity's
// read, then the photo's; tablekit-crc32c reads an employee written with
// ChecksumCRC32C. raw-sha256 is raw followed by the SHA-256 of the bytes:
// the least CPU any read that checks the value against a recorded SHA-256
// can cost (its MB/s, with the hash after the transfer, is not
// comparable).
//
// On Azurite the photo comes from memory over the loopback interface at
// several hundred MB/s, as fast as SHA-256 runs: the checksum's CPU time
// (cpu-µs/op) decides the ratio, on a machine whose cores Azurite shares.
// See the package doc's Speed paragraph for the numbers of one run.
func BenchmarkRead(b *testing.B) { benchmarkRead(b, 0) }

// BenchmarkReadThrottled is BenchmarkRead with the blob downloads of both
// held to 60 MiB/s, the service's documented target for one blob: the
// transfer, not the client's CPU, sets the pace, as on a storage account.
func BenchmarkReadThrottled(b *testing.B) { benchmarkRead(b, 60<<20) }

func benchmarkRead(b *testing.B, rate float64) {
	ctx := context.Background()
	meter := cost.NewMeter()
	var policies []policy.Policy
	policies = append(policies, meter.Policy())
	if rate > 0 {
		policies = append(policies, throttle{rate})
	}
	f := newFixture(b, testConfig()).on(b, env.With(policies...))
	// One employee per checksum, each written by a Table of that
	// Config.Checksum (and read by it: any Table reads either).
	tables := map[large.Checksum]*fixture{}
	for i, c := range []large.Checksum{large.ChecksumSHA256, large.ChecksumCRC32C} {
		g := *f
		g.cfg.Checksum = c
		tables[c] = g.on(b, f.env)
		if err := tables[c].emps.Insert(ctx, &Employee{Dept: "Sales", ID: keys.Pad(int64(i), 6), Name: "Jones", Photo: payload(9, photoSize)}); err != nil {
			b.Fatal(err)
		}
	}
	name := f.rawRefs(b)["Sales/000000/Photo"].Blob
	get := func(f *fixture, id string) func(b *testing.B) {
		return func(b *testing.B) {
			b.SetBytes(photoSize)
			report := measure(b, meter)
			for b.Loop() {
				e, err := f.emps.Get(ctx, "Sales", id)
				if err != nil || len(e.Photo) != photoSize {
					b.Fatal(err)
				}
			}
			report()
		}
	}
	// Warm up Azurite and both processes, so that the first
	// sub-benchmark does not pay for the upload just made.
	for range 5 {
		for i, c := range []large.Checksum{large.ChecksumSHA256, large.ChecksumCRC32C} {
			if _, err := tables[c].emps.Get(ctx, "Sales", keys.Pad(int64(i), 6)); err != nil {
				b.Fatal(err)
			}
		}
	}
	cold := *tables[large.ChecksumSHA256]
	cold.cfg.Hints = -1
	b.Run("tablekit", get(tables[large.ChecksumSHA256], "000000"))
	b.Run("tablekit-cold", get(cold.on(b, f.env), "000000"))
	b.Run("tablekit-crc32c", get(tables[large.ChecksumCRC32C], "000001"))
	b.Run("raw", func(b *testing.B) {
		b.SetBytes(photoSize)
		blob := f.cont.NewBlobClient(name)
		report := measure(b, meter)
		for b.Loop() {
			resp, err := blob.DownloadStream(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, *resp.ContentLength)
			n, err := io.ReadFull(resp.Body, buf)
			resp.Body.Close()
			if err != nil || n != photoSize {
				b.Fatal(err)
			}
		}
		report()
	})
	// raw-sha256 is raw plus the SHA-256 of the bytes read:
	// the least any read that checks the value against its recorded hash
	// can cost.
	b.Run("raw-sha256", func(b *testing.B) {
		b.SetBytes(photoSize)
		blob := f.cont.NewBlobClient(name)
		report := measure(b, meter)
		for b.Loop() {
			resp, err := blob.DownloadStream(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			h := sha256.New()
			buf := make([]byte, *resp.ContentLength)
			n, err := io.ReadFull(resp.Body, buf)
			h.Write(buf[:n])
			resp.Body.Close()
			if err != nil || n != photoSize || len(h.Sum(nil)) != sha256.Size {
				b.Fatal(err)
			}
		}
		report()
	})
}

// throttle holds the body of every Get Blob response to rate bytes per
// second.
type throttle struct{ rate float64 }

func (p throttle) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err == nil && cost.Classify(req.Raw()).Op == cost.OpGetBlob {
		resp.Body = &slowBody{ReadCloser: resp.Body, rate: p.rate, start: time.Now()}
	}
	return resp, err
}

type slowBody struct {
	io.ReadCloser
	rate  float64
	start time.Time
	n     int64
}

func (s *slowBody) Read(p []byte) (int, error) {
	k, err := s.ReadCloser.Read(p)
	s.n += int64(k)
	time.Sleep(time.Until(s.start.Add(time.Duration(float64(s.n) / s.rate * float64(time.Second)))))
	return k, err
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
		report := measure(b, meter)
		for b.Loop() {
			e := Employee{Dept: "Bench", ID: keys.Pad(int64(i), 6), Name: "Jones", Photo: photo}
			if err := f.emps.Insert(ctx, &e); err != nil {
				b.Fatal(err)
			}
			i++
		}
		report()
	})
	b.Run("raw", func(b *testing.B) {
		b.SetBytes(photoSize)
		report := measure(b, meter)
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
		report()
	})
}

// BenchmarkChecksum computes each candidate check of a 5 MiB value in
// memory, no storage involved: crypto/sha256 (with the CPU's SHA
// extensions where it has them), crypto/md5 (what a check of the blob
// service's Content-MD5 costs the client), hash/crc64 with azblob's
// polynomial (what a check of the service's x-ms-content-crc64 costs; Go
// has no CRC-64 instruction path, only tables) and hash/crc32 Castagnoli
// (the CPU's CRC32 instruction on amd64).
func BenchmarkChecksum(b *testing.B) {
	data := payload(9, photoSize)
	for _, c := range []struct {
		name string
		h    func() hash.Hash
	}{
		{"sha256", sha256.New},
		{"md5", md5.New},
		{"crc64", func() hash.Hash { return crc64.New(crc64.MakeTable(0x9A6C9329AC4BC9B5)) }},
		{"crc32c", func() hash.Hash { return crc32.New(crc32.MakeTable(crc32.Castagnoli)) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(photoSize)
			cpu := cpuNow()
			for b.Loop() {
				h := c.h()
				h.Write(data)
				if len(h.Sum(nil)) == 0 {
					b.Fatal("no sum")
				}
			}
			b.ReportMetric(float64((cpuNow()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
