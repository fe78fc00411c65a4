// Package tour is the shared access signature step of tablekit's tour
// (design guide §7): a server that holds the account key gives each user a
// URL for their own partition, and the user's client works with typed
// entities through it and can do nothing else.
package tour

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/entity/sas"
	"github.com/tablekit/tablekit/examples/demo"
)

// Order is one customer's order; each customer has a partition.
type Order struct {
	Customer string `table:"PartitionKey,pk"`
	ID       string `table:"RowKey,rk"`
	ETag     string `table:",etag"`
	Item     string
	Total    float64
}

// Tour creates its own table, runs the story against it, printing what
// happens to out, and deletes the table.
func Tour(ctx context.Context, env *demo.Env, out io.Writer) (err error) {
	fmt.Fprintln(out, "== sas: a token for one user's partition (design guide §7)")
	if env.ConnectionString == "" {
		fmt.Fprintln(out, "The account is used with a Microsoft Entra credential: there is no account key to sign tokens with.")
		return nil
	}
	name := "sastour" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := env.TableService.CreateTable(ctx, name, nil); err != nil {
		return err
	}
	defer func() {
		if _, derr := env.TableService.DeleteTable(context.WithoutCancel(ctx), name, nil); derr != nil {
			err = errors.Join(err, derr)
		} else {
			fmt.Fprintln(out, "Deleted the table.")
		}
	}()
	owner, err := entity.NewTableFromService[Order](env.TableService, name)
	if err != nil {
		return err
	}
	if err := owner.Insert(ctx, &Order{Customer: "bob", ID: "000001", Item: "lamp", Total: 30}); err != nil {
		return err
	}

	// 1. The server, which holds the account key, signs a URL for alice's
	//    partition: every signed field travels in the URL, the range too.
	iss, err := sas.NewIssuerFromConnectionString(env.ConnectionString, sas.Config{TTL: 15 * time.Minute})
	if err != nil {
		return err
	}
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
	alice, err := sas.OpenTable[Order](aliceURL, env.ClientOptions())
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
	bob, err := sas.OpenTable[Order](bobURL, env.ClientOptions())
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
	forged, err := sas.OpenTable[Order](moved, env.ClientOptions())
	if err != nil {
		return err
	}
	_, err = forged.Get(ctx, "bob", "000001")
	fmt.Fprintf(out, "alice's URL edited to name bob's partition: %s.\n", refusal(err))

	// 5. aztables v1.4.1 signs the range but leaves it out of its URL.
	if !env.Live {
		if err := aztablesTrap(ctx, env, name, out); err != nil {
			return err
		}
	}

	// 6. Expiry.
	expiredURL, err := iss.TableURL(sas.TableSAS{Table: name, Permissions: sas.Read, Range: sas.Partition("alice"),
		Start: time.Now().Add(-2 * time.Hour), Expiry: time.Now().Add(-time.Hour)})
	if err != nil {
		return err
	}
	expired, err := sas.OpenTable[Order](expiredURL, env.ClientOptions())
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
	case env.Live:
		return errors.New("the service let alice's token read outside its key range")
	default:
		fmt.Fprintln(out, "alice's token reading bob's order: allowed by Azurite, which does not enforce key ranges; a real account answers 403.")
	}
	return nil
}

// aztablesTrap shows aztables' token for alice's range refused, and the
// same token accepted once the range it signed is added to its URL.
func aztablesTrap(ctx context.Context, env *demo.Env, name string, out io.Writer) error {
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
		tbl, err := sas.OpenTable[Order](env.TableEndpoint+name+"?"+c.query, env.ClientOptions())
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
