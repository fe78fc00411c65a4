package crypt_test

import (
	"strings"
	"testing"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
)

var _ account.Provisioner = (*crypt.Table[device])(nil)

// An encrypted table provisions through account.Provision beside the
// others, twice without harm, and the table it made takes an encrypted
// entity that a raw read shows as ciphertext.
func TestProvision(t *testing.T) {
	name := env.TableName(t)
	tbl, err := entity.NewTableFromService[device](env.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := crypt.New(tbl, crypt.Config{Key: newLocalKey(t, "kek-1", 1)})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := account.Provision(t.Context(), ct); err != nil {
			t.Fatal(err)
		}
	}
	if err := ct.Insert(t.Context(), &device{PartitionKey: "p", RowKey: "r", APIKey: "4111-provision"}); err != nil {
		t.Fatal(err)
	}
	raw, err := env.TableService.NewClient(name).GetEntity(t.Context(), "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(raw.Value); len(got) == 0 || strings.Contains(got, "4111-provision") {
		t.Fatalf("the stored entity is empty or holds the plaintext: %s", got)
	}
}
