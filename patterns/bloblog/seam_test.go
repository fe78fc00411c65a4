package bloblog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/patterns/bloblog"
)

// rawRecord is one record of a blob, parsed by the test from the format
// record.go documents: "<30-byte time> <length> <data>\n".
type rawRecord struct {
	t    time.Time
	data string
}

func parseBlob(t *testing.T, name string, b []byte) []rawRecord {
	t.Helper()
	var out []rawRecord
	for len(b) > 0 {
		if len(b) < 32 {
			t.Fatalf("blob %s: %d stray bytes %q", name, len(b), b)
		}
		tm, err := time.Parse("2006-01-02T15:04:05.000000000Z", string(b[:30]))
		if err != nil {
			t.Fatalf("blob %s: %v", name, err)
		}
		lenS, rest, ok := strings.Cut(string(b[31:]), " ")
		n, err := strconv.Atoi(lenS)
		if !ok || err != nil || len(rest) < n+1 || rest[n] != '\n' {
			t.Fatalf("blob %s: a record that is not whole at %q", name, b[:min(len(b), 60)])
		}
		out = append(out, rawRecord{tm, rest[:n]})
		b = []byte(rest[n+1:])
	}
	return out
}

// blobRecords reads every blob of c with raw clients: its records, in
// name order, after checking that each blob's metadata range (when it has
// one) covers its records.
func blobRecords(t *testing.T, c *container.Client) map[string][]rawRecord {
	t.Helper()
	out := map[string][]rawRecord{}
	for p := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Metadata: true}}); p.More(); {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Segment.BlobItems {
			resp, err := c.NewBlobClient(*it.Name).DownloadStream(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			recs := parseBlob(t, *it.Name, b)
			out[*it.Name] = recs
			var lo, hi string
			for k, v := range it.Metadata {
				switch strings.ToLower(k) {
				case "mintime":
					lo = *v
				case "maxtime":
					hi = *v
				}
			}
			for _, r := range recs {
				if r.data == "foreign" {
					continue // another writer's: its range is its business
				}
				ts := r.t.Format("2006-01-02T15:04:05.000000000Z")
				if lo != "" && (ts < lo || ts > hi) {
					t.Errorf("blob %s: record at %s outside its metadata range [%s, %s]: a reader would skip it", *it.Name, ts, lo, hi)
				}
			}
		}
	}
	return out
}

// appended are a run's records, by period start, in Append order.
type appended map[time.Time][]string

func (a appended) add(at time.Time, data string) {
	p := at.Truncate(time.Hour)
	a[p] = append(a[p], data)
}

// seamConfig makes small blocks and blobs, so that one run has several of
// each, and a short last flush.
func seamConfig() bloblog.Config {
	return bloblog.Config{Service: "seam", MaxBlockBytes: 256, MaxBlocks: 2, FlushInterval: time.Hour, CloseTimeout: 300 * time.Millisecond}
}

// Logger killed at every request — before it is sent, and after the service
// executed it — then a fresh Logger (another process) appending to the same
// periods: every record of the fresh Logger is in a blob once; of the
// crashed one's, each period keeps a prefix of its records in order, none
// twice, none torn; every blob's metadata range covers its records.
func TestLoggerSurvivesACrashAtEveryRequest(t *testing.T) {
	crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		name := newContainer(t)
		old, fresh := appended{}, appended{}
		return crashtest.Run{
			Work: func(ctx context.Context, v *integration.Env) error {
				l, err := bloblog.New(ctx, containerOf(v, name), seamConfig())
				if err != nil {
					return err
				}
				for i := range 12 {
					at := hourBase.Add(time.Duration(i%2)*time.Hour + time.Duration(i)*time.Second)
					d := fmt.Sprintf("old-%02d %s", i, strings.Repeat("x", 30))
					if err := l.Append(at, []byte(d)); err != nil {
						return err
					}
					old.add(at, d)
					if i == 5 {
						if err := l.Flush(ctx); err != nil {
							l.Close()
							return err
						}
					}
				}
				return l.Close()
			},
			Recover: func(ctx context.Context) error {
				cfg := seamConfig()
				cfg.CloseTimeout = 0 // the default: a healthy process has time
				l, err := bloblog.New(ctx, containerOf(env, name), cfg)
				if err != nil {
					return err
				}
				for i := range 4 {
					at := hourBase.Add(time.Duration(i%2)*time.Hour + time.Duration(30+i)*time.Second)
					d := fmt.Sprintf("new-%02d", i)
					if err := l.Append(at, []byte(d)); err != nil {
						return err
					}
					fresh.add(at, d)
				}
				return l.Close()
			},
			Check: func(t *testing.T) {
				blobs := blobRecords(t, containerOf(env, name))
				got := appended{}
				for _, n := range slices.Sorted(func(yield func(string) bool) {
					for k := range blobs {
						if !yield(k) {
							return
						}
					}
				}) {
					for _, r := range blobs[n] {
						got.add(r.t, r.data)
					}
				}
				for p, want := range old {
					var oldGot []string
					for _, d := range got[p] {
						if strings.HasPrefix(d, "old-") {
							oldGot = append(oldGot, d)
						}
					}
					if len(oldGot) > len(want) || !slices.Equal(oldGot, want[:len(oldGot)]) {
						t.Errorf("period %v: the crashed Logger's records read %q, want a prefix of %q", p, oldGot, want)
					}
				}
				for p, want := range fresh {
					var newGot []string
					for _, d := range got[p] {
						if strings.HasPrefix(d, "new-") {
							newGot = append(newGot, d)
						}
					}
					if !slices.Equal(newGot, want) {
						t.Errorf("period %v: the fresh Logger's records read %q, want %q", p, newGot, want)
					}
				}
			},
		}
	}})
}

// blobOf is the blob a request addresses in container cont, "" for a
// request of the container itself (a listing).
func blobOf(req *http.Request, cont string) string {
	p, err := url.PathUnescape(req.URL.EscapedPath())
	if err != nil {
		return ""
	}
	_, name, ok := strings.Cut(p, "/"+cont+"/")
	if !ok {
		return ""
	}
	return name
}

// foreignRecord is a record in the Logger's format written by someone else.
func foreignRecord() []byte {
	return []byte(hourBase.Add(59*time.Minute).Format("2006-01-02T15:04:05.000000000Z") + " 7 foreign\n")
}

// Logger (records buffered by Append and AppendContext in turn) with the
// reply of each request lost in turn and another writer
// acting on the same blob before azcore's resend — appending a record of
// its own (or creating the blob), re-creating it empty, changing its
// metadata, deleting it: the Logger never stops on it (Close writes every
// record), no record is written twice, and every record is in a blob
// except those in a blob the other writer destroyed; each writer's records
// stay in order.
func TestLoggerBesideAnotherWriter(t *testing.T) {
	seamtest.EveryReply(t, env, seamtest.Race{Prepare: func(t *testing.T) seamtest.RaceRun {
		name := newContainer(t)
		c := containerOf(env, name)
		var want []string
		destroyed := map[string]bool{}
		return seamtest.RaceRun{
			Work: func(ctx context.Context, v *integration.Env) error {
				l, err := bloblog.New(ctx, containerOf(v, name), seamConfig())
				if err != nil {
					return err
				}
				want = nil
				for i := range 10 {
					d := fmt.Sprintf("rec-%02d %s", i, strings.Repeat("x", 30))
					at := hourBase.Add(time.Duration(i) * time.Second)
					add := l.Append
					if i%2 == 1 {
						add = func(at time.Time, data []byte) error { return l.AppendContext(ctx, at, data) }
					}
					if err := add(at, []byte(d)); err != nil {
						return err
					}
					want = append(want, d)
					if i == 4 {
						if err := l.Flush(ctx); err != nil {
							return errors.Join(err, l.Close())
						}
					}
				}
				return l.Close()
			},
			Compete: func(ctx context.Context, kind string, req *http.Request) error {
				b := blobOf(req, name)
				if b == "" {
					return errors.New("a request of the container, not of a blob")
				}
				ab := c.NewAppendBlobClient(b)
				if kind == seamtest.Replace || kind == seamtest.Delete {
					// What the blob holds now is destroyed.
					if resp, err := ab.DownloadStream(ctx, nil); err == nil {
						data, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						for _, r := range parseBlob(t, b, data) {
							destroyed[r.data] = true
						}
					}
				}
				var err error
				switch kind {
				case seamtest.Insert:
					if _, err = ab.AppendBlock(ctx, streaming.NopCloser(bytes.NewReader(foreignRecord())), nil); err != nil {
						_, err = ab.Create(ctx, &appendblob.CreateOptions{AccessConditions: &blob.AccessConditions{
							ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: ptrTo(azcore.ETagAny)}}})
					}
				case seamtest.Replace:
					_, err = ab.Create(ctx, &appendblob.CreateOptions{Metadata: map[string]*string{"bloblogwriter": ptrTo("someone else")}})
				case seamtest.Merge:
					_, err = ab.SetMetadata(ctx, map[string]*string{"bloblogwriter": ptrTo("someone else")}, nil)
				case seamtest.Delete:
					_, err = ab.Delete(ctx, nil)
				}
				return err
			},
			Check: func(t *testing.T, kind string, err error) {
				if err != nil {
					t.Fatalf("the Logger did not write every record: %v", err)
				}
				seen := map[string]int{}
				var order []string
				blobs := blobRecords(t, c)
				for _, bn := range slices.Sorted(func(yield func(string) bool) {
					for k := range blobs {
						if !yield(k) {
							return
						}
					}
				}) {
					for _, r := range blobs[bn] {
						if r.data == "foreign" {
							continue
						}
						seen[r.data]++
						order = append(order, r.data)
					}
				}
				for _, d := range want {
					switch {
					case seen[d] > 1:
						t.Errorf("%q written %d times", d, seen[d])
					case seen[d] == 0 && !destroyed[d]:
						t.Errorf("%q lost (not in any blob, nor in one the other writer destroyed)", d)
					}
				}
				if !slices.IsSorted(order) {
					t.Errorf("records out of order: %q", order)
				}
			},
		}
	}})
}

func ptrTo[T any](v T) *T { return &v }

// One bad record among many — larger than a block, or a time outside the
// years 0001 to 9999 — is refused alone with a *RecordError before it is
// buffered; the good records around it are all written, once, in order.
func TestOneBadRecordAmongMany(t *testing.T) {
	t.Parallel()
	name := newContainer(t)
	c := containerOf(env, name)
	cfg := bloblog.Config{Service: "bad", MaxBlockBytes: 256}
	l, err := bloblog.New(t.Context(), c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 9 {
		var err error
		switch i {
		case 3:
			err = l.Append(hourBase.Add(time.Duration(i)*time.Second), bytes.Repeat([]byte("x"), 300))
		case 6:
			err = l.Append(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), []byte("far"))
		default:
			d := fmt.Sprintf("good-%d", i)
			err = l.Append(hourBase.Add(time.Duration(i)*time.Second), []byte(d))
			want = append(want, d)
		}
		var re *bloblog.RecordError
		if bad := i == 3 || i == 6; bad != errors.As(err, &re) || !bad && err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, recs := range blobRecords(t, c) {
		for _, r := range recs {
			got = append(got, r.data)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("blobs hold %q, want %q", got, want)
	}
}
