package large_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/large"
)

// version is what one version of the test employee holds.
type version struct {
	name         string
	photo, video []byte
	cv           string
}

var (
	v1 = version{name: "v1", photo: payload(10, 150<<10), video: payload(11, 200<<10), cv: "first résumé"}
	v2 = version{name: "v2", photo: payload(20, 120<<10), video: payload(21, 100<<10), cv: "first résumé"}
)

func (v version) employee() Employee {
	return Employee{Dept: "Sales", ID: "000123", Name: v.name, Photo: v.photo, CV: v.cv, Video: large.NewStream(bytes.NewReader(v.video))}
}

// readsAs checks that the employee reads back, complete and verified, as
// one of the versions (or, with absent, is missing), and returns which.
func readsAs(t *testing.T, f *fixture, absent bool, vs ...version) string {
	t.Helper()
	e, err := f.emps.Get(context.Background(), "Sales", "000123")
	if errors.Is(err, entity.ErrNotFound) {
		if !absent {
			t.Errorf("the employee is missing")
		}
		return "absent"
	}
	if err != nil {
		t.Errorf("Get: %v", err)
		return "error"
	}
	for _, v := range vs {
		if e.Name != v.name {
			continue
		}
		video, err := readAll(t, e.Video)
		if err != nil {
			t.Errorf("%s: video: %v", v.name, err)
		}
		if d := same(e.Photo, v.photo) + same(video, v.video); d != "" || e.CV != v.cv {
			t.Errorf("%s reads back torn: %s; résumé %q", v.name, d, e.CV)
		}
		return v.name
	}
	t.Errorf("the employee reads as %q, none of the versions", e.Name)
	return "other"
}

// replied, below a crashtest.Killer, lets every request the Killer let
// through run to its reply, whatever becomes of the caller's context: a
// crashed run's requests have then all been executed by the time its
// Work returns. Without it, a request under way when the Killer fires is
// cut off by the client but may still be executed by the service — a Put
// Blob of 150 KiB whose caller saw "context canceled" is stored — and, on
// a loaded machine, after the recovery's Sweep listed the blobs: an orphan
// that a Sweep with the tests' negative Grace, which presumes that no
// writer runs, cannot see. In production that blob is younger than Grace
// at that Sweep and deleted by a later one; the tests, which sweep once,
// need every request of the crashed run settled first.
type replied struct{}

func (replied) Do(req *policy.Request) (*http.Response, error) {
	return req.WithContext(context.WithoutCancel(req.Raw().Context())).Next()
}

// crashScenario runs work (on the killable view of a fixture prepared
// by setup) at every crash point, then recovers by draining the queue and
// sweeping, and checks that the employee reads as one of want at every
// instant and at the end, with no orphan blob and no missing one.
func crashScenario(t *testing.T, setup func(t *testing.T, f *fixture), work func(ctx context.Context, f *fixture) error, absent bool, want ...version) int {
	return crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		f := newFixture(t, testConfig())
		if setup != nil {
			setup(t, f)
		}
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				return work(ctx, f.on(t, kenv.With(replied{})))
			},
			Crashed: func(t *testing.T, passed int) { readsAs(t, f, absent, want...) },
			Recover: func(ctx context.Context) error {
				if err := f.drain(ctx); err != nil {
					return err
				}
				_, err := f.emps.Sweep(ctx)
				return err
			},
			Check: func(t *testing.T) {
				readsAs(t, f, absent, want...)
				f.checkClean(t)
			},
		}
	}})
}

func insertV1(t *testing.T, f *fixture) {
	e := v1.employee()
	if err := f.emps.Insert(context.Background(), &e); err != nil {
		t.Fatal(err)
	}
}

// TestCrashInsert kills an insert after each of its requests — the blob
// uploads (a photo, a résumé, and a video in blocks) and the entity's
// insert: the employee is missing or complete, never pointing at a
// missing blob, and once swept no blob is left over.
func TestCrashInsert(t *testing.T) {
	t.Parallel()
	n := crashScenario(t, nil, func(ctx context.Context, f *fixture) error {
		e := v1.employee()
		return f.emps.Insert(ctx, &e)
	}, true, v1)
	// 2 Put Blob, 4 Put Block and a Put Block List, the insert.
	if n != 8 {
		t.Errorf("insert made %d requests, want 8", n)
	}
}

// TestCrashReplace kills a replace after each of its requests — the read,
// the uploads of the new photo and video, the entity's replace, the
// message that deletes the old blobs: the employee reads back as v1 or
// v2, whole, at every instant; after recovery no blob of the losing
// version is left, and none of the winner's is gone.
func TestCrashReplace(t *testing.T) {
	t.Parallel()
	n := crashScenario(t, insertV1, func(ctx context.Context, f *fixture) error {
		e := v2.employee()
		e.ETag = entity.AnyETag
		return f.emps.Replace(ctx, &e)
	}, false, v1, v2)
	// The read, a Put Blob, 2 Put Block and a Put Block List (the résumé
	// is unchanged: no upload), the replace, the Put Message.
	if n != 7 {
		t.Errorf("replace made %d requests, want 7", n)
	}
}

// TestCrashDelete kills a delete after each of its requests — the read,
// the entity's delete, the message that deletes the blobs: the employee
// is whole or gone, and after recovery no blob is left.
func TestCrashDelete(t *testing.T) {
	t.Parallel()
	n := crashScenario(t, insertV1, func(ctx context.Context, f *fixture) error {
		return f.emps.Delete(ctx, "Sales", "000123", entity.AnyETag)
	}, true, v1)
	if n != 3 {
		t.Errorf("delete made %d requests, want 3", n)
	}
}

// TestCrashUpsert kills an upsert after each of its requests, over a
// stored employee (a read, uploads, the replace, the message) and of a
// missing one (a read, uploads, the insert): the employee reads as before
// or as written, whole, and recovery leaves no blob over or missing.
func TestCrashUpsert(t *testing.T) {
	t.Parallel()
	t.Run("over v1", func(t *testing.T) {
		t.Parallel()
		crashScenario(t, insertV1, func(ctx context.Context, f *fixture) error {
			e := v2.employee()
			return f.emps.Upsert(ctx, &e)
		}, false, v1, v2)
	})
	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		crashScenario(t, nil, func(ctx context.Context, f *fixture) error {
			e := v1.employee()
			return f.emps.Upsert(ctx, &e)
		}, true, v1)
	})
}

// TestCrashDisposal kills a worker after each request of its handling of
// a disposal whose blobs are young — the read of the references, the
// refused Delete Blobs, the Get Blob Properties, the Put Message that
// defers them, the Delete Message: a fresh worker finishes (once the
// message reappears, and the deferred one comes due), and no blob of the
// stored version is ever deleted, none of the replaced one is left.
func TestCrashDisposal(t *testing.T) {
	t.Parallel()
	crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		ctx := context.Background()
		cfg := testConfig()
		cfg.Grace = time.Hour
		f := newFixture(t, cfg)
		insertV1(t, f)
		e := v2.employee()
		e.ETag = entity.AnyETag
		if err := f.emps.Replace(ctx, &e); err != nil { // its message waits: no worker runs
			t.Fatal(err)
		}
		// The workers judge ages 2 s short of the grace period: v1's blobs
		// are young, and old 2 s later.
		shift := cfg.Grace - 2*time.Second
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				w, outcomes := f.worker(t, shift)
				w = w.on(t, kenv.With(replied{}))
				wctx, cancel := context.WithCancel(ctx)
				defer cancel()
				done := make(chan error, 1)
				go func() { done <- w.proc.Run(wctx) }()
				for {
					select {
					case o := <-outcomes:
						if o.Result == eventual.Done {
							cancel()
							return <-done
						}
					case <-ctx.Done():
						<-done
						return ctx.Err()
					}
				}
			},
			Crashed: func(t *testing.T, passed int) { readsAs(t, f, false, v2) },
			Recover: func(ctx context.Context) error {
				w, _ := f.worker(t, shift)
				if err := w.drain(ctx); err != nil {
					return err
				}
				late, _ := f.worker(t, 2*time.Hour)
				_, err := late.emps.Sweep(ctx)
				return err
			},
			Check: func(t *testing.T) {
				if m := f.missing(t); len(m) > 0 {
					t.Errorf("references to missing blobs %q", m)
				}
				readsAs(t, f, false, v2)
				f.checkClean(t)
			},
		}
	}})
}

// TestCrashSweep kills a Sweep after each of its requests — the listing,
// the query of the references, the deletes of the orphans a refused
// insert left: a fresh Sweep finishes, and the stored employee keeps
// every blob.
func TestCrashSweep(t *testing.T) {
	t.Parallel()
	crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		f := newFixture(t, testConfig())
		insertV1(t, f)
		dup := v2.employee()
		if err := f.emps.Insert(context.Background(), &dup); !errors.Is(err, entity.ErrAlreadyExists) {
			t.Fatalf("second insert: %v", err)
		}
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				_, err := f.on(t, kenv.With(replied{})).emps.Sweep(ctx)
				return err
			},
			Crashed: func(t *testing.T, passed int) { readsAs(t, f, false, v1) },
			Recover: func(ctx context.Context) error {
				_, err := f.emps.Sweep(ctx)
				return err
			},
			Check: func(t *testing.T) {
				readsAs(t, f, false, v1)
				f.checkClean(t)
			},
		}
	}})
}
