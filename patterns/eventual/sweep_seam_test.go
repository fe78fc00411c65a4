package eventual_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// sweepNow is the time the sweeps of these tests run at: markers "old…"
// expired before it, "new…" after.
var sweepNow = time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)

// markerTable stores, in partitions p and q, the expired markers old0…old2
// and the live marker new0, raw, beside an account entity; it returns the
// table.
func markerTable(t *testing.T) *entity.Table[Account] {
	t.Helper()
	tbl := patterntest.Table[Account](t, env)
	raw := env.TableService.NewClient(tbl.Name())
	for _, pk := range []string{"p", "q"} {
		rows := []string{fmt.Sprintf(`{"PartitionKey":%q,"RowKey":"acct","Balance@odata.type":"Edm.Int64","Balance":"1"}`, pk)}
		for i, key := range []string{"old0", "old1", "old2", "new0"} {
			exp := sweepNow.Add(time.Duration(i-3) * time.Hour)
			if strings.HasPrefix(key, "new") {
				exp = sweepNow.Add(time.Hour)
			}
			rows = append(rows, fmt.Sprintf(`{"PartitionKey":%q,"RowKey":%q,"Expires@odata.type":"Edm.DateTime","Expires":%q,"Attempt":"a"}`,
				pk, eventual.MarkerPrefix+key, exp.Format(time.RFC3339Nano)))
		}
		for _, r := range rows {
			if _, err := raw.AddEntity(context.Background(), []byte(r), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	return tbl
}

// swept checks, raw, that tbl holds exactly the accounts, the live markers
// and extra.
func swept(t *testing.T, tbl *entity.Table[Account], extra ...string) {
	t.Helper()
	var got []string
	for _, r := range rawRows(t, tbl) {
		got = append(got, r.pk()+"/"+strings.TrimPrefix(r.rk(), eventual.MarkerPrefix))
	}
	want := append([]string{"p/acct", "p/new0", "q/acct", "q/new0"}, extra...)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the table holds %v, want %v", got, want)
	}
}

// SweepMarkers killed at each of its requests, before it is sent and after
// the service executed it, and run again fresh: every expired marker is
// gone, and the live markers and the other entities are all there (read
// raw).
func TestSweepMarkersSurvivesACrashAtEveryRequest(t *testing.T) {
	t.Parallel()
	crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		tbl := markerTable(t)
		return crashtest.Run{
			Work: func(ctx context.Context, e *integration.Env) error {
				_, err := eventual.SweepMarkers(ctx, patterntest.View[Account](t, e, tbl), sweepNow)
				return err
			},
			Recover: func(ctx context.Context) error {
				_, err := eventual.SweepMarkers(ctx, tbl, sweepNow)
				return err
			},
			Check: func(t *testing.T) { swept(t, tbl) },
		}
	}})
}

// SweepMarkers with the reply of each of its requests lost and, inside
// azcore's retry window, another process writing a partition it sweeps: a
// Once of another step writing its live marker (seamtest.Insert), or a
// second SweepMarkers (seamtest.Delete). Each sweep reports success, every
// expired marker is gone, and the other process's marker stays (read raw).
func TestSweepMarkersBesideAnotherWriter(t *testing.T) {
	t.Parallel()
	seamtest.EveryReply(t, env, seamtest.Race{Parallel: 8, Competitors: []string{seamtest.Insert, seamtest.Delete}, Prepare: func(t *testing.T) seamtest.RaceRun {
		tbl := markerTable(t)
		var extra []string
		return seamtest.RaceRun{
			Work: func(ctx context.Context, e *integration.Env) error {
				_, err := eventual.SweepMarkers(ctx, patterntest.View[Account](t, e, tbl), sweepNow)
				return err
			},
			Compete: func(ctx context.Context, kind string, req *http.Request) error {
				if kind == seamtest.Delete {
					_, err := eventual.SweepMarkers(ctx, tbl, sweepNow)
					return err
				}
				pk := "p"
				if strings.Contains(req.URL.String(), "'q'") {
					pk = "q"
				}
				extra = append(extra, pk+"/new1")
				_, err := env.TableService.NewClient(tbl.Name()).AddEntity(ctx, fmt.Appendf(nil,
					`{"PartitionKey":%q,"RowKey":%q,"Expires@odata.type":"Edm.DateTime","Expires":%q,"Attempt":"b"}`,
					pk, eventual.MarkerPrefix+"new1", sweepNow.Add(time.Hour).Format(time.RFC3339Nano)), nil)
				return err
			},
			Check: func(t *testing.T, kind string, err error) {
				if err != nil {
					t.Errorf("SweepMarkers: %v", err)
				}
				swept(t, tbl, extra...)
			},
		}
	}})
}

// beforeFirstBatch runs do once, before the first $batch request of the
// client it is a policy of is sent: between a sweep's scan and its delete.
type beforeFirstBatch struct {
	once sync.Once
	do   func(ctx context.Context) error
	err  error
}

func (h *beforeFirstBatch) Do(req *policy.Request) (*http.Response, error) {
	if req.Raw().Method == http.MethodPost && strings.HasSuffix(req.Raw().URL.Path, "/$batch") {
		h.once.Do(func() { h.err = h.do(req.Raw().Context()) })
	}
	return req.Next()
}

// A marker rewritten between SweepMarkers' scan and its delete — deleted
// by another sweep and written again by a new Once of the same key, or
// replaced — is a live marker the sweep must keep: the sweep deletes the
// other expired markers, keeps the rewritten ones and counts only what is
// gone (read raw).
func TestSweepMarkersKeepsARewrittenMarker(t *testing.T) {
	t.Parallel()
	tbl := markerTable(t)
	raw := env.TableService.NewClient(tbl.Name())
	live := func(rk, attempt string) []byte {
		return fmt.Appendf(nil, `{"PartitionKey":"p","RowKey":%q,"Expires@odata.type":"Edm.DateTime","Expires":%q,"Attempt":%q}`,
			eventual.MarkerPrefix+rk, sweepNow.Add(time.Hour).Format(time.RFC3339Nano), attempt)
	}
	hook := &beforeFirstBatch{do: func(ctx context.Context) error {
		if _, err := raw.DeleteEntity(ctx, "p", eventual.MarkerPrefix+"old0", nil); err != nil {
			return err
		}
		if _, err := raw.AddEntity(ctx, live("old0", "b"), nil); err != nil {
			return err
		}
		_, err := raw.UpsertEntity(ctx, live("old2", "c"), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
		return err
	}}
	n, err := eventual.SweepMarkers(context.Background(), patterntest.View[Account](t, env.With(hook), tbl), sweepNow)
	if hook.err != nil {
		t.Fatalf("the other writer: %v", hook.err)
	}
	if err != nil {
		t.Fatalf("SweepMarkers: %v", err)
	}
	if n != 4 {
		t.Errorf("SweepMarkers = %d, want 4: six expired markers found, two of them rewritten since", n)
	}
	swept(t, tbl, "p/old0", "p/old2")
	for _, r := range rawRows(t, tbl) {
		if r.pk() == "p" && (r.rk() == eventual.MarkerPrefix+"old0" && r["Attempt"] != "b" || r.rk() == eventual.MarkerPrefix+"old2" && r["Attempt"] != "c") {
			t.Errorf("%s holds %v, not the rewritten marker", r.rk(), r)
		}
	}
}
