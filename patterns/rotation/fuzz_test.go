package rotation

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/tablename"
)

type fuzzEntity struct {
	PartitionKey, RowKey string
	At                   time.Time
}

// FuzzTableName checks the names and catalog keys a Rotation builds: for
// any accepted name and period, every period's table name is a valid table
// name that starts with the rotation's name, and catalog keys sort as their
// periods do; a refused configuration is a *ConfigError.
func FuzzTableName(f *testing.F) {
	f.Add("logins", int64(1722384000), int64(1722470400), uint32(1440))
	f.Fuzz(func(t *testing.T, name string, a, b int64, minutes uint32) {
		svc, err := aztables.NewServiceClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/", nil)
		if err != nil {
			t.Fatal(err)
		}
		period := time.Duration(minutes) * time.Minute
		r, err := New(svc, svc.NewClient("catalog"), Config[fuzzEntity]{Name: name, Period: period, Time: func(e *fuzzEntity) time.Time { return e.At }})
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, entity.ErrInvalid) {
				t.Fatalf("New(%q, %v): %v, not a *ConfigError", name, period, err)
			}
			if tablename.CheckPrefix(name, tablename.MaxLength-MaxNameLength) == "" && period >= time.Minute && period%time.Minute == 0 {
				t.Fatalf("New refused a valid name %q and period %v: %v", name, period, err)
			}
			return
		}
		span := maxTime.Unix() - minTime.Unix()
		clamp := func(x int64) time.Time {
			x %= span
			if x < 0 {
				x += span
			}
			return time.Unix(minTime.Unix()+x, 0).UTC()
		}
		ta, tb := r.PeriodOf(clamp(a)), r.PeriodOf(clamp(b))
		for _, p := range []time.Time{ta, tb} {
			n := r.newTableName(p)
			if reason := tablename.Check(n); reason != "" {
				t.Fatalf("name %q for period %v: %s", n, p, reason)
			}
			if !strings.HasPrefix(n, name+r.label(p)) {
				t.Fatalf("name %q does not start with %q", n, name+r.label(p))
			}
		}
		la, lb := r.label(ta), r.label(tb)
		if len(la) != len(lb) {
			t.Fatalf("labels %q and %q differ in width", la, lb)
		}
		if (la < lb) != ta.Before(tb) || (la == lb) != ta.Equal(tb) {
			t.Fatalf("labels %q, %q do not sort as periods %v, %v", la, lb, ta, tb)
		}
	})
}
