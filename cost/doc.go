// Package cost meters what a program costs in storage transactions, the unit
// Azure Storage bills besides capacity (the design guide's [cost considerations], §1: "cost: storage
// capacity plus the number of transactions; one EGT counts as one").
//
// A [Meter] is an azcore pipeline policy. Put it in the PerRetryPolicies of
// the table, queue and blob clients whose traffic it should count, and every
// request that reaches the wire is counted once per try, by service and by
// operation kind — a retried request is billed again, and so is a failed one,
// as the service bills them:
//
//	m := cost.NewMeter()
//	opts := &aztables.ClientOptions{}
//	opts.PerRetryPolicies = append(opts.PerRetryPolicies, m.Policy())
//	svc, _ := aztables.NewServiceClientFromConnectionString(cs, opts)
//
//	before := m.Snapshot()
//	// … one logical operation …
//	used := m.Snapshot().Sub(before)
//	fmt.Println(used.Total(), used.Of(cost.Table), used.Count(cost.Table, cost.OpBatch))
//
// The meter is why tablekit's pattern benchmarks can report storage
// transactions per logical operation (`storage-tx/op`): unlike timings,
// these counts are the same on a laptop, in CI and on a real account.
//
// It lives in a package of its own, beside entity rather than in it, because
// it counts queue and blob traffic as well as table traffic, and because it
// is as useful in production (attach it to a service's clients and export the
// counts) as in benchmarks.
//
// [cost considerations]: https://learn.microsoft.com/azure/storage/tables/table-storage-design#cost-considerations
package cost
