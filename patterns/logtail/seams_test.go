package logtail_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/logtail"
)

// sharedTable creates a table for clients built from several views of the
// environment, and returns its name.
func sharedTable(t *testing.T) string {
	t.Helper()
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
		t.Fatal(err)
	}
	return name
}

// logOn returns a Log over the table name through e's clients.
func logOn(t testing.TB, e *integration.Env, name string, cfg logtail.Config) *logtail.Log[Attempt] {
	t.Helper()
	tbl, err := entity.NewTable[Attempt](e.TableService.NewClient(name))
	if err != nil {
		t.Fatal(err)
	}
	l, err := logtail.New(tbl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// rawEntry is an entry as aztables alone reads it.
type rawEntry struct {
	RowKey string
	N      int32
	User   string
}

// rawList lists partition with aztables alone, in the service's key order.
func rawList(t *testing.T, client *aztables.Client, partition string) []rawEntry {
	t.Helper()
	f := "PartitionKey eq '" + partition + "'"
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f})
	var out []rawEntry
	for pager.More() {
		page, err := pager.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Entities {
			var e rawEntry
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
	}
	return out
}

// numbers returns the N of each entry, in the order listed.
func numbers(entries []rawEntry) []int32 {
	out := make([]int32, len(entries))
	for i, e := range entries {
		out[i] = e.N
	}
	return out
}

// contiguous reports whether ns, listed newest first, are exactly
// hi-1, hi-2, …, lo for some lo (none when empty): no hole.
func contiguous(ns []int32, hi int32) bool {
	for i, n := range ns {
		if n != hi-1-int32(i) {
			return false
		}
	}
	return true
}

// appendNumbered appends entries 0 … n-1 (entry i at t0 + i ms) with a
// Log of its own.
func appendNumbered(t *testing.T, name string, n int, t0 time.Time) {
	t.Helper()
	l := logOn(t, env, name, logtail.Config{Now: stepClock(t0, time.Millisecond)})
	batch := make([]*Attempt, n)
	for i := range batch {
		batch[i] = &Attempt{N: int32(i)}
	}
	if err := l.Append(t.Context(), "p", batch...); err != nil {
		t.Fatal(err)
	}
}

// Trim of 230 of 250 entries crashed after each of its requests: the log
// left, listed with aztables alone, is missing only its oldest part (what a
// reader during the Trim sees, one transaction at a time), never a stretch
// in the middle; a fresh Log's Trim finishes, leaving exactly the newest 20.
// With pages of 40 keys the listing spans several pages, each deleted
// oldest first.
func TestTrimCrashLeavesNoHole(t *testing.T) {
	t.Parallel()
	const total, cut = 250, 230
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, page := range []int{0, 40} {
		t.Run(fmt.Sprintf("page %d", page), func(t *testing.T) {
			t.Parallel()
			crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
				name := sharedTable(t)
				raw := env.TableService.NewClient(name)
				appendNumbered(t, name, total, t0)
				before := t0.Add(cut * time.Millisecond)
				noHole := func(t *testing.T, when string) []int32 {
					ns := numbers(rawList(t, raw, "p"))
					if !contiguous(ns, total) {
						t.Fatalf("%s: the log holds %d entries with a hole: %v", when, len(ns), ns)
					}
					return ns
				}
				return crashtest.Run{
					Work: func(ctx context.Context, env *integration.Env) error {
						l := logOn(t, env, name, logtail.Config{})
						logtail.SetTrimPage(l, page)
						_, err := l.Trim(ctx, "p", before)
						return err
					},
					Crashed: func(t *testing.T, passed int) {
						noHole(t, fmt.Sprintf("crashed after %d requests", passed))
					},
					Recover: func(ctx context.Context) error {
						_, err := logOn(t, env, name, logtail.Config{}).Trim(ctx, "p", before)
						return err
					},
					Check: func(t *testing.T) {
						if ns := noHole(t, "recovered"); len(ns) != total-cut {
							t.Fatalf("after recovery %d entries, want the newest %d: %v", len(ns), total-cut, ns)
						}
					},
				}
			}})
		})
	}
}

// Append of 250 entries (three transactions) crashed after each of its
// requests: each transaction is stored whole or not at all, oldest first,
// so the log has no hole (its newest part is missing); a fresh Log
// appends after it and Tail shows that entry first.
func TestAppendCrash(t *testing.T) {
	t.Parallel()
	const total = 250
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		name := sharedTable(t)
		raw := env.TableService.NewClient(name)
		return crashtest.Run{
			Work: func(ctx context.Context, env *integration.Env) error {
				l := logOn(t, env, name, logtail.Config{Now: stepClock(t0, time.Millisecond)})
				batch := make([]*Attempt, total)
				for i := range batch {
					batch[i] = &Attempt{N: int32(i)}
				}
				return l.Append(ctx, "p", batch...)
			},
			Recover: func(ctx context.Context) error {
				l := logOn(t, env, name, logtail.Config{Now: func() time.Time { return t0.Add(time.Hour) }})
				return l.Append(ctx, "p", &Attempt{N: -1})
			},
			Check: func(t *testing.T) {
				ns := numbers(rawList(t, raw, "p"))
				if len(ns) == 0 || ns[0] != -1 {
					t.Fatalf("the fresh Log's entry is not the newest: %v", ns)
				}
				stored := ns[1:]
				if len(stored)%100 != 0 && len(stored) != total {
					t.Fatalf("%d entries stored: part of a transaction", len(stored))
				}
				if !contiguous(stored, int32(len(stored))) {
					t.Fatalf("stored %v: not the oldest entries, in order", stored)
				}
				tail, err := logOn(t, env, name, logtail.Config{}).Tail(t.Context(), "p", 2)
				if err != nil || len(tail) == 0 || tail[0].N != -1 {
					t.Fatalf("Tail after recovery: %v, %v", tail, err)
				}
			},
		}
	}})
}

// Trim whose first delete transaction is applied and its reply lost,
// while another program writes or deletes one of that transaction's
// entries inside azcore's retry window: Trim finishes without an error,
// counting the 230 entries once, and leaves exactly the newest 20 — an
// entry written again meanwhile is deleted too.
func TestTrimLostReplySeams(t *testing.T) {
	t.Parallel()
	const total, cut = 250, 230
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, mode := range []string{"insert", "replace", "merge", "delete"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			name := sharedTable(t)
			raw := env.TableService.NewClient(name)
			appendNumbered(t, name, total, t0)
			oldest := rawList(t, raw, "p")[total-1]
			f := faults.New(faults.Config{})
			l := logOn(t, env.With(f), name, logtail.Config{})
			var otherErr error
			f.LoseNextThen(1, isBatch, func(*http.Request) {
				otherErr = rawWrite(context.Background(), raw, mode, oldest.RowKey, oldest.N)
			})
			n, err := l.Trim(t.Context(), "p", t0.Add(cut*time.Millisecond))
			if f.Stats().LostReplies != 1 {
				t.Fatal("no reply was lost")
			}
			if err != nil || n != cut {
				t.Fatalf("Trim = %d, %v (the other program's %s: %v); want %d", n, err, mode, otherErr, cut)
			}
			if ns := numbers(rawList(t, raw, "p")); len(ns) != total-cut || !contiguous(ns, total) {
				t.Fatalf("after Trim: %v, want the newest %d", ns, total-cut)
			}
		})
	}
}

// isBatch matches entity group transactions.
func isBatch(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "$batch")
}

// rawWrite writes entry rk of partition "p" as another program would,
// with aztables alone: "insert", "replace" (upsert), "merge" (upsert-merge)
// or "delete"; a 404 of a delete is not an error.
func rawWrite(ctx context.Context, client *aztables.Client, mode, rk string, n int32) error {
	if mode == "delete" {
		_, err := client.DeleteEntity(ctx, "p", rk, nil)
		var re *azcore.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
			return nil
		}
		return err
	}
	body, err := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": rk, "N": n, "User": "other"})
	if err != nil {
		return err
	}
	switch mode {
	case "insert":
		_, err = client.AddEntity(ctx, body, nil)
	case "merge":
		_, err = client.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
	default:
		_, err = client.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
	}
	return err
}

// Append whose write is applied and its reply lost, while another program
// inserts, replaces, merges or deletes the first entry's key inside
// azcore's retry window, for one entry and for several, sequenced and
// plain keys: Append reports success, or entries whose outcome is unknown
// — never a refusal (ErrAlreadyExists) for an entry it wrote — and every
// entry reported written is stored, as Append wrote it, once (unless the
// other program deleted it after it was written).
func TestAppendLostReplySeams(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, plain := range []bool{false, true} {
		for _, count := range []int{1, 5} {
			for _, mode := range []string{"insert", "replace", "merge", "delete"} {
				t.Run(fmt.Sprintf("plain %v/%d entries/%s", plain, count, mode), func(t *testing.T) {
					t.Parallel()
					name := sharedTable(t)
					raw := env.TableService.NewClient(name)
					f := faults.New(faults.Config{})
					l := logOn(t, env.With(f), name, logtail.Config{PlainKeys: plain, Now: stepClock(t0, time.Millisecond)})
					entries := make([]*Attempt, count)
					for i := range entries {
						entries[i] = &Attempt{N: int32(i), User: "mine"}
					}
					var otherErr error
					f.LoseNextThen(1, func(r *http.Request) bool { return r.Method != http.MethodGet }, func(*http.Request) {
						otherErr = rawWrite(context.Background(), raw, mode, entries[0].RowKey, 99)
					})
					err := l.Append(t.Context(), "p", entries...)
					if f.Stats().LostReplies != 1 {
						t.Fatal("no reply was lost")
					}
					t.Logf("Append: %v; the other program's %s: %v", err, mode, otherErr)
					notWritten := map[int]bool{}
					var ae *logtail.AppendError
					switch {
					case err == nil:
					case count > 1 && errors.As(err, &ae):
						for _, e := range ae.NotWritten {
							if !errors.Is(e.Err, entity.ErrOutcomeUnknown) {
								t.Fatalf("entry %d reported %v, want written or ErrOutcomeUnknown", e.Index, e.Err)
							}
							notWritten[e.Index] = true
						}
					case count == 1 && errors.Is(err, entity.ErrOutcomeUnknown):
						notWritten[0] = true
					default:
						t.Fatalf("Append: %v, want success or ErrOutcomeUnknown", err)
					}
					stored := map[string]rawEntry{}
					for _, e := range rawList(t, raw, "p") {
						stored[e.RowKey] = e
					}
					for i, e := range entries {
						if notWritten[i] {
							continue
						}
						if _, ok := stored[e.RowKey]; !ok && i == 0 && mode == "delete" {
							// Written, then deleted by the other program; a
							// resent transaction of several inserts is refused
							// at the next entry and does not write it again.
							continue
						}
						if s, ok := stored[e.RowKey]; ok && i == 0 && (mode == "replace" || mode == "merge") && s.User == "other" {
							// Written, then overwritten by the other program
							// inside the retry window: the transaction was
							// applied, which entity settles from the others.
							continue
						}
						if s, ok := stored[e.RowKey]; !ok || s.N != e.N || s.User != "mine" {
							t.Fatalf("entry %d reported written, stored %+v (found %v)", i, s, ok)
						}
					}
				})
			}
		}
	}
}

// An Append of several entries of which the service refuses some (plain
// keys another writer took): the others are written, and the error lists
// exactly the entries not written, each with its error; an entry that is
// invalid once encoded fails the whole call before anything is sent.
func TestAppendReportsEntriesNotWritten(t *testing.T) {
	t.Parallel()
	name := sharedTable(t)
	raw := env.TableService.NewClient(name)
	ctx := t.Context()
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	taken := []int{2, 5}
	for _, i := range taken {
		if err := rawWrite(ctx, raw, "insert", keys.InvertedTicks(t0.Add(time.Duration(i)*time.Millisecond)), 100+int32(i)); err != nil {
			t.Fatal(err)
		}
	}
	l := logOn(t, env, name, logtail.Config{PlainKeys: true, Now: stepClock(t0, time.Millisecond)})
	entries := make([]*Attempt, 8)
	for i := range entries {
		entries[i] = &Attempt{N: int32(i), User: "mine"}
	}
	err := l.Append(ctx, "p", entries...)
	var ae *logtail.AppendError
	var le *logtail.Error
	var be *entity.BulkError
	if !errors.As(err, &ae) || !errors.As(err, &le) || !errors.As(err, &be) || !errors.Is(err, entity.ErrAlreadyExists) {
		t.Fatalf("Append: %v, want an *Error holding an *AppendError", err)
	}
	var got []int
	for _, e := range ae.NotWritten {
		if !errors.Is(e.Err, entity.ErrAlreadyExists) || e.RowKey != entries[e.Index].RowKey {
			t.Errorf("entry %d (%s): %v", e.Index, e.RowKey, e.Err)
		}
		got = append(got, e.Index)
	}
	if !slices.Equal(got, taken) || ae.Total != 8 || !strings.Contains(err.Error(), "Append: 2 of 8 entries not written") {
		t.Fatalf("not written %v of %d (%v), want %v", got, ae.Total, err, taken)
	}
	stored := rawList(t, raw, "p")
	if len(stored) != 8 {
		t.Fatalf("%d entries stored, want 8 (6 written, 2 of the other writer)", len(stored))
	}
	for _, e := range stored {
		if mine := e.User == "mine"; mine == (e.N >= 100) {
			t.Errorf("stored %+v", e)
		}
	}

	// One entry too large among five: refused before anything is sent.
	big := make([]*Attempt, 5)
	for i := range big {
		big[i] = &Attempt{N: int32(200 + i)}
	}
	big[3].User = strings.Repeat("x", 40_000) // 80 KB in UTF-16, over the service's 64 KiB
	err = l.Append(ctx, "q", big...)
	var arg *logtail.ArgError
	if !errors.As(err, &arg) || arg.Value != "3" || !errors.Is(err, logtail.ErrInvalid) {
		t.Fatalf("Append with an entry too large: %v, want an *ArgError naming entry 3", err)
	}
	if n := len(rawList(t, raw, "q")); n != 0 {
		t.Fatalf("%d entries written", n)
	}
}

// Stamped is an entry type with an ETag field.
type Stamped struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
	N            int32
}

// Append of one entry and of several stores each written entry's ETag
// into it: the stored entity's, as aztables reads it.
func TestAppendSetsETags(t *testing.T) {
	t.Parallel()
	name := sharedTable(t)
	raw := env.TableService.NewClient(name)
	tbl, err := entity.NewTable[Stamped](raw)
	if err != nil {
		t.Fatal(err)
	}
	l, err := logtail.New(tbl, logtail.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3} {
		entries := make([]*Stamped, n)
		for i := range entries {
			entries[i] = &Stamped{N: int32(i)}
		}
		if err := l.Append(t.Context(), "p", entries...); err != nil {
			t.Fatal(err)
		}
		for i, e := range entries {
			resp, err := raw.GetEntity(t.Context(), "p", e.RowKey, nil)
			if err != nil || e.ETag == "" || string(resp.ETag) != e.ETag {
				t.Fatalf("%d entries: entry %d has ETag %q, stored %q (%v)", n, i, e.ETag, resp.ETag, err)
			}
		}
	}
}
