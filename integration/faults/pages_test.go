package faults_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/integration/faults"
)

// lastQuery keeps the query string of the last request sent, after the
// policies before it.
type lastQuery struct{ q atomic.Value }

func (l *lastQuery) Do(req *policy.Request) (*http.Response, error) {
	l.q.Store(req.Raw().URL.RawQuery)
	return req.Next()
}

// ShortPages makes the service end each page of a query after N entities:
// 25 entities are listed in pages of 10, 10 and 5, every one of them once;
// a query that asks for fewer per page keeps its $top, and a point read
// is unchanged.
func TestShortPagesEndPagesEarly(t *testing.T) {
	name, raw := newTable(t)
	for i := range 25 {
		if _, err := raw.AddEntity(t.Context(), entityBody(fmt.Sprintf("r%02d", i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	sent := &lastQuery{}
	svc, err := env.With(faults.ShortPages{N: 10}, sent).NewTableService(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := svc.NewClient(name)
	list := func(top *int32) (sizes []int, rows int) {
		pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: top})
		for pager.More() {
			page, err := pager.NextPage(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, len(page.Entities))
			rows += len(page.Entities)
		}
		return sizes, rows
	}
	if sizes, rows := list(nil); fmt.Sprint(sizes) != "[10 10 5]" || rows != 25 {
		t.Errorf("pages of %v, %d entities; want [10 10 5], 25", sizes, rows)
	}
	five := int32(5)
	if sizes, rows := list(&five); fmt.Sprint(sizes) != "[5 5 5 5 5]" || rows != 25 {
		t.Errorf("with $top=5: pages of %v, %d entities; want five of 5", sizes, rows)
	}
	if _, err := client.GetEntity(t.Context(), "p", "r07", nil); err != nil {
		t.Errorf("point read: %v", err)
	}
	if q := sent.q.Load().(string); strings.Contains(q, "top") {
		t.Errorf("the point read was sent with %q", q)
	}
}
