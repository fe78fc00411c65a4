package large_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/large"
)

// Notes is an employee whose other properties may be too many for an
// entity.
type Notes struct {
	PartitionKey, RowKey string
	ETag                 string
	Photo                []byte         `table:",blob"`
	More                 map[string]any `table:",extra"`
}

// What can be refused is refused before any request, with a typed error.
func TestRefusedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	f := newFixture(t, testConfig()).on(t, env.With(meter.Policy()))
	notes, err := entity.NewTableFromService[Notes](f.env.TableService, f.table)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Processor = f.proc
	nt, err := large.New(notes, f.cont, cfg)
	if err != nil {
		t.Fatal(err)
	}
	big := map[string]any{}
	for i := range 20 {
		big[string(rune('A'+i))+"note"] = strings.Repeat("x", 30000) // 20 × 60 KiB
	}
	for name, tc := range map[string]struct {
		run  func() error
		want error
	}{
		"entity over 1 MiB": {func() error {
			return nt.Insert(ctx, &Notes{PartitionKey: "p", RowKey: "r", Photo: []byte("x"), More: big})
		}, entity.ErrInvalid},
		"reference property set by extra": {func() error {
			return nt.Insert(ctx, &Notes{PartitionKey: "p", RowKey: "r", Photo: []byte("x"), More: map[string]any{"Photo": "mine"}})
		}, entity.ErrInvalid},
		"bad key": {func() error {
			e := v1.employee()
			e.ID = "a/b"
			return f.emps.Insert(ctx, &e)
		}, entity.ErrInvalid},
		"nil entity": {func() error { return f.emps.Insert(ctx, nil) }, entity.ErrInvalid},
		"replace without etag": {func() error {
			e := v1.employee()
			return f.emps.Replace(ctx, &e)
		}, entity.ErrNoETag},
		"delete without etag": {func() error { return f.emps.Delete(ctx, "Sales", "1", "") }, entity.ErrNoETag},
	} {
		before := meter.Snapshot()
		err := tc.run()
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
		var le *large.Error
		if name != "nil entity" && !errors.As(err, &le) {
			t.Errorf("%s: %T is not a *large.Error", name, err)
		}
		if used := meter.Snapshot().Sub(before); used.Total() != 0 {
			t.Errorf("%s: sent %v", name, used)
		}
	}
}

// New refuses types it cannot store and configurations that cannot work.
func TestNewRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testConfig())
	tbl, err := entity.NewTableFromService[Employee](env.TableService, f.table)
	if err != nil {
		t.Fatal(err)
	}
	type noBlob struct{ PartitionKey, RowKey, Name string }
	type intBlob struct {
		PartitionKey, RowKey string
		N                    int `table:",blob"`
	}
	nb, _ := entity.NewTableFromService[noBlob](env.TableService, f.table)
	ib, _ := entity.NewTableFromService[intBlob](env.TableService, f.table)
	if _, err := large.New(nb, f.cont, large.Config{Processor: f.proc}); !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("no blob field: %v", err)
	}
	if _, err := large.New(ib, f.cont, large.Config{Processor: f.proc}); !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("an int blob field: %v", err)
	}
	p, err := eventual.New(eventual.QueuesOf(env.QueueService, f.queue), nil, eventual.Config{})
	if err != nil {
		t.Fatal(err)
	}
	inline, err := eventual.NewInline(eventual.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"inline processor": func() error { _, err := large.New(tbl, f.cont, large.Config{Processor: inline}); return err }(),
		"nil table":        func() error { _, err := large.New[Employee](nil, f.cont, large.Config{Processor: p}); return err }(),
		"nil container":    func() error { _, err := large.New(tbl, nil, large.Config{Processor: p}); return err }(),
		"long prefix": func() error {
			_, err := large.New(tbl, f.cont, large.Config{Processor: p, Prefix: strings.Repeat("p", 201)})
			return err
		}(),
		"read attempts": func() error {
			_, err := large.New(tbl, f.cont, large.Config{Processor: p, ReadAttempts: -1})
			return err
		}(),
		"delay": func() error {
			_, err := large.New(tbl, f.cont, large.Config{Processor: p, DeleteDelay: 8 * 24 * time.Hour})
			return err
		}(),
		"block size": func() error { _, err := large.New(tbl, f.cont, large.Config{Processor: p, BlockSize: -1}); return err }(),
		"concurrency": func() error {
			_, err := large.New(tbl, f.cont, large.Config{Processor: p, Concurrency: -1})
			return err
		}(),
	} {
		var ce *large.ConfigError
		if !errors.Is(err, large.ErrInvalidConfig) || !errors.Is(err, entity.ErrInvalid) || !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a *ConfigError matching entity.ErrInvalid", name, err)
		}
	}
	// Two Tables of one container and prefix share a processor.
	if _, err := large.New(tbl, f.cont, large.Config{Processor: p}); err != nil {
		t.Errorf("first Table: %v", err)
	}
	if _, err := large.New(tbl, f.cont, large.Config{Processor: p}); err != nil {
		t.Errorf("second Table on the same processor: %v", err)
	}
}
