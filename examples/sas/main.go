// Command sas shows a server that holds the account key giving each
// signed-in customer a URL that reaches only their own partition of the
// CustomerOrders table, for 15 minutes, and the customer's client working with
// typed orders through it and nothing else: the design guide's shared
// access signatures (§7), package entity/sas.
//
// Signing needs the account key, so it runs on the account of a connection
// string with one (UseDevelopmentStorage=true is Azurite's), creates the
// table CustomerOrders if it does not exist, and leaves what it wrote there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/sas
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/entity/sas"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Orders string // table
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := connectAndRun(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sas example:", err)
		os.Exit(1)
	}
}

// connectAndRun builds the account and the token issuer from
// TABLEKIT_CONNECTION_STRING: the issuer signs with its account key.
func connectAndRun(ctx context.Context) error {
	cs := os.Getenv("TABLEKIT_CONNECTION_STRING")
	if cs == "" {
		return errors.New("set TABLEKIT_CONNECTION_STRING to a connection string with the account key (UseDevelopmentStorage=true for Azurite)")
	}
	acct, err := account.NewFromConnectionString(cs, nil)
	if err != nil {
		return err
	}
	iss, err := sas.NewIssuerFromConnectionString(cs, sas.Config{TTL: 15 * time.Minute})
	if err != nil {
		return err
	}
	return run(ctx, acct, iss, Names{Orders: "CustomerOrders"}, os.Stdout)
}

// Order is one customer's order; each customer has a partition.
type Order struct {
	Customer string `table:"PartitionKey,pk"`
	ID       string `table:"RowKey,rk"`
	ETag     string `table:",etag"`
	Item     string
	Total    float64
}

// run tells the story on acct, in the resources names gives, to out; iss
// signs tokens with acct's key and a TTL of 15 minutes.
func run(ctx context.Context, acct *account.Account, iss *sas.Issuer, names Names, out io.Writer) error {
	tables, err := acct.TableService()
	if err != nil {
		return err
	}
	owner, err := entity.NewTableFromService[Order](tables, names.Orders)
	if err != nil {
		return err
	}
	if err := owner.Provision(ctx); err != nil { // the table, unless it exists
		return err
	}
	name := names.Orders
	// Clients built from a SAS URL get the account's options (retries,
	// lost-reply settling, meter) this way.
	opts := &aztables.ClientOptions{ClientOptions: acct.ClientOptions()}
	// Azurite's development account does not enforce everything a real one
	// does, such as a token's key range.
	live := acct.Name() != account.DevelopmentAccountName
	fmt.Fprintln(out, "== sas: a token for one customer's partition (design guide §7)")
	if err := owner.Upsert(ctx, &Order{Customer: "bob", ID: "000001", Item: "lamp", Total: 30}, entity.Replace); err != nil {
		return err
	}

	// 1. The server, which holds the account key, signs a URL for alice's
	//    partition: every signed field travels in the URL, the range too.
	aliceURL, err := iss.Grant(name, sas.Partition("alice"), sas.ReadWrite)
	if err != nil {
		return err
	}
	tok, err := sas.Parse(aliceURL[strings.IndexByte(aliceURL, '?')+1:])
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "The server grants alice her partition: sp=%s, range %s, expires in 15 minutes.\n", tok.Permissions, tok.Range)

	// 2. Alice's client holds only the URL and works with typed orders.
	alice, err := sas.OpenTable[Order](aliceURL, opts)
	if err != nil {
		return err
	}
	for _, o := range []Order{{Customer: "alice", ID: "000001", Item: "book", Total: 12.5}, {Customer: "alice", ID: "000002", Item: "pen", Total: 2}} {
		if err := alice.Insert(ctx, &o); err != nil {
			return err
		}
	}
	o, err := alice.Get(ctx, "alice", "000001")
	if err != nil {
		return err
	}
	o.Total = 11
	if err := alice.Update(ctx, &o, entity.Merge); err != nil {
		return err
	}
	var items []string
	for o, err := range alice.Query(ctx, entity.Query{Filter: filter.PK("alice")}) {
		if err != nil {
			return err
		}
		items = append(items, fmt.Sprintf("%s %s %.2f", o.ID, o.Item, o.Total))
	}
	fmt.Fprintf(out, "With her token alice inserted, updated and listed her orders: %s.\n", strings.Join(items, "; "))

	// 3. Permissions: a read-only token for bob reads but cannot write.
	bobURL, err := iss.Grant(name, sas.Partition("bob"), sas.Read)
	if err != nil {
		return err
	}
	bob, err := sas.OpenTable[Order](bobURL, opts)
	if err != nil {
		return err
	}
	if _, err := bob.Get(ctx, "bob", "000001"); err != nil {
		return err
	}
	err = bob.Insert(ctx, &Order{Customer: "bob", ID: "000002", Item: "rug"})
	fmt.Fprintf(out, "bob's read-only token reads his order; an insert is refused: %s.\n", refusal(err))

	// 4. The range is signed: moving it to bob's partition breaks the token.
	moved := strings.NewReplacer("spk=alice", "spk=bob", "epk=alice", "epk=bob").Replace(aliceURL)
	forged, err := sas.OpenTable[Order](moved, opts)
	if err != nil {
		return err
	}
	_, err = forged.Get(ctx, "bob", "000001")
	fmt.Fprintf(out, "alice's URL edited to name bob's partition: %s.\n", refusal(err))

	// 5. aztables v1.4.1 signs the range but leaves it out of its URL.
	if !live {
		if err := aztablesTrap(ctx, acct.Endpoints().Table, name, opts, out); err != nil {
			return err
		}
	}

	// 6. Expiry.
	expiredURL, err := iss.TableURL(sas.TableSAS{Table: name, Permissions: sas.Read, Range: sas.Partition("alice"),
		Start: time.Now().Add(-2 * time.Hour), Expiry: time.Now().Add(-time.Hour)})
	if err != nil {
		return err
	}
	expired, err := sas.OpenTable[Order](expiredURL, opts)
	if err != nil {
		return err
	}
	_, err = expired.Get(ctx, "alice", "000001")
	fmt.Fprintf(out, "A token that expired an hour ago: %s.\n", refusal(err))

	// 7. Outside the range: what only a real account enforces.
	_, err = alice.Get(ctx, "bob", "000001")
	switch {
	case err != nil:
		fmt.Fprintf(out, "alice's token reading bob's order: %s.\n", refusal(err))
	case live:
		return errors.New("the service let alice's token read outside its key range")
	default:
		fmt.Fprintln(out, "alice's token reading bob's order: allowed by Azurite, which does not enforce key ranges; a real account answers 403.")
	}
	return nil
}

// aztablesTrap shows aztables' token for alice's range refused, and the
// same token accepted once the range it signed is added to its URL.
func aztablesTrap(ctx context.Context, endpoint, name string, opts *aztables.ClientOptions, out io.Writer) error {
	cred, err := aztables.NewSharedKeyCredential(account.DevelopmentAccountName, account.DevelopmentAccountKey)
	if err != nil {
		return err
	}
	qs, err := aztables.SASSignatureValues{TableName: name, Permissions: "r", ExpiryTime: time.Now().Add(time.Hour).UTC(),
		StartPartitionKey: "alice", EndPartitionKey: "alice"}.Sign(cred)
	if err != nil {
		return err
	}
	for _, c := range []struct{ what, query string }{
		{"aztables' own token for alice's range", qs},
		{"The same token with spk and epk added", qs + "&spk=alice&epk=alice"},
	} {
		tbl, err := sas.OpenTable[Order](endpoint+name+"?"+c.query, opts)
		if err != nil {
			return err
		}
		_, err = tbl.Get(ctx, "alice", "000001")
		result := "works"
		if err != nil {
			result = refusal(err)
		}
		fmt.Fprintf(out, "%s: %s.\n", c.what, result)
	}
	return nil
}

// refusal describes the service's answer to a request a token does not
// allow.
func refusal(err error) string {
	var se *entity.ServiceError
	if errors.As(err, &se) {
		return fmt.Sprintf("refused, %d %s", se.StatusCode, se.Code)
	}
	if err == nil {
		return "allowed"
	}
	return "failed: " + err.Error()
}
