package canary_test

import (
	"context"
	"errors"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
	"io"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/patterns/bucket"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/large"
	"github.com/tablekit/tablekit/resolver"
)

// EntryClear is a directory entry whose copy of the phone is not
// encrypted.
type EntryClear struct {
	PartitionKey string
	RowKey       string
	ETag         string `table:",etag"`
	Manager      string
	ManagerName  string `table:",omitempty"`
	ManagerPhone string `table:",omitempty"`
}

// TestEncryptedTableRefusals: what cannot keep an encrypted value
// encrypted is refused before any request, with an error matching
// entity.ErrInvalid that says what to do (for index Sets: an index of an
// encrypted property without a beacon, or one Config.Encrypt may choose;
// an index copying an encrypted property; a move into a plain table); the
// same configurations over tables that can are taken.
func TestEncryptedTableRefusals(t *testing.T) {
	ctx := context.Background()
	key := newKey(t, "refusals")
	client := env.TableService.NewClient("refusalsnotcreated") // nothing is sent
	devices := encrypted[Device](t, client, crypt.Config{Key: key}).Entity()
	anyProp := func(_, _, _ string) bool { return true }
	cases := []struct {
		name string
		err  error
		say  string // in the error's text
	}{}
	add := func(name string, err error, say string) {
		cases = append(cases, struct {
			name string
			err  error
			say  string
		}{name, err, say})
	}

	_, err := bucket.New(devices, bucket.Config{Mode: entity.OpUpsertMerge})
	add("bucket with upsert-merge", err, "OpUpsertReplace")

	fw := encrypted[Firmware](t, client, crypt.Config{Key: key, Encrypt: anyProp}).Entity()
	_, err = large.New(fw, env.BlobService.ServiceClient().NewContainerClient("notcreated"), large.Config{})
	add("large whose blob field Config.Encrypt may choose", err, "Config.Encryptable")

	emps := encrypted[Employee](t, client, crypt.Config{Key: key}).Entity()
	clearDir := encrypted[EntryClear](t, env.TableService.NewClient("refusalsother"), crypt.Config{Key: key}).Entity()
	_, err = denormalize.New(clearDir, emps, denormalize.Config{Processor: mustProcessor(t)}, denormalize.Relation[EntryClear, Employee]{
		Name: "manager", Placement: denormalize.OtherPartition,
		Fields: []denormalize.Field{{From: "Phone", To: "ManagerPhone"}},
		Source: func(d *EntryClear) (denormalize.Key, bool) {
			return denormalize.Key{PartitionKey: d.RowKey, RowKey: d.Manager}, true
		},
		Targets: func(*Employee) denormalize.Targets { return denormalize.Targets{} },
	})
	add("denormalize copying an encrypted property into a clear one", err, "tag the target's field encrypt")

	depts := encrypted[Department](t, client, crypt.Config{Key: key}).Entity() // no Config.Types
	_, err = denormalize.New(depts, emps, denormalize.Config{}, managerRel())
	add("denormalize of one table whose views protect differently", err, "crypt.Config.Types")

	_, err = indexentity.New(devices, indexentity.Config{}, indexentity.Index[Device]{Name: "apikey", Encrypted: "APIKey", Value: func(d *Device) (string, bool) { return d.APIKey, true }})
	add("indexentity of an encrypted property without a beacon", err, "Config.Beacons")

	plain, perr := entity.NewTable[Device](env.TableService.NewClient("refusalsplain"))
	if perr != nil {
		t.Fatal(perr)
	}
	add("eventual.Move from an encrypted table into a plain one", eventual.Move(ctx, devices, plain, "p", "r", nil), "crypt's Table.Entity")

	dyn, derr := entity.ViewAs[entity.DynamicEntity](devices)
	if derr != nil {
		t.Fatal(derr)
	}
	_, err = backup.Export(ctx, dyn, io.Discard, backup.ExportOptions{})
	add("backup.Export of an encrypted table", err, "ExportOptions.Decrypted")

	schema, serr := resolver.NewSchema(resolver.Config{}, resolver.Register[Registered]("Registered.v1"))
	if serr != nil {
		t.Fatal(serr)
	}
	bags := encrypted[entity.DynamicEntity](t, client, crypt.Config{Key: key, Encrypt: anyProp}).Entity()
	_, err = resolver.NewTableOf(bags, schema)
	add("resolver whose discriminator Config.Encrypt may choose", err, "Config.Encryptable")
	indexRefusals(devices, bags, add)

	for _, c := range cases {
		if !errors.Is(c.err, entity.ErrInvalid) || !strings.Contains(c.err.Error(), c.say) {
			t.Errorf("%s: got %v, want an error matching entity.ErrInvalid that says %q", c.name, c.err, c.say)
		}
	}

	// The same components over tables that keep the values encrypted.
	if _, err := bucket.New(devices, bucket.Config{}); err != nil {
		t.Errorf("bucket: %v", err)
	}
	beaconed := encrypted[Device](t, client, crypt.Config{Key: key, Beacons: []string{"APIKey"}, BeaconKey: beaconKey}).Entity()
	if _, err := secondaryindex.New(beaconed, secondaryindex.Config{}, apiKeyIndex(secondaryindex.SamePartition)); err != nil {
		t.Errorf("secondaryindex of an encrypted property with a beacon: %v", err)
	}
	if _, err := indexentity.New(beaconed, indexentity.Config{}, indexentity.Index[Device]{Name: "apikey", Encrypted: "APIKey", Value: func(d *Device) (string, bool) { return d.APIKey, true }}); err != nil {
		t.Errorf("indexentity of an encrypted property with a beacon: %v", err)
	}
	fn, list := policy("APIKey")
	fw = encrypted[Firmware](t, client, crypt.Config{Key: key, Encrypt: fn, Encryptable: list}).Entity()
	if _, err := large.New(fw, env.BlobService.ServiceClient().NewContainerClient("notcreated"), large.Config{}); err != nil {
		t.Errorf("large: %v", err)
	}
	depts = encrypted[Department](t, client, crypt.Config{Key: key, Types: []any{Employee{}}}).Entity()
	emps = encrypted[Employee](t, client, crypt.Config{Key: key, Types: []any{Department{}}}).Entity()
	if _, err := denormalize.New(depts, emps, denormalize.Config{}, managerRel()); err != nil {
		t.Errorf("denormalize: %v", err)
	}
	bags = encrypted[entity.DynamicEntity](t, client, crypt.Config{Key: key, Encrypt: fn, Encryptable: list}).Entity()
	if _, err := resolver.NewTableOf(bags, schema); err != nil {
		t.Errorf("resolver: %v", err)
	}
	base, err := entity.NewTable[Device](client)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crypt.New(base, crypt.Config{Key: key, Types: []any{struct {
		PartitionKey, RowKey string
		APIKey               string `table:",sign"`
	}{}}}); !errors.Is(err, crypt.ErrInvalidConfig) {
		t.Errorf("crypt.New with Types that tag a property differently: %v, want ErrInvalidConfig", err)
	}
}

func mustProcessor(t testing.TB) *eventual.Processor {
	t.Helper()
	p, err := eventual.New(eventual.QueuesOf(env.QueueService, "refusalsnotcreated"), nil, eventual.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
