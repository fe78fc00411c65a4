// Command encryption keeps employees whose e-mail and salary the storage
// service only ever sees encrypted, and whose grade is signed: authenticated
// client-side encryption with a content key per entity, wrapped by a
// key-encryption key (design guide §4), package entity/crypt. It shows an
// attacker with write access to the table caught, a filter through a
// beacon, a key rotation that rewrites only the wrapped keys, and a bulk
// load sharing content keys.
//
// It runs on the storage account the environment names, creates the table
// Payroll if it does not exist, and leaves what it wrote there. Its keys are
// drawn at random for the run: a service keeps its key-encryption key in a
// secret store, or in Azure Key Vault (package entity/crypt/keyvault).
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/encryption
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/filter"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Payroll string // table
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Payroll: "Payroll"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "encryption example:", err)
		os.Exit(1)
	}
}

// Employee keeps its e-mail and salary encrypted and its grade signed.
type Employee struct {
	Department string `table:"PartitionKey,pk"`
	ID         string `table:"RowKey,rk"`
	ETag       string `table:",etag"`
	Name       string
	Email      string `table:",encrypt"`
	Salary     int64  `table:",encrypt"`
	Grade      int32  `table:",sign"`
}

// run tells the story on acct, in the resources names gives, to out.
func run(ctx context.Context, acct *account.Account, names Names, out io.Writer) error {
	tables, err := acct.TableService()
	if err != nil {
		return err
	}
	tbl, err := entity.NewTableFromService[Employee](tables, names.Payroll)
	if err != nil {
		return err
	}
	if err := tbl.Provision(ctx); err != nil { // the table, unless it exists
		return err
	}
	// client is the table without encryption: what the service stores.
	client := tbl.Client()
	fmt.Fprintln(out, "== crypt: client-side encryption, authenticated, per-entity keys (design guide §4)")

	// The key-encryption key would come from a secret store, or stay in
	// Azure Key Vault (package crypt/keyvault).
	kek1, err := newKey("employees-2026-01")
	if err != nil {
		return err
	}
	cfg := crypt.Config{
		Key:       kek1,
		Table:     "Payroll", // bound into every ciphertext: the logical name, kept if the table moves
		Beacons:   []string{"Email"},
		BeaconKey: bytes.Repeat([]byte{0x5e}, 32),
	}
	emps, err := crypt.New(tbl, cfg)
	if err != nil {
		return err
	}

	// 1. Write two employees: one request each, as without encryption.
	staff := []Employee{
		{Department: "Sales", ID: "000123", Name: "Jonathan Jones", Email: "jonesj@contoso.com", Salary: 72500, Grade: 7},
		{Department: "Sales", ID: "000124", Name: "Ann Lee", Email: "leea@contoso.com", Salary: 91000, Grade: 9},
	}
	for i := range staff {
		if err := emps.Insert(ctx, &staff[i]); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "1. Inserted two employees. What the service stores for 000123:")
	stored, err := client.GetEntity(ctx, "Sales", "000123", nil)
	if err != nil {
		return err
	}
	if err := describe(out, stored.Value); err != nil {
		return err
	}
	e, err := emps.Get(ctx, "Sales", "000123")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   Read back through crypt: %s <%s>, salary %d, grade %d\n", e.Name, e.Email, e.Salary, e.Grade)

	// 2. Someone with write access to the table, but no key, copies Ann's
	//    salary ciphertext into Jonathan's entity, then raises a grade.
	fmt.Fprintln(out, "2. An attacker with write access but no key:")
	ann, _ := client.GetEntity(ctx, "Sales", "000124", nil)
	var annProps map[string]any
	_ = json.Unmarshal(ann.Value, &annProps)
	if err := mergeRaw(ctx, client, "000123", map[string]any{"Salary@odata.type": "Edm.Binary", "Salary": annProps["Salary"]}); err != nil {
		return err
	}
	_, err = emps.Get(ctx, "Sales", "000123")
	fmt.Fprintf(out, "   copied Ann's salary into Jonathan's entity: ErrTampered=%v\n", errors.Is(err, crypt.ErrTampered))
	if err := mergeRaw(ctx, client, "000124", map[string]any{"Grade": 10}); err != nil {
		return err
	}
	_, err = emps.Get(ctx, "Sales", "000124")
	fmt.Fprintf(out, "   raised Ann's signed grade: ErrTampered=%v\n", errors.Is(err, crypt.ErrTampered))
	// Restore both from the application's own copy.
	for i := range staff {
		if err := emps.UpdateAny(ctx, &staff[i], entity.Replace); err != nil {
			return err
		}
	}

	// 3. Filters: encrypted values are ciphertext on the service.
	fmt.Fprintln(out, "3. Filters on encrypted properties:")
	byEmail := filter.PK("Sales").And(filter.Eq("Email", "leea@contoso.com"))
	for found, err := range emps.Query(ctx, entity.Query{Filter: byEmail}) {
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "   Email eq 'leea@contoso.com' through its beacon: %s\n", found.Name)
	}
	for _, err := range emps.Query(ctx, entity.Query{Filter: filter.PK("Sales").And(filter.Ge("Salary", int64(80000)))}) {
		fmt.Fprintf(out, "   Salary ge 80000: refused, ErrEncryptedFilter=%v\n", errors.Is(err, crypt.ErrEncryptedFilter))
	}
	err = emps.Update(ctx, &staff[0], entity.Merge)
	fmt.Fprintf(out, "   and a Merge: refused, ErrMerge=%v\n", errors.Is(err, crypt.ErrMerge))

	// 4. Rotate the key-encryption key: readers hold both keys meanwhile.
	kek2, err := newKey("employees-2026-07")
	if err != nil {
		return err
	}
	cfg.Key = crypt.Keyring(kek2, kek1)
	rotating, err := crypt.New(tbl, cfg)
	if err != nil {
		return err
	}
	res, err := rotating.Rotate(ctx, crypt.RotateOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "4. Rotated the key: %d entities rewrapped, %d already current, data untouched\n", res.Rewrapped, res.Current)
	cfg.Key = kek2
	after, err := crypt.New(tbl, cfg)
	if err != nil {
		return err
	}
	var staffNames []string
	for e, err := range after.Query(ctx, entity.Query{Filter: filter.PK("Sales")}) {
		if err != nil {
			return err
		}
		staffNames = append(staffNames, e.Name)
	}
	slices.Sort(staffNames)
	fmt.Fprintf(out, "   read with the new key alone: %v\n", staffNames)

	// 5. A bulk load: with Key Vault every content key is a vault call.
	//    ContentKeyWrites shares one content key among n writes.
	fmt.Fprintln(out, "5. Loading 200 employees (BulkWrite), counting key wraps:")
	for _, n := range []int{0, 100} {
		counted := &countingKey{KeyWrapper: kek2}
		cfg.Key, cfg.ContentKeyWrites = counted, n
		loader, err := crypt.New(tbl, cfg)
		if err != nil {
			return err
		}
		batch := make([]Employee, 200)
		for i := range batch {
			batch[i] = Employee{Department: fmt.Sprintf("Load%d", n), ID: fmt.Sprintf("%06d", i), Name: "Employee", Email: fmt.Sprintf("e%d@contoso.com", i), Salary: 50000, Grade: 5}
		}
		if _, err := loader.BulkWrite(ctx, batch, entity.BulkOptions{}); err != nil {
			return err
		}
		fmt.Fprintf(out, "   ContentKeyWrites %3d: %3d wraps\n", n, counted.wraps.Load())
	}
	return nil
}

// countingKey counts the wraps of a key-encryption key: with package
// keyvault, each is a call to the vault.
type countingKey struct {
	crypt.KeyWrapper
	wraps atomic.Int64
}

func (k *countingKey) Wrap(ctx context.Context, cek []byte) (string, string, []byte, error) {
	k.wraps.Add(1)
	return k.KeyWrapper.Wrap(ctx, cek)
}

func newKey(id string) (*crypt.LocalKey, error) {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	return crypt.NewLocalKey(id, k)
}

// describe prints a stored body's properties: the clear ones with their
// values, the binary ones with their sizes.
func describe(out io.Writer, body []byte) error {
	var props map[string]any
	if err := json.Unmarshal(body, &props); err != nil {
		return err
	}
	for _, name := range []string{"Name", "Email", "Salary", "Grade", crypt.MetadataProperty, crypt.BeaconPrefix + "Email"} {
		v := props[name]
		if props[name+"@odata.type"] == "Edm.Binary" {
			b, _ := base64.StdEncoding.DecodeString(v.(string))
			fmt.Fprintf(out, "   %-12s Edm.Binary, %d bytes\n", name, len(b))
			continue
		}
		fmt.Fprintf(out, "   %-12s %v\n", name, v)
	}
	fmt.Fprintf(out, "   the e-mail appears in clear: %v\n", bytes.Contains(body, []byte("jonesj")))
	return nil
}

// mergeRaw changes stored properties directly, as anyone with write access
// to the table could.
func mergeRaw(ctx context.Context, client *aztables.Client, rk string, props map[string]any) error {
	props["PartitionKey"], props["RowKey"] = "Sales", rk
	b, err := json.Marshal(props)
	if err != nil {
		return err
	}
	_, err = client.UpdateEntity(ctx, b, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
	return err
}
