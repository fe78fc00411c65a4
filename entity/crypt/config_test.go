package crypt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
)

// TestConfigErrors checks that New and NewLocalKey refuse what cannot work
// with a *ConfigError naming the field, matching ErrInvalidConfig, and
// send nothing: the tables are on the test's Azurite, behind a meter.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	meter := cost.NewMeter()
	named, err := entity.NewTableFromService[person](env.With(meter.Policy()).TableService, env.TableName(t))
	if err != nil {
		t.Fatal(err)
	}
	// A client built without entity.ClientOptions and without a shared
	// key: its table's name is unknown.
	client, err := aztables.NewClientWithNoCredential(env.TableEndpoint+"nameless",
		&aztables.ClientOptions{ClientOptions: azcore.ClientOptions{PerRetryPolicies: []policy.Policy{meter.Policy()}}})
	if err != nil {
		t.Fatal(err)
	}
	nameless, err := entity.NewTable[person](client)
	if err != nil {
		t.Fatal(err)
	}
	if nameless.Name() != "" {
		t.Fatalf("the nameless table knows its name %q", nameless.Name())
	}
	key := newLocalKey(t, "k", 1)
	newErr := func(tbl *entity.Table[person], cfg crypt.Config) error {
		_, err := crypt.New(tbl, cfg)
		return err
	}
	localKeyErr := func(id string, n int) error {
		_, err := crypt.NewLocalKey(id, make([]byte, n))
		return err
	}

	before := meter.Snapshot()
	cases := []struct {
		name  string
		err   error
		field string
	}{
		{"nil table", newErr(nil, crypt.Config{Key: key, Table: "t"}), "tbl"},
		{"no key", newErr(named, crypt.Config{Table: "t"}), "Config.Key"},
		{"no key, nameless", newErr(nameless, crypt.Config{}), "Config.Key"},
		{"unknown table name", newErr(nameless, crypt.Config{Key: key}), "Config.Table"},
		{"short beacon key", newErr(named, crypt.Config{Key: key, Beacons: []string{"Email"}, BeaconKey: make([]byte, 16)}), "Config.BeaconKey"},
		{"beacon on a clear field", newErr(named, crypt.Config{Key: key, Beacons: []string{"Dept"}, BeaconKey: make([]byte, 32)}), "Config.Beacons"},
		{"beacon name too long", newErr(named, crypt.Config{Key: key, Beacons: []string{strings.Repeat("E", 250)}, BeaconKey: make([]byte, 32),
			Encrypt: func(string, string, string) bool { return true }}), "Config.Beacons"},
		{"a key listed as encryptable", newErr(named, crypt.Config{Key: key, Encrypt: func(string, string, string) bool { return false }, Encryptable: []string{"RowKey"}}), "Config.Encryptable"},
		{"a reserved name listed as encryptable", newErr(named, crypt.Config{Key: key, Encrypt: func(string, string, string) bool { return false }, Encryptable: []string{"_tkX"}}), "Config.Encryptable"},
		{"a beacon Encrypt may not mark", newErr(named, crypt.Config{Key: key, Encrypt: func(string, string, string) bool { return false }, Encryptable: []string{"First"}, Beacons: []string{"Dept"}, BeaconKey: make([]byte, 32)}), "Config.Beacons"},
		{"local key without id", localKeyErr("", 32), "id"},
		{"local key of 31 bytes", localKeyErr("k", 31), "key"},
		{"local key of no bytes", localKeyErr("k", 0), "key"},
	}
	for _, c := range cases {
		var ce *crypt.ConfigError
		if !errors.Is(c.err, crypt.ErrInvalidConfig) || !errors.Is(c.err, entity.ErrInvalid) || !errors.As(c.err, &ce) {
			t.Errorf("%s: %v, want a *crypt.ConfigError matching crypt.ErrInvalidConfig and entity.ErrInvalid", c.name, c.err)
			continue
		}
		msg := c.err.Error()
		if ce.Field != c.field || !strings.HasPrefix(msg, "crypt: invalid "+c.field+": ") || strings.ContainsAny(msg, "\r\n") {
			t.Errorf("%s: field %q, %q; want field %s", c.name, ce.Field, msg, c.field)
		}
	}
	if n := meter.Snapshot().Sub(before).Total(); n != 0 {
		t.Errorf("refused configurations sent %d requests", n)
	}
	// The meter sees both tables' requests.
	_, _ = named.Get(t.Context(), "p", "r")
	_, _ = nameless.Get(t.Context(), "p", "r")
	if n := meter.Snapshot().Sub(before).Total(); n < 2 {
		t.Errorf("two reads counted as %d requests: the meter sees nothing", n)
	}

	// The same tables with a Config that works: the refusals were the
	// Config's.
	if _, err := crypt.New(named, crypt.Config{Key: key, Beacons: []string{"Email"}, BeaconKey: make([]byte, 32)}); err != nil {
		t.Errorf("a valid Config: %v", err)
	}
	if _, err := crypt.New(nameless, crypt.Config{Key: key, Table: "nameless"}); err != nil {
		t.Errorf("a nameless table with Config.Table: %v", err)
	}
	if errors.Is(crypt.ErrNoKey, crypt.ErrInvalidConfig) || errors.Is(&crypt.WriteError{Kind: crypt.ErrMerge}, crypt.ErrInvalidConfig) {
		t.Error("a refused write matches ErrInvalidConfig")
	}
}
