package crypt_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/filter"
)

// vipRow's Secret is encrypted only for VIPs, by Config.Encrypt.
type vipRow struct {
	PartitionKey, RowKey string
	Secret               string
	Note                 string
}

func vipOnly(_, rk, name string) bool { return name == "Secret" && strings.HasPrefix(rk, "vip") }

// TestFilterOnPerEntityEncryption: with Config.Encrypt depending on the
// keys (Secret encrypted only when the RowKey starts with "vip"), a filter
// on Secret that the service would run in clear misses the VIP rows, which
// hold ciphertext. Such a filter is refused unless it pins the keys of an
// entity for which Config.Encrypt says clear; with Config.Encryptable the
// properties the function never chooses filter as usual. The stored rows
// are read back raw to show which hold ciphertext.
func TestFilterOnPerEntityEncryption(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ct, raw := onAzurite[vipRow](t, env, crypt.Config{Encrypt: vipOnly})
	for _, k := range [][2]string{{"p", "vip1"}, {"p", "reg1"}, {"q", "vip2"}, {"q", "reg2"}} {
		e := vipRow{PartitionKey: k[0], RowKey: k[1], Secret: "same", Note: "n"}
		if err := ct.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	// What the service holds: ciphertext for VIPs, "same" for the others.
	for _, b := range rawBodies(t, raw) {
		m := parseBody(t, b)
		vip := strings.HasPrefix(m["RowKey"].(string), "vip")
		if clear := m["Secret"] == "same"; clear == vip || (m["Secret@odata.type"] == "Edm.Binary") != vip {
			t.Fatalf("stored %v", m)
		}
	}
	rows := func(tbl *crypt.Table[vipRow], f filter.Expr) ([]string, error) {
		var out []string
		for e, err := range tbl.Query(ctx, entity.Query{Filter: f}) {
			if err != nil {
				return out, err
			}
			out = append(out, e.PartitionKey+"/"+e.RowKey)
		}
		return out, nil
	}
	refused := map[string]filter.Expr{
		"the whole table":                  filter.Eq("Secret", "same"),
		"a partition":                      filter.PK("p").And(filter.Eq("Secret", "same")),
		"a RowKey range of VIPs and not":   filter.PK("p").And(filter.RowKeyRange("a", "z"), filter.Eq("Secret", "same")),
		"a VIP by its keys":                filter.PK("p").And(filter.RK("vip1"), filter.Eq("Secret", "same")),
		"a VIP, negated":                   filter.PK("p").And(filter.RK("vip1"), filter.Not(filter.Ne("Secret", "same"))),
		"another property, no keys":        filter.Eq("Note", "n"),
		"an or of a VIP and a regular row": filter.Or(filter.PK("p").And(filter.RK("vip1")), filter.PK("p").And(filter.RK("reg1"))).And(filter.Eq("Secret", "same")),
	}
	for name, f := range refused {
		got, err := rows(ct, f)
		var fe *crypt.FilterError
		if !errors.Is(err, crypt.ErrEncryptedFilter) || !errors.Is(err, filter.ErrInvalidFilter) || !errors.Is(err, entity.ErrInvalid) || !errors.As(err, &fe) || len(got) != 0 {
			t.Errorf("%s: %v %v, want ErrEncryptedFilter before any row", name, got, err)
		}
		if _, err := ct.QueryPage(ctx, entity.Query{Filter: f}, ""); !errors.Is(err, crypt.ErrEncryptedFilter) {
			t.Errorf("%s, QueryPage: %v", name, err)
		}
	}
	// A point query of a regular row runs in clear and finds it; the keys
	// and Timestamp always filter.
	allowed := map[string]struct {
		f    filter.Expr
		want []string
	}{
		"a regular row by its keys": {filter.PK("p").And(filter.RK("reg1"), filter.Eq("Secret", "same")), []string{"p/reg1"}},
		"the keys alone":            {filter.PK("q"), []string{"q/reg2", "q/vip2"}},
		"a RowKey range":            {filter.PK("q").And(filter.RowKeyPrefix("vip")), []string{"q/vip2"}},
	}
	for name, c := range allowed {
		if got, err := rows(ct, c.f); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v %v, want %v", name, got, err, c.want)
		}
	}
	// A fan-out pins each partition: with RowKey eq reg2 in p and q, every
	// point is regular; with vip2 one is a VIP.
	var fan []string
	for e, err := range ct.QueryPartitions(ctx, []string{"p", "q"}, entity.Query{Filter: filter.RK("reg2").And(filter.Eq("Secret", "same"))}, entity.FanOutOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		fan = append(fan, e.PartitionKey+"/"+e.RowKey)
	}
	if !slices.Equal(fan, []string{"q/reg2"}) {
		t.Errorf("fan-out over regular points: %v", fan)
	}
	for name, f := range map[string]filter.Expr{"a VIP point": filter.RK("vip2").And(filter.Eq("Secret", "same")), "whole partitions": filter.Eq("Secret", "same")} {
		var got []error
		for _, err := range ct.QueryPartitions(ctx, []string{"p", "q"}, entity.Query{Filter: f}, entity.FanOutOptions{}) {
			got = append(got, err)
		}
		if len(got) != 1 || !errors.Is(got[0], crypt.ErrEncryptedFilter) {
			t.Errorf("fan-out over %s: %v, want one ErrEncryptedFilter", name, got)
		}
	}

	// With Config.Encryptable, Note is never encrypted and filters as
	// usual; Secret is still refused; a beacon on Secret answers eq only
	// where Config.Encrypt encrypts it for every entity the filter names.
	declared := cryptOver[vipRow](t, raw, ct.Name(), crypt.Config{Encrypt: vipOnly, Encryptable: []string{"Secret"}})
	if got, err := rows(declared, filter.Eq("Note", "n")); err != nil || len(got) != 4 {
		t.Errorf("Note with Encryptable: %v %v", got, err)
	}
	if _, err := rows(declared, filter.Eq("Secret", "same")); !errors.Is(err, crypt.ErrEncryptedFilter) {
		t.Errorf("Secret with Encryptable: %v", err)
	}
	beaconed := cryptOver[vipRow](t, raw, ct.Name(), crypt.Config{Encrypt: vipOnly, Encryptable: []string{"Secret"}, Beacons: []string{"Secret"}, BeaconKey: bytes.Repeat([]byte{7}, 32)})
	vip3 := vipRow{PartitionKey: "p", RowKey: "vip3", Secret: "same"}
	if err := beaconed.Insert(ctx, &vip3); err != nil {
		t.Fatal(err)
	}
	if got, err := rows(beaconed, filter.PK("p").And(filter.RK("vip3"), filter.Eq("Secret", "same"))); err != nil || !slices.Equal(got, []string{"p/vip3"}) {
		t.Errorf("beacon at a VIP point: %v %v", got, err)
	}
	if got, err := rows(beaconed, filter.PK("p").And(filter.RK("reg1"), filter.Eq("Secret", "same"))); err != nil || !slices.Equal(got, []string{"p/reg1"}) {
		t.Errorf("clear at a regular point: %v %v", got, err)
	}
	if _, err := rows(beaconed, filter.PK("p").And(filter.Eq("Secret", "same"))); !errors.Is(err, crypt.ErrEncryptedFilter) {
		t.Errorf("beacon over a partition of both kinds: %v", err)
	}
	// A write for which Config.Encrypt marks a property Encryptable leaves
	// out is refused before any request.
	bad := cryptOver[vipRow](t, raw, ct.Name(), crypt.Config{Encrypt: func(_, _, n string) bool { return n == "Note" }, Encryptable: []string{"Secret"}})
	e := vipRow{PartitionKey: "p", RowKey: "bad", Note: "n"}
	var we *crypt.WriteError
	if err := bad.Insert(ctx, &e); !errors.Is(err, crypt.ErrInvalidConfig) || !errors.Is(err, entity.ErrInvalid) || !errors.As(err, &we) || we.Property != "Note" {
		t.Errorf("write outside Encryptable: %v", err)
	}
	if _, err := raw.GetEntity(ctx, "p", "bad", nil); err == nil {
		t.Error("the refused write was stored")
	}
}

// TestFilterRuleWithoutEncrypt: without Config.Encrypt the tags alone
// decide, and with a function that encrypts everything the keys still
// filter.
func TestFilterRuleWithoutEncrypt(t *testing.T) {
	all := newOffline[entity.DynamicEntity](t, crypt.Config{Encrypt: func(string, string, string) bool { return true }})
	for _, f := range []filter.Expr{filter.PK("p"), filter.PK("p").And(filter.RowKeyPrefix("a")), filter.Ge("Timestamp", filter.Time(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))} {
		if _, err := crypt.RewriteFilter(all, f); err != nil {
			t.Errorf("keys with an encrypt-all function: %v", err)
		}
	}
	if _, err := crypt.RewriteFilter(all, filter.PK("p").And(filter.RK("r"), filter.Eq("X", 1))); !errors.Is(err, crypt.ErrEncryptedFilter) {
		t.Errorf("a point where everything is encrypted: %v", err)
	}
	tags := newOffline[vipRow](t, crypt.Config{})
	if _, err := crypt.RewriteFilter(tags, filter.Eq("Secret", "x")); err != nil {
		t.Errorf("an untagged property without Config.Encrypt: %v", err)
	}
}
