package resolver_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/resolver"
)

// customerBody is a stored Customer.v2 p/r whose First is by.
func customerBody(by string) []byte {
	return []byte(`{"PartitionKey":"p","RowKey":"r","EntityType":"Customer.v2","First":"` + by + `","Last":"Lee","Edits@odata.type":"Edm.Int64","Edits":"0"}`)
}

// Every write of a resolver Table, with the reply of each of its requests
// lost and another process inserting, replacing, merging or deleting the
// same entity inside azcore's retry window (seamtest.EveryReply): a write
// whose request was executed is reported applied or ErrOutcomeUnknown,
// never refused; Modify, which reads first, may also find the entity
// deleted. Without a fault the stored entity, read with a raw client, is
// the write's.
func TestWritesBesideAnotherWriter(t *testing.T) {
	_, v2 := customerSchemas(t)
	mine := func(etag string) *Customer {
		return &Customer{PartitionKey: "p", RowKey: "r", ETag: etag, First: "me", Last: "Lee"}
	}
	type op struct {
		name   string
		exists bool // the entity is there before the write
		del    bool // the write removes it
		do     func(ctx context.Context, tbl *resolver.Table, etag string) error
	}
	ops := []op{
		{"Insert", false, false, func(ctx context.Context, tbl *resolver.Table, _ string) error {
			return tbl.Insert(ctx, mine(""))
		}},
		{"Upsert", false, false, func(ctx context.Context, tbl *resolver.Table, _ string) error {
			return tbl.Upsert(ctx, mine(""), entity.Replace)
		}},
		{"Update", true, false, func(ctx context.Context, tbl *resolver.Table, etag string) error {
			return tbl.Update(ctx, mine(etag), entity.Replace)
		}},
		{"UpdateAny", true, false, func(ctx context.Context, tbl *resolver.Table, _ string) error {
			return tbl.UpdateAny(ctx, mine(""), entity.Merge)
		}},
		{"Delete", true, true, func(ctx context.Context, tbl *resolver.Table, etag string) error {
			return tbl.Delete(ctx, "p", "r", etag)
		}},
		{"DeleteEntity", true, true, func(ctx context.Context, tbl *resolver.Table, etag string) error {
			return tbl.DeleteEntity(ctx, mine(etag))
		}},
		{"DeleteIfExists", true, true, func(ctx context.Context, tbl *resolver.Table, _ string) error {
			_, err := tbl.DeleteIfExists(ctx, "p", "r")
			return err
		}},
		{"Modify", true, false, func(ctx context.Context, tbl *resolver.Table, _ string) error {
			_, err := tbl.Modify(ctx, "p", "r", func(v any) error {
				c, ok := v.(*Customer)
				if !ok {
					return errors.New("not a Customer")
				}
				c.First = "me"
				return nil
			}, entity.ModifyOptions{})
			return err
		}},
		{"Submit", false, false, func(ctx context.Context, tbl *resolver.Table, _ string) error {
			_, err := tbl.Submit(ctx, tbl.NewBatch().Insert(mine("")).Insert(&Customer{PartitionKey: "p", RowKey: "r2", First: "me"}))
			return err
		}},
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			seamtest.EveryReply(t, env, seamtest.Race{Prepare: func(t *testing.T) seamtest.RaceRun {
				name := env.TableName(t)
				if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _, _ = env.TableService.DeleteTable(context.Background(), name, nil) })
				raw := env.TableService.NewClient(name)
				var etag string
				if o.exists {
					resp, err := raw.AddEntity(t.Context(), customerBody("before"), nil)
					if err != nil {
						t.Fatal(err)
					}
					etag = string(resp.ETag)
				}
				return seamtest.RaceRun{
					Work: func(ctx context.Context, v *integration.Env) error {
						tbl, err := resolver.NewTable(v.TableService.NewClient(name), v2)
						if err != nil {
							return err
						}
						return o.do(ctx, tbl, etag)
					},
					Compete: func(ctx context.Context, kind string, _ *http.Request) error {
						var err error
						switch kind {
						case seamtest.Insert:
							_, err = raw.AddEntity(ctx, customerBody("other"), nil)
						case seamtest.Replace:
							_, err = raw.UpsertEntity(ctx, customerBody("other"), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
						case seamtest.Merge:
							_, err = raw.UpdateEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","First":"other"}`), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
						case seamtest.Delete:
							_, err = raw.DeleteEntity(ctx, "p", "r", nil)
						}
						return err
					},
					Check: func(t *testing.T, kind string, err error) {
						if kind == "" {
							d, found := storedCustomer(t, raw)
							if found == o.del || found && d != "me" {
								t.Errorf("without a fault: stored First %q (found %v)", d, found)
							}
							if err != nil {
								t.Errorf("without a fault: %v", err)
							}
							return
						}
						if o.name == "Modify" {
							// Its read may be the lost request: the write
							// then comes after the other writer's.
							if err != nil && !errors.Is(err, entity.ErrOutcomeUnknown) && !(kind == seamtest.Delete && errors.Is(err, entity.ErrNotFound)) {
								t.Errorf("Modify beside a %s: %v", kind, err)
							}
							return
						}
						// Every request of these writes is the write: a lost
						// reply means it was executed.
						seamtest.Truthful(t, o.name, err, true)
					},
				}
			}})
		})
	}
}

// storedCustomer reads p/r with the raw client: its First, and whether it
// is there.
func storedCustomer(t *testing.T, raw *aztables.Client) (string, bool) {
	t.Helper()
	resp, err := raw.GetEntity(t.Context(), "p", "r", nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	var d entity.DynamicEntity
	if err := entity.Unmarshal(resp.Value, &d); err != nil {
		t.Fatal(err)
	}
	first, _ := d.Properties["First"].(string)
	return first, true
}
