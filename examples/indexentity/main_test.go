package main

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/indexentity"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program's story as main does, on the test account with
// a table, a container and queues of its own, and checks what it says and
// what it leaves.
func TestRun(t *testing.T) {
	names := Names{Personnel: env.TableName(t), Lists: env.ContainerName(t), IndexQueue: env.QueueName(t)}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = env.BlobService.DeleteContainer(ctx, names.Lists, nil)
		_, _ = env.QueueService.DeleteQueue(ctx, names.IndexQueue, nil)
		_, _ = env.QueueService.DeleteQueue(ctx, names.IndexQueue+"-poison", nil)
	})
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		`index entity Sales/lastname_Jones: Members = "000123\n000152\n"`,
		"lastname = Jones in Sales: 000123 Jun Jones (Redmond); 000152 Don Jones (Seattle)\n",
		"lastname = Jones in Sales: 000123 Jun Jones (Redmond)\n",
		"lastname = Smith in Sales: 000140 Ken Smith (Seattle); 000152 Don Smith (Seattle)\n",
		"before the worker ran, Seattle's list names 0 employees",
		"city = Seattle in Sales: 000140 Ken Smith (Seattle); 000152 Don Smith (Seattle); 000161 Don Hall (Seattle)\n",
		"firstname = Don in Sales: 000152 Don Smith (Seattle); 000161 Don Hall (Seattle)\n",
		"missing: the primary holds \"Smith\" and the list does not name it",
		"rebuilt: 2 missing, 2 repaired",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}

	// The lists in the employees' partition, as stored: each names exactly
	// the employees of its last name.
	raw, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, names.Personnel)
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string]string{}
	for e, err := range raw.Query(t.Context(), entity.Query{Filter: filter.And(filter.PK("Sales"), filter.RowKeyPrefix("lastname_"))}) {
		if err != nil {
			t.Fatal(err)
		}
		m, _ := entity.Prop[string](&e, indexentity.PropMembers)
		lists[e.RowKey] = m
	}
	if lists["lastname_Jones"] != "000123\n" || lists["lastname_Smith"] != "000140\n000152\n" || lists["lastname_Hall"] != "000161\n" || len(lists) != 3 {
		t.Errorf("stored lists %q", lists)
	}
}
