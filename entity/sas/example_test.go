package sas_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/sas"
)

// The examples run against the test environment (a private Azurite started
// by TestMain), whose connection string carries the account key.

// A server that holds the account key gives a signed-in user a URL for
// their own partition; the user's client opens it and works with typed
// entities, and can do nothing its token does not allow.
func ExampleIssuer_Grant() {
	ctx := context.Background()
	name := "orders" + strconv.FormatInt(time.Now().UnixNano(), 36) // unique: a deleted name is not reusable at once
	_, _ = env.TableService.CreateTable(ctx, name, nil)
	defer env.TableService.DeleteTable(ctx, name, nil)

	// On the server.
	iss, err := sas.NewIssuerFromConnectionString(env.ConnectionString, sas.Config{TTL: 15 * time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	u, err := iss.Grant(name, sas.Partition("alice"), sas.Read|sas.Add)
	if err != nil {
		fmt.Println(err)
		return
	}
	q, _ := url.ParseQuery(u[strings.IndexByte(u, '?')+1:])
	fmt.Println("sp:", q.Get("sp"), "spk:", q.Get("spk"), "epk:", q.Get("epk"))

	// In alice's client, which holds only the URL.
	orders, err := sas.OpenTable[Order](u, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = orders.Insert(ctx, &Order{Customer: "alice", ID: "000001", Total: 12.5})
	fmt.Println("insert:", err)
	o, err := orders.Get(ctx, "alice", "000001")
	fmt.Println("get:", o.Total, err)
	o.Total = 99
	err = orders.Update(ctx, &o, entity.Merge)
	var se *entity.ServiceError
	fmt.Println("update refused:", errors.As(err, &se) && se.StatusCode == 403)
	// Output:
	// sp: ra spk: alice epk: alice
	// insert: <nil>
	// get: 12.5 <nil>
	// update refused: true
}

// Parse reads any SAS, here one made by the JavaScript SDK, to see what it
// grants.
func ExampleParse() {
	tok, err := sas.Parse("sv=2019-02-02&st=2025-12-31T23%3A59%3A59Z&se=2026-01-01T00%3A59%3A59Z&sp=ru&sig=JuSnAYLLx7ekG0B7mHAyBIm1zqdRQmIH3lKdgsotgdw%3D&tn=Tenants&srk=user42%20&spk=contoso&epk=contoso&erk=user42%20%EF%BF%BF")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tok)
	fmt.Println(tok.Range.Contains("contoso", "user42 invoice7"), tok.Range.Contains("contoso", "user43 invoice1"))
	// Output:
	// table SAS for table "Tenants" sp=ru range [spk="contoso" srk="user42 " epk="contoso" erk="user42 \uffff"] st=2025-12-31T23:59:59Z se=2026-01-01T00:59:59Z
	// true false
}
