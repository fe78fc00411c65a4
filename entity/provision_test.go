package entity_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
)

// tableExists reads, with the environment's raw client, whether the table
// exists.
func tableExists(t *testing.T, name string) bool {
	t.Helper()
	top := int32(1)
	_, err := env.TableService.NewClient(name).NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: &top}).NextPage(context.Background())
	if err == nil {
		return true
	}
	if strings.Contains(err.Error(), "TableNotFound") || strings.Contains(err.Error(), "ResourceNotFound") {
		return false
	}
	t.Fatalf("reading table %s: %v", name, err)
	return false
}

// isTableCreate matches the request that creates a table.
func isTableCreate(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/Tables")
}

// Provision twice: the first creates the table, the second finds it and
// leaves what it holds alone.
func TestProvisionTwice(t *testing.T) {
	ctx := t.Context()
	svc, err := env.NewTableService(env.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	name := env.TableName(t)
	people, err := entity.NewTableFromService[Person](svc, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := people.Provision(ctx); err != nil {
		t.Fatalf("first Provision: %v", err)
	}
	if err := people.Insert(ctx, &Person{Dept: "d", ID: "1"}); err != nil {
		t.Fatal(err)
	}
	if err := people.Provision(ctx); err != nil {
		t.Fatalf("second Provision: %v", err)
	}
	if _, err := env.TableService.NewClient(name).GetEntity(ctx, "d", "1", nil); err != nil {
		t.Fatalf("the entity written between the two Provisions: %v", err)
	}
}

// The reply to the create is lost: azcore resends it and the service
// answers 409 TableAlreadyExists for the table the first try made. Plain
// CreateTable cannot tell (ErrOutcomeUnknown); Provision reports success,
// and the table exists.
func TestProvisionLostReply(t *testing.T) {
	ctx := t.Context()
	f := faults.New(faults.Config{})
	svc, err := env.With(f).NewTableService(env.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}

	name := env.TableName(t)
	people, err := entity.NewTableFromService[Person](svc, name)
	if err != nil {
		t.Fatal(err)
	}
	f.LoseNext(1, isTableCreate)
	if err := people.Provision(ctx); err != nil {
		t.Fatalf("Provision after a lost reply: %v", err)
	}
	if s := f.Stats(); s.LostReplies != 1 {
		t.Fatalf("lost replies %d, want 1", s.LostReplies)
	}
	if !tableExists(t, name) {
		t.Fatal("Provision reported success and the table does not exist")
	}

	// The same loss on CreateTable: not a refusal, an unknown outcome.
	other := env.TableName(t)
	plain, err := entity.NewTableFromService[Person](svc, other)
	if err != nil {
		t.Fatal(err)
	}
	f.LoseNext(1, isTableCreate)
	if err := plain.CreateTable(ctx); !errors.Is(err, entity.ErrOutcomeUnknown) {
		t.Fatalf("CreateTable after a lost reply: %v, want ErrOutcomeUnknown", err)
	}
}

// A table being deleted: the service refuses its name (409
// TableBeingDeleted) for a while after a delete; Azurite deletes at once,
// so faults.Deleting answers as the service does. Provision asks again
// until the name is free and the table exists; when ctx ends first, its
// error matches ErrBeingDeleted and ctx's error, and no table was
// created.
func TestProvisionWhileBeingDeleted(t *testing.T) {
	ctx := t.Context()
	d := faults.NewDeleting()
	svc, err := env.With(d).NewTableService(env.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("freed", func(t *testing.T) {
		name := env.TableName(t)
		if !env.Live {
			// A real delete first, which Azurite finishes at once.
			if _, err := env.TableService.CreateTable(ctx, name, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := env.TableService.DeleteTable(ctx, name, nil); err != nil {
				t.Fatal(err)
			}
		}
		people, err := entity.NewTableFromService[Person](svc, name)
		if err != nil {
			t.Fatal(err)
		}
		d.Hold(faults.Table, name, time.Second)
		before := d.Refused()
		start := time.Now()
		if err := people.Provision(ctx); err != nil {
			t.Fatalf("Provision of a table being deleted for 1 s: %v", err)
		}
		if took := time.Since(start); took < time.Second {
			t.Errorf("Provision returned after %v, before the name was free", took)
		}
		if d.Refused() == before {
			t.Error("no create was refused")
		}
		if !tableExists(t, name) {
			t.Fatal("Provision reported success and the table does not exist")
		}
	})

	t.Run("ctx ends first", func(t *testing.T) {
		name := env.TableName(t)
		people, err := entity.NewTableFromService[Person](svc, name)
		if err != nil {
			t.Fatal(err)
		}
		d.Hold(faults.Table, name, time.Minute)
		defer d.Hold(faults.Table, name, 0)
		cctx, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
		defer cancel()
		err = people.Provision(cctx)
		if !errors.Is(err, entity.ErrBeingDeleted) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Provision while the name stays deleted: %v, want ErrBeingDeleted and DeadlineExceeded", err)
		}
		var se *entity.ServiceError
		if !errors.As(err, &se) || se.Code != "TableBeingDeleted" {
			t.Errorf("the last answer is not reachable: %#v", se)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "entity: table \""+name+"\"") || strings.Contains(msg, "\n") {
			t.Errorf("message %q", msg)
		}
		if tableExists(t, name) {
			t.Fatal("a table was created while its name was being deleted")
		}
	})

	t.Run("CreateTable", func(t *testing.T) {
		// CreateTable does not wait: its error matches ErrBeingDeleted,
		// not ErrAlreadyExists (the table does not exist).
		name := env.TableName(t)
		people, err := entity.NewTableFromService[Person](svc, name)
		if err != nil {
			t.Fatal(err)
		}
		d.Hold(faults.Table, name, time.Minute)
		defer d.Hold(faults.Table, name, 0)
		for _, create := range []func(context.Context) error{people.CreateTable, people.CreateTableIfNotExists} {
			if err := create(ctx); !errors.Is(err, entity.ErrBeingDeleted) || errors.Is(err, entity.ErrAlreadyExists) {
				t.Errorf("create while being deleted: %v", err)
			}
		}
	})
}

// A nil or zero Table is refused before any request.
func TestProvisionNilTable(t *testing.T) {
	var nilTable *entity.Table[Person]
	if err := nilTable.Provision(t.Context()); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("nil Table: %v", err)
	}
	if err := new(entity.Table[Person]).Provision(t.Context()); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("zero Table: %v", err)
	}
}
