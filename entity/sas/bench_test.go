package sas_test

import (
	"context"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/sas"
	"github.com/tablekit/tablekit/integration"
)

// BenchmarkSign compares signing a range-limited table SAS here
// (/tablekit) with aztables' SASSignatureValues (/raw), which signs the same
// string but leaves the range out of its URL.
func BenchmarkSign(b *testing.B) {
	k, err := sas.NewKey(integration.AzuriteAccountName, integration.AzuriteAccountKey)
	if err != nil {
		b.Fatal(err)
	}
	cred, err := aztables.NewSharedKeyCredential(integration.AzuriteAccountName, integration.AzuriteAccountKey)
	if err != nil {
		b.Fatal(err)
	}
	exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	b.Run("tablekit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tok, err := k.SignTable(sas.TableSAS{Table: "Orders", Permissions: sas.ReadWrite, Expiry: exp, Range: sas.Rows("contoso", "user42 ", "user42 \uffff")})
			if err != nil {
				b.Fatal(err)
			}
			_ = tok.Query()
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := (aztables.SASSignatureValues{TableName: "Orders", Permissions: "raud", ExpiryTime: exp,
				StartPartitionKey: "contoso", StartRowKey: "user42 ", EndPartitionKey: "contoso", EndRowKey: "user42 \uffff"}).Sign(cred); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPointRead compares a point read through a table opened from a
// SAS URL (/tablekit) with the same read through the account key
// (/raw: aztables' shared-key client, which signs every request's headers),
// on the test service. Both cost one storage transaction.
func BenchmarkPointRead(b *testing.B) {
	if env.ConnectionString == "" {
		b.Log("the account is used with a Microsoft Entra credential: no account key to sign tokens with")
		return
	}
	ctx := context.Background()
	name := env.TableName(b)
	if _, err := env.TableService.CreateTable(ctx, name, nil); err != nil {
		b.Fatal(err)
	}
	iss, err := sas.NewIssuerFromConnectionString(env.ConnectionString, sas.Config{})
	if err != nil {
		b.Fatal(err)
	}
	u, err := iss.Grant(name, sas.Partition("alice"), sas.Read|sas.Add)
	if err != nil {
		b.Fatal(err)
	}
	m := cost.NewMeter()
	opts := env.ClientOptions()
	opts.PerRetryPolicies = append(opts.PerRetryPolicies, m.Policy())
	viaSAS, err := sas.OpenTable[Order](u, opts)
	if err != nil {
		b.Fatal(err)
	}
	if err := viaSAS.Insert(ctx, &Order{Customer: "alice", ID: "1", Total: 1}); err != nil {
		b.Fatal(err)
	}
	svc, err := aztables.NewServiceClientFromConnectionString(env.ConnectionString, opts)
	if err != nil {
		b.Fatal(err)
	}
	viaKey, err := entity.NewTableFromService[Order](svc, name)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		tbl  *entity.Table[Order]
	}{{"tablekit", viaSAS}, {"raw", viaKey}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			before := m.Snapshot()
			for b.Loop() {
				if _, err := c.tbl.Get(ctx, "alice", "1"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(m.Snapshot().Sub(before).Total())/float64(b.N), "storage-tx/op")
		})
	}
}
