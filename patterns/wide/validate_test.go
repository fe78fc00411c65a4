package wide_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/wide"
)

// offline returns a table whose client reaches nothing and never retries:
// an operation that sent a request would fail with a transport error, not
// with the typed error the tests expect.
func offline(t *testing.T) *wide.Table[Bag] {
	t.Helper()
	client, err := aztables.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/nowhere",
		&aztables.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	return wrap[Bag](t, client, wide.Config{})
}

// Input no transaction can carry is refused with a typed error before any
// request.
func TestInvalidInputRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	w := offline(t)
	ctx := context.Background()

	huge := &Bag{PartitionKey: "p", RowKey: "huge", Props: map[string]any{}}
	for i := range 53 {
		huge.Props["B"+strconv.Itoa(i)] = make([]byte, 60_000) // 3.2 MB, 4.2 MB as base64
	}
	many := bagOf("p", "many", 0, 0)
	for i := range wide.MaxRows*251 + 1 {
		many.Props["F"+strconv.Itoa(i)] = true
	}
	withETag := func(b *Bag) *Bag { b.ETag = "3;7;W/\"x\""; return b }
	cases := []struct {
		name string
		op   func() error
		is   []error
	}{
		{"over 4 MiB", func() error { return w.Insert(ctx, huge) }, []error{wide.ErrTooLarge, entity.ErrInvalid}},
		{"over 4 MiB replace", func() error { return w.Replace(ctx, withETag(huge)) }, []error{wide.ErrTooLarge, entity.ErrInvalid}},
		{"over 99 rows", func() error { return w.Insert(ctx, many) }, []error{wide.ErrTooLarge, entity.ErrInvalid}},
		{"reserved name", func() error {
			b := bagOf("p", "r", 0, 3)
			b.Props["WideVersion"] = "x"
			return w.Insert(ctx, b)
		}, []error{entity.ErrInvalid}},
		{"invalid property", func() error {
			b := bagOf("p", "r", 0, 3)
			b.Props["no spaces"] = "x"
			return w.Insert(ctx, b)
		}, []error{entity.ErrInvalid}},
		{"key with a slash", func() error { return w.Insert(ctx, bagOf("p", "a/b", 0, 3)) }, []error{entity.ErrInvalid, keys.ErrInvalidKey}},
		{"key with a quote", func() error { return w.Insert(ctx, bagOf("p", "O'Brien", 0, 3)) }, []error{entity.ErrInvalid}},
		{"empty partition key", func() error { return w.Insert(ctx, bagOf("", "r", 0, 3)) }, []error{entity.ErrInvalid}},
		{"id too long", func() error { _, err := w.Get(ctx, "p", strings.Repeat("x", 510)); return err }, []error{entity.ErrInvalid}},
		{"no etag", func() error { return w.Replace(ctx, bagOf("p", "r", 0, 3)) }, []error{entity.ErrNoETag}},
		{"star etag", func() error { b := bagOf("p", "r", 0, 3); b.ETag = "*"; return w.Replace(ctx, b) }, []error{wide.ErrInvalidETag, entity.ErrInvalid}},
		{"foreign etag", func() error { return w.Delete(ctx, "p", "r", `W/"datetime'2024-05-01T10%3A00%3A00Z'"`) }, []error{wide.ErrInvalidETag}},
		{"update mode", func() error {
			_, err := w.Modify(ctx, "p", "r", func(*Bag) error { return nil }, entity.ModifyOptions{Mode: 9})
			return err
		}, []error{entity.ErrInvalid}},
		{"nil change", func() error {
			_, err := w.Modify(ctx, "p", "r", nil, entity.ModifyOptions{})
			return err
		}, []error{entity.ErrInvalid}},
		{"nil entity insert", func() error { return w.Insert(ctx, nil) }, []error{entity.ErrInvalid, entity.ErrInvalidType}},
		{"nil entity upsert", func() error { return w.Upsert(ctx, nil) }, []error{entity.ErrInvalid}},
		{"nil entity replace", func() error { return w.Replace(ctx, nil) }, []error{entity.ErrInvalid}},
	}
	errs := map[string]error{}
	for _, c := range cases {
		err := c.op()
		errs[c.name] = err
		var we *wide.Error
		if !errors.As(err, &we) {
			t.Errorf("%s: %v is not a *wide.Error", c.name, err)
		}
		for _, target := range c.is {
			if !errors.Is(err, target) {
				t.Errorf("%s: %v does not match %v", c.name, err, target)
			}
		}
	}
	var tl *wide.TooLargeError
	if !errors.As(errs["over 99 rows"], &tl) || tl.Properties != len(many.Props) || tl.Rows != 0 {
		t.Errorf("too many properties: %#v", tl)
	}
	if !errors.As(errs["over 4 MiB"], &tl) || tl.Properties != len(huge.Props) || tl.Rows < 4 || tl.Err == nil {
		t.Errorf("too many bytes: %#v", tl)
	}
}

// A change that edits the keys is refused after Modify's read, before any
// write, with an error matching entity.ErrInvalid (as entity.Modify's), and
// the stored entity, read back raw, is as it was.
func TestModifyThatEditsTheKeysIsRefused(t *testing.T) {
	t.Parallel()
	w, client := newTable[Bag](t, wide.Config{})
	ctx := t.Context()
	if err := w.Insert(ctx, bagOf("p", "r", 1, 5)); err != nil {
		t.Fatal(err)
	}
	before := rawRows(t, client, "p", "r")
	for name, change := range map[string]func(*Bag) error{
		"RowKey":       func(b *Bag) error { b.RowKey = "other"; return nil },
		"PartitionKey": func(b *Bag) error { b.PartitionKey = "q"; return nil },
	} {
		_, err := w.Modify(ctx, "p", "r", change, entity.ModifyOptions{})
		var we *wide.Error
		if !errors.Is(err, entity.ErrInvalid) || !errors.As(err, &we) {
			t.Errorf("a change of the %s: %v, want a *wide.Error matching entity.ErrInvalid", name, err)
		}
	}
	after := rawRows(t, client, "p", "r")
	if len(after) != len(before) || after[keys.Compound("r", "00")]["WideVersion"] != before[keys.Compound("r", "00")]["WideVersion"] {
		t.Errorf("the entity changed: %v, was %v", after, before)
	}
	if rows := rawRows(t, client, "p", "other"); len(rows) != 0 {
		t.Errorf("%d rows written under the changed key", len(rows))
	}
}

// A negative Config.ReadAttempts is refused by New with a *ConfigError
// naming it, as package large refuses its own, not read as the default.
func TestNewRefusesNegativeReadAttempts(t *testing.T) {
	t.Parallel()
	client, err := aztables.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/nowhere", nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := entity.NewTable[Bag](client)
	if err != nil {
		t.Fatal(err)
	}
	var ce *wide.ConfigError
	if _, err := wide.New(tbl, wide.Config{ReadAttempts: -1}); !errors.As(err, &ce) || ce.Field != "Config.ReadAttempts" || !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("New with ReadAttempts -1: %v, want a *ConfigError naming Config.ReadAttempts", err)
	}
}

// A change that gives up with an error of its own is called once and its
// error returned as is, even an error that matches
// entity.ErrPreconditionFailed (a conditional write elsewhere that lost):
// Modify does not take it for its own lost round and retry; the stored
// entity, read back raw, is unchanged.
func TestModifyReturnsTheChangesErrorAsIs(t *testing.T) {
	t.Parallel()
	w, client := newTable[Bag](t, wide.Config{})
	ctx := t.Context()
	if err := w.Insert(ctx, bagOf("p", "r", 1, 5)); err != nil {
		t.Fatal(err)
	}
	before := rawRows(t, client, "p", "r")
	given := fmt.Errorf("the audit row: %w", entity.ErrPreconditionFailed)
	calls := 0
	_, err := w.Modify(ctx, "p", "r", func(b *Bag) error {
		calls++
		b.Props["P0"] = "changed"
		return given
	}, entity.ModifyOptions{Retry: entity.RetryPolicy{Attempts: 3, BaseDelay: 1, MaxDelay: 1}})
	if err != given || calls != 1 {
		t.Errorf("Modify whose change gives up: %v after %d calls, want the change's error as is after 1", err, calls)
	}
	after := rawRows(t, client, "p", "r")
	if after[keys.Compound("r", "00")]["WideVersion"] != before[keys.Compound("r", "00")]["WideVersion"] {
		t.Errorf("the entity changed")
	}
}
