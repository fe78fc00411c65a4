package canary_test

import (
	"bytes"
	"context"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// beaconKey is the canary's HMAC key of the beacons of indexed
// properties.
var beaconKey = bytes.Repeat([]byte{5}, 32)

// apiKeyIndex indexes the devices by their encrypted APIKey, whose
// entries are keyed by its beacon.
func apiKeyIndex(p secondaryindex.Placement) secondaryindex.Index[Device] {
	return secondaryindex.Index[Device]{
		Name: "apikey", Unique: true, Placement: p, Encrypted: "APIKey",
		Key: func(d *Device) (string, bool) { return d.APIKey, d.APIKey != "" },
	}
}

// secondaryindex writes devices through index Sets of an encrypted table
// (their APIKey indexed by its beacon, SamePartition and TableWide; their
// name in clear, copying every property the table does not encrypt; and
// indexentity's lists of the APIKey's beacon, in the partition and
// table-wide), with lost replies: a duplicate key and a prefix lookup are
// refused, and the lookups return the devices decrypted.
func (r *run) secondaryindex() {
	name := r.newTable()
	qs := queues(r.t, env)
	p, err := eventual.New(qs, nil, eventual.Config{Hooks: eventual.Hooks{Error: r.errs.add}})
	r.must("eventual.New", err)
	dev := encrypted[Device](r.t, table(r.v.lossy, name), crypt.Config{Key: r.key, Beacons: []string{"APIKey"}, BeaconKey: beaconKey})
	byName := secondaryindex.Index[Device]{Name: "name", Key: func(d *Device) (string, bool) { return d.Name, d.Name != "" }}
	local, wide := apiKeyIndex(secondaryindex.SamePartition), apiKeyIndex(secondaryindex.TableWide)
	local.Name, wide.Buckets = "local", 2
	s, err := secondaryindex.New(dev.Entity(), secondaryindex.Config{Processor: p, Outbox: eventual.OutboxConfig{Grace: eventual.NoGrace}}, local, wide, byName)
	r.must("secondaryindex.New", err)
	r.must("index Insert", s.Insert(r.ctx, &Device{PartitionKey: "fleet", RowKey: "i1", Name: "pump", APIKey: r.s.value("index-1")}))
	r.must("index Insert of another", s.Insert(r.ctx, &Device{PartitionKey: "depot", RowKey: "i2", Name: "pump", APIKey: r.s.value("index-2")}))
	_, err = s.Modify(r.ctx, "fleet", "i1", func(d *Device) error { d.APIKey = r.s.value("index-3"); return nil }, entity.ModifyOptions{})
	r.must("index Modify", err)
	drain(r.t, p)
	r.refused("an index's duplicate value", s.Insert(r.ctx, &Device{PartitionKey: "depot", RowKey: "i3", APIKey: r.s.value("index-2")}), secondaryindex.ErrDuplicate)
	for _, err := range s.LookupValuePrefix(r.ctx, "apikey", r.s.value("index"), secondaryindex.LookupOptions{}) {
		r.refused("a prefix lookup of an encrypted value", err, secondaryindex.ErrEncrypted)
	}
	d, err := s.LookupValue(r.ctx, "apikey", r.s.value("index-3"), secondaryindex.LookupOptions{})
	r.must("LookupValue", err)
	r.wantKey("index LookupValue", d.APIKey, "index-3")
	d, err = s.Lookup(r.ctx, "local", "depot", r.s.value("index-2"), secondaryindex.LookupOptions{})
	r.must("Lookup", err)
	r.wantKey("index Lookup", d.APIKey, "index-2")
	n := 0
	for d, err := range s.LookupAll(r.ctx, "name", "fleet", "pump", secondaryindex.LookupOptions{}) {
		r.must("LookupAll", err)
		r.wantKey("index LookupAll", d.APIKey, "index-3")
		n++
	}
	if n != 1 {
		r.t.Errorf("secondaryindex: %d devices named pump in the fleet, want 1", n)
	}
	for f, err := range s.Check(r.ctx, secondaryindex.CheckOptions{}) {
		r.must("index Check", err)
		r.t.Errorf("secondaryindex: Check found %+v", f)
	}
	// indexentity: lists of the devices by key, in the partition and
	// table-wide, in a table of their own.
	lists := encrypted[Device](r.t, table(r.v.lossy, r.newTable()), crypt.Config{Key: r.key, Beacons: []string{"APIKey"}, BeaconKey: beaconKey})
	ie, err := indexentity.New(lists.Entity(), indexentity.Config{Processor: p, Kind: "canary.lists.v1", Outbox: eventual.OutboxConfig{Grace: eventual.NoGrace}},
		indexentity.Index[Device]{Name: "lkey", Encrypted: "APIKey", Value: func(d *Device) (string, bool) { return d.APIKey, d.APIKey != "" }},
		indexentity.Index[Device]{Name: "wkey", Encrypted: "APIKey", Placement: indexentity.TableWide, Buckets: 2, Value: func(d *Device) (string, bool) { return d.APIKey, d.APIKey != "" }})
	r.must("indexentity.New", err)
	r.must("list Insert", ie.Insert(r.ctx, &Device{PartitionKey: "yard", RowKey: "l1", APIKey: r.s.value("list-1")}))
	r.must("list Insert of another", ie.Insert(r.ctx, &Device{PartitionKey: "yard", RowKey: "l2", APIKey: r.s.value("list-1")}))
	_, err = ie.Modify(r.ctx, "yard", "l2", func(d *Device) error { d.APIKey = r.s.value("list-2"); return nil }, entity.ModifyOptions{})
	r.must("list Modify", err)
	drain(r.t, p)
	n = 0
	for d, err := range ie.LookupAll(r.ctx, "lkey", "yard", r.s.value("list-1"), indexentity.LookupOptions{}) {
		r.must("list LookupAll", err)
		r.wantKey("list LookupAll", d.APIKey, "list-1")
		n++
	}
	for d, err := range ie.LookupValueAll(r.ctx, "wkey", r.s.value("list-2"), indexentity.LookupOptions{}) {
		r.must("list LookupValueAll", err)
		r.wantKey("list LookupValueAll", d.APIKey, "list-2")
		n++
	}
	if n != 2 {
		r.t.Errorf("indexentity: %d devices found, want 2", n)
	}
	for f, err := range ie.Check(r.ctx, indexentity.CheckOptions{}) {
		r.must("list Check", err)
		r.t.Errorf("indexentity: Check found %+v", f)
	}
}

// indexRefusals are the index Sets' refusals over an encrypted table.
func indexRefusals(devices *entity.Table[Device], maybe *entity.Table[entity.DynamicEntity], add func(string, error, string)) {
	_, err := secondaryindex.New(devices, secondaryindex.Config{}, apiKeyIndex(secondaryindex.SamePartition))
	add("secondaryindex of an encrypted property without a beacon", err, "Config.Beacons")
	copying := secondaryindex.Index[Device]{Name: "name", Properties: []string{"Name", "APIKey"}, Key: func(d *Device) (string, bool) { return d.Name, true }}
	_, err = secondaryindex.New(devices, secondaryindex.Config{}, copying)
	add("secondaryindex copying an encrypted property into its entries", err, "an entry holds no copy")
	_, err = secondaryindex.New(maybe, secondaryindex.Config{}, secondaryindex.Index[entity.DynamicEntity]{
		Name: "apikey", Encrypted: "APIKey", Key: func(d *entity.DynamicEntity) (string, bool) { return entity.Prop[string](d, "APIKey") },
	})
	add("secondaryindex of a property Config.Encrypt may choose", err, "some entities only")
	s, err := secondaryindex.New(devices, secondaryindex.Config{}, secondaryindex.Index[Device]{Name: "name", Key: func(d *Device) (string, bool) { return d.Name, true }})
	if err != nil {
		add("secondaryindex of a clear property", err, "")
		return
	}
	plain, err := entity.NewTable[Device](env.TableService.NewClient("refusalsmoved"))
	if err != nil {
		panic(err)
	}
	err = s.MoveTo(context.Background(), "p", "r", plain)
	add("secondaryindex MoveTo a plain table", err, "in clear")
}
