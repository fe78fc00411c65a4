package secondaryindex_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// Employee is the guide's employee: department as PartitionKey, "empid_"
// and a padded id as RowKey.
type Employee struct {
	PartitionKey string
	RowKey       string
	ETag         string
	FirstName    string
	LastName     string
	Email        string `table:",omitempty"`
	Age          int32
}

func empid(i int) string { return fmt.Sprintf("empid_%06d", i) }

// emailIndex and nameIndex are the guide's two indexes: a unique email,
// a non-unique last name copying only the names.
func emailIndex(p secondaryindex.Placement) secondaryindex.Index[Employee] {
	return secondaryindex.Index[Employee]{
		Name: "email", Unique: true, Placement: p,
		Key: func(e *Employee) (string, bool) { return strings.ToLower(e.Email), e.Email != "" },
	}
}

func nameIndex(p secondaryindex.Placement) secondaryindex.Index[Employee] {
	return secondaryindex.Index[Employee]{
		Name: "name", Placement: p, Properties: []string{"FirstName", "LastName"},
		Key: func(e *Employee) (string, bool) { return e.LastName, e.LastName != "" },
	}
}

// employees returns a typed view of a new table on e.
func employees(t testing.TB, e *integration.Env) *entity.Table[Employee] {
	t.Helper()
	return patterntest.Table[Employee](t, e)
}

func localSet(t testing.TB, tbl *entity.Table[Employee]) *secondaryindex.Set[Employee] {
	t.Helper()
	s, err := secondaryindex.New(tbl, secondaryindex.Config{PrimaryPrefix: "empid_"}, emailIndex(secondaryindex.SamePartition), nameIndex(secondaryindex.SamePartition))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// findings runs a check and returns its findings.
func findings(t testing.TB, s *secondaryindex.Set[Employee], opts secondaryindex.CheckOptions) []drift.Finding {
	t.Helper()
	return patterntest.Collect(t, s.Check(context.Background(), opts))
}

// rowKeys lists the RowKeys of a partition of tbl.
func rowKeys[T any](t testing.TB, tbl *entity.Table[T], pk string) []string {
	t.Helper()
	var rks []string
	for e, err := range tbl.Query(context.Background(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		sys, _ := entity.SystemOf(&e)
		if pk == "" || sys.PartitionKey == pk {
			rks = append(rks, sys.PartitionKey+"/"+sys.RowKey)
		}
	}
	slices.Sort(rks)
	return rks
}

// fast is a processor configuration for tests: quick polling, retries
// after a second, a short visibility timeout so that a crashed worker's
// messages come back soon.
func fast() eventual.Config {
	return eventual.Config{
		Workers:           4,
		VisibilityTimeout: 2 * time.Second,
		RetryDelay:        200 * time.Millisecond,
		MaxRetryDelay:     time.Second,
		MaxDeliveries:     20,
		PollInterval:      10 * time.Millisecond,
		MaxPollInterval:   50 * time.Millisecond,
		ShutdownGrace:     2 * time.Second,
	}
}

// remoteConfig is the Set configuration of the OtherPartition tests. Its
// Grace is 0: the processor's DefaultGrace, two thirds of its redelivery
// window (about 12.7 s for fast() and crashy(): an insert is sent within
// 6.3 s of its reservations, well above a request on a loaded machine).
func remoteConfig(entries *entity.Table[entity.DynamicEntity]) secondaryindex.Config {
	return secondaryindex.Config{
		PrimaryPrefix: "empid_",
		Entries:       entries,
		Outbox:        eventual.OutboxConfig{Grace: -1},
	}
}

// remoteSet makes a processor over qs (from e) and the Set of tbl with
// the email and name indexes in other partitions.
func remoteSet(t testing.TB, e *integration.Env, qs []eventual.Queue, tbl *entity.Table[Employee], entries *entity.Table[entity.DynamicEntity], pcfg eventual.Config) (*secondaryindex.Set[Employee], *eventual.Processor) {
	t.Helper()
	p, err := eventual.New(patterntest.SameQueues(t, e, qs), nil, pcfg)
	if err != nil {
		t.Fatal(err)
	}
	var ent *entity.Table[entity.DynamicEntity]
	if entries != nil {
		ent = patterntest.View[entity.DynamicEntity](t, e, entries)
	}
	s, err := secondaryindex.New(patterntest.View[Employee](t, e, tbl), withProcessor(remoteConfig(ent), p),
		emailIndex(secondaryindex.OtherPartition), nameIndex(secondaryindex.OtherPartition))
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// poisoned counts the messages in qs's poison queues.
func poisoned(t testing.TB, qs []eventual.Queue) int {
	t.Helper()
	n := 0
	for _, q := range qs {
		props, err := q.Poison.GetProperties(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if props.ApproximateMessagesCount != nil {
			n += int(*props.ApproximateMessagesCount)
		}
	}
	return n
}

// withProcessor is cfg with Config.Processor p.
func withProcessor(cfg secondaryindex.Config, p *eventual.Processor) secondaryindex.Config {
	cfg.Processor = p
	return cfg
}
