package merge

import (
	"cmp"
	"context"
	"errors"
	"iter"
	"math/rand/v2"
	"slices"
	"testing"
)

type kv struct {
	k   int
	src int
}

func from(items []kv) func(context.Context) iter.Seq2[kv, error] {
	return func(ctx context.Context) iter.Seq2[kv, error] {
		return func(yield func(kv, error) bool) {
			for _, it := range items {
				if ctx.Err() != nil || !yield(it, nil) {
					return
				}
			}
		}
	}
}

func byKey(a, b kv) int { return cmp.Compare(a.k, b.k) }

func TestSortedMatchesStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := rng.IntN(6)
		var all []kv
		sources := make([]func(context.Context) iter.Seq2[kv, error], n)
		for s := range n {
			var items []kv
			for range rng.IntN(300) {
				items = append(items, kv{rng.IntN(50), s})
			}
			slices.SortStableFunc(items, byKey)
			all = append(all, items...)
			sources[s] = from(items)
		}
		// Equal keys come in source order: a stable sort of the
		// concatenation in source order is the expected result.
		slices.SortStableFunc(all, byKey)
		var got []kv
		for v, err := range Sorted(context.Background(), sources, byKey) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		if !slices.Equal(got, all) {
			t.Fatalf("round %d: merged %v, want %v", round, got, all)
		}
	}
}

func TestSortedError(t *testing.T) {
	boom := errors.New("boom")
	failing := func(ctx context.Context) iter.Seq2[kv, error] {
		return func(yield func(kv, error) bool) {
			if yield(kv{1, 1}, nil) {
				yield(kv{}, boom)
			}
		}
	}
	var n int
	var gotErr error
	for _, err := range Sorted(context.Background(), []func(context.Context) iter.Seq2[kv, error]{from([]kv{{0, 0}, {2, 0}, {3, 0}}), failing}, byKey) {
		if err != nil {
			gotErr = err
			break
		}
		n++
	}
	if !errors.Is(gotErr, boom) || n > 2 {
		t.Fatalf("got %d items and error %v, want at most 2 items and %v", n, gotErr, boom)
	}
}

// Stopping early ends every source (the test would leak goroutines and
// hang in wg.Wait otherwise).
func TestSortedStopEarly(t *testing.T) {
	endless := func(ctx context.Context) iter.Seq2[kv, error] {
		return func(yield func(kv, error) bool) {
			for i := 0; ctx.Err() == nil; i++ {
				if !yield(kv{i, 0}, nil) {
					return
				}
			}
		}
	}
	n := 0
	for range Sorted(context.Background(), []func(context.Context) iter.Seq2[kv, error]{endless, endless}, byKey) {
		if n++; n == 1000 {
			break
		}
	}
	if n != 1000 {
		t.Fatalf("read %d items", n)
	}
}

func TestSortedCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	blocked := func(ctx context.Context) iter.Seq2[kv, error] {
		return func(yield func(kv, error) bool) { <-ctx.Done() }
	}
	var gotErr error
	for _, err := range Sorted(ctx, []func(context.Context) iter.Seq2[kv, error]{blocked}, byKey) {
		gotErr = err
	}
	if !errors.Is(gotErr, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", gotErr)
	}
}
