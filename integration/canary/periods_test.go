package canary_test

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/patterns/rotation"
)

// rotation writes devices into hourly period tables, each wrapped in a
// crypt Table by Config.Open, through the lossy clients, and reads them
// back decrypted across the periods.
func (r *run) rotation() {
	var b [4]byte
	_, _ = rand.Read(b[:])
	catalog := r.newTable()
	start := time.Date(2031, 5, 6, 10, 0, 0, 0, time.UTC)
	at := map[string]time.Time{"early": start, "late": start.Add(time.Hour)}
	rot, err := rotation.New(r.v.lossy.TableService, table(r.v.lossy, catalog), rotation.Config[Device]{
		Name: "canary" + hex.EncodeToString(b[:]), Period: rotation.Hour,
		Time: func(d *Device) time.Time { return at[d.Name] },
		Open: func(t *entity.Table[Device]) (*entity.Table[Device], error) {
			ct, err := crypt.New(t, crypt.Config{Key: r.key})
			if err != nil {
				return nil, err
			}
			return ct.Entity(), nil
		},
	})
	r.must("rotation.New", err)
	r.must("rotation Insert", rot.Insert(r.ctx, &Device{PartitionKey: "fleet", RowKey: "r1", Name: "early", APIKey: r.s.value("rotation-1")}))
	_, err = rot.BulkWrite(r.ctx, []Device{{PartitionKey: "fleet", RowKey: "r2", Name: "late", APIKey: r.s.value("rotation-2")}}, entity.BulkOptions{})
	r.must("rotation BulkWrite", err)
	var got []Device
	for d, err := range rot.Query(r.ctx, start, start.Add(2*time.Hour), entity.Query{}) {
		r.must("rotation Query", err)
		got = append(got, d)
	}
	if len(got) != 2 {
		r.t.Fatalf("rotation: %d devices read across the periods, want 2", len(got))
	}
	r.wantKey("rotation early", got[0].APIKey, "rotation-1")
	r.wantKey("rotation late", got[1].APIKey, "rotation-2")
}
