// Package account builds, for a production program, the table, queue and blob
// clients that tablekit's packages take, from what a deployment is given: a
// connection string, an account URL and a Microsoft Entra credential, or a SAS
// URL. Every client it builds carries tablekit's pipeline policies, so that a
// write whose reply was lost is settled instead of misreported (see
// entity.ClientOptions), the caller's azcore.ClientOptions (retries, logging,
// tracing, transport, policies of its own) and, when asked, the storage-cost
// meter of package cost.
//
//	acct, err := account.NewFromConnectionString(os.Getenv("AZURE_STORAGE_CONNECTION_STRING"), nil)
//	if err != nil {
//		return err // a *ConfigError naming the setting, before any request
//	}
//	tables, err := acct.TableService()
//	if err != nil {
//		return err // an *EndpointError: the account has no table endpoint
//	}
//	orders, err := entity.NewTableFromService[Order](tables, "Orders")
//	queues, err := acct.QueueService() // eventual.QueuesOf(queues, "orders")
//	photos, err := acct.Container("photos") // *container.Client for large, bloblog
//	err = account.Provision(ctx, orders, processor, emps) // create what is missing, once at start
//
// # Sources
//
// [FromEnvironment] builds the account tablekit's example programs use:
// TABLEKIT_CONNECTION_STRING, or else TABLEKIT_ACCOUNT_URL with
// azidentity's default credential (TestFromEnvironment).
//
// [NewFromConnectionString] reads the storage connection strings the portal,
// the Azure CLI and Azurite give: AccountName and AccountKey (with
// DefaultEndpointsProtocol and EndpointSuffix, or explicit TableEndpoint,
// QueueEndpoint and BlobEndpoint), SharedAccessSignature with AccountName or
// explicit endpoints, and "UseDevelopmentStorage=true" (with an optional
// DevelopmentStorageProxyUri), which the Go SDKs refuse and which stands for
// Azurite's well-known account on its default ports 10000 (blob), 10001 (queue)
// and 10002 (table). When both AccountKey and SharedAccessSignature are set,
// the key is used.
//
// # What a connection string may choose
//
// A connection string sends requests to the hosts it names and no other
// (TestConnectionStringChoosesNoHost, and FuzzNewFromConnectionString,
// which checks that every endpoint of an accepted string, and the requests
// of its clients, have the host an independent reading of the string
// gives):
//
//   - Settings are Key=Value separated by ';', keys in any case, each at
//     most once, each one the Azure SDKs define: a misspelt or unknown
//     setting (TablesEndpoint, a Service Bus string's SharedAccessKey, a key
//     pasted without "AccountKey=") is refused. FileEndpoint and the
//     secondary endpoints are checked as endpoints and not used.
//   - A service without an explicit endpoint gets
//     DefaultEndpointsProtocol://AccountName.SERVICE.EndpointSuffix/ only
//     when AccountName follows the service's rule (3 to 24 lower-case
//     letters and digits; devstoreaccount1 does) and EndpointSuffix is a DNS
//     suffix (labels of letters, digits and hyphens; no scheme, slash, port
//     or query). AccountName=evil.example/x, a name with '?' or a space,
//     EndpointSuffix=core.windows.net/evil are refused.
//   - Any other AccountName, such as an Azurite custom account's
//     (AZURITE_ACCOUNTS), is accepted with explicit endpoints if it has 1
//     to 63 ASCII letters, digits, '-', '_' and '.' (it signs requests):
//     the services without an explicit endpoint then have none, and asking
//     for one is an *EndpointError saying so (TestEmulatorProxyAndCustomAccount).
//   - An explicit endpoint is an absolute http(s) URL: a DNS name, an IPv4
//     address or a bracketed IPv6 address without a zone; a port, if any,
//     from 1 to 65535; a path, if any, of plain segments (letters, digits,
//     '-', '.', '_', '~'; not "." or ".."; no percent-escapes), such as
//     Azurite's /devstoreaccount1; no user, fragment or query. A query is
//     refused, not split into a SAS: a SAS goes in SharedAccessSignature,
//     which then applies to every endpoint. http://, http://[::1,
//     http://host:badport/, https://host/?sv=…&sig=… are refused.
//   - A SharedAccessSignature is a query string with a signature (sig),
//     without spaces, control characters or '#'.
//   - UseDevelopmentStorage=true takes no other setting than
//     DevelopmentStorageProxyUri, an http(s) URL naming a host only: its
//     endpoints are the proxy's scheme and host on the emulator's ports
//     10000 to 10002 with the path /devstoreaccount1/, as the Azure SDKs
//     build them; a proxy URI with a port, path or query is refused (the
//     SDKs would drop the port silently; for other ports, give explicit
//     endpoints).
//
// [New] takes the URL of any one of the account's services,
// https://NAME.table.core.windows.net/ (or .queue., .blob., in any cloud's
// suffix), derives the other two, and authorizes every request with a
// token credential such as azidentity.NewDefaultAzureCredential's. A Cosmos DB
// for Table endpoint (https://NAME.table.cosmos.azure.com/) gives a table
// service only.
//
// [NewFromSASURL] takes a service URL that carries an account SAS
// (https://NAME.blob.core.windows.net/?sv=…&ss=bqt&…&sig=…) and uses the same
// token for the three services; which of them it may reach is the token's
// business (its ss field), checked by the service.
//
// Azurite's endpoints (http://127.0.0.1:10002/devstoreaccount1) name no
// service in their host, so their three endpoints cannot be derived from one:
// reach Azurite with a connection string (UseDevelopmentStorage=true, or
// explicit endpoints with AccountKey or SharedAccessSignature).
//
// # Guarantees
//
// Every table client the Account hands out carries tablekit's two pipeline
// policies: an insert whose reply was lost, which azcore resends and the
// service answers 409, is reported as done (TestLostReplySettled loses the
// reply and shows aztables' own client reporting the 409). The caller's
// options reach every client, on a copy (TestOptions), and the Meter
// counts every request of every client of the Account it was given to and
// none of another (TestMeter). Each source reaches the URLs and sends the
// authorization it names (TestDevelopmentStorage, TestConnectionStringForms,
// TestNewWithTokenCredential, TestNewFromSASURL; on Azurite:
// TestConnectionString, TestSASConnectionString, TestSASURL).
//
// # Provisioning
//
// Every tablekit type that owns storage creates it with a Provision(ctx)
// method — *entity.Table[T], *resolver.Table, *eventual.Processor (its
// queues, poison queues and claim-check container) and the patterns' types
// (large: table, container and its processor's queues; denormalize: both
// tables and its processor's; rotation: its catalog; bloblog: its
// container; logtail, dataseries, wide, compound, bucket: their table) —
// and [QueueProvisioner] and [ContainerProvisioner] give one to a raw
// client. [Provision] runs several at once (at most four in flight), so
// that a program's main provisions everything in one line:
//
//	if err := account.Provision(ctx, orders, processor, emps, account.ContainerProvisioner(archive)); err != nil {
//		return err // one *ProvisionError per Provisioner that failed, joined
//	}
//
// Types that only read or borrow storage others own have none: an
// eventual.Outbox keeps its intents in the caller's table, a lookup.Cache
// reads a table, a bloblog.Reader reads its Loggers' container, and
// backup's functions write to a blob in a container the caller
// provisions (ContainerProvisioner).
//
// Guarantees: Provision returns nil only when every resource exists,
// and provisioning again finds them and changes nothing they hold: when
// the reply to a create is lost and azcore's resend meets what the first
// try made (409 TableAlreadyExists, ContainerAlreadyExists, or a queue's
// 204), it is counted as done (TestProvisionEveryPattern loses the first
// reply of the create of each of 22 tables, queues and containers of 14
// Provisioners, then reads each with raw clients, and provisions again).
// A name the service is still deleting (409 TableBeingDeleted,
// QueueBeingDeleted, ContainerBeingDeleted, for about 40 seconds after a
// delete on Azure Storage; integration/faults.Deleting answers so on
// Azurite) is asked for again, with waits from 0.2 s doubling up to 5 s,
// until it is created or ctx ends; then the error matches
// [ErrBeingDeleted] and ctx's error, and nothing was created
// (TestProvisionWhileBeingDeleted, and entity's for tables). A failure of
// one Provisioner does not stop the others (TestProvisionJoinsFailures).
// A nil entry is a *ConfigError matching ErrInvalid before any request
// (TestProvisionBadInput).
//
// # Throttling
//
// Options.Limiter puts one throttle.Limiter in every client the Account
// builds (table, queue and blob), and in the accounts WithOptions derives
// from it: every request of every tablekit package through those clients
// waits for its turn on one schedule for the account — its table, queue
// and blob endpoints together, as the service's 20,000 requests/s target
// is the account's (TestOneAccountKeyPerAccount in package throttle) —
// and one per table + PartitionKey. The pattern packages' fan-outs send through these
// clients: their tests under a shared Limiter are listed in package
// throttle's documentation. TestLimiterPacesAccountClients writes 4,000 entities with
// BulkWrite through the Account's table client against a Simulator
// (Options.Simulator, for tests) of 200 entities/s per partition: with the
// Limiter every entity is written and under 1% of requests are throttled,
// and the Limiter paced every try the Simulator saw, the queue's and the
// blob's included; without it, more are. The Limiter is in-process: as
// package throttle says, processes sharing an account each learn their
// share of a partition's or the account's limit from the throttles they
// meet (with the default Config), the one with the larger share, throttled
// more often, giving share to the others — in most runs within 25% of
// an even share for processes of many small requests, unevenly for a few large
// transactions; give each process a configured share (Config rates
// divided by their number) when fairness between them matters more than
// using the limit.
//
// # Failures
//
// Bad input is refused by the constructor, before any request and without a
// panic: a malformed connection string, URL, key or name is a *[ConfigError]
// (matching [ErrInvalid] and entity.ErrInvalid) naming the setting and what
// is wrong with it. New and NewFromSASURL check the URL's host as a
// connection string's: a storage account name (or a Cosmos DB one: 3 to 44
// lower-case letters, digits and hyphens), a DNS suffix, a port from 1 to
// 65535 (TestServiceURLHosts). Asking for the client of a service the account
// was given no endpoint for is an *[EndpointError] (matching [ErrNoEndpoint])
// naming the service and the setting that would give it. Nothing is checked
// against the service: the first request shows a wrong key or an unreachable
// host. TestBadInput goes through each refusal; FuzzNewFromConnectionString
// (seeded with internal/connstr's committed corpus and this package's
// testdata/fuzz) and FuzzAccountURL check that no input panics or gets
// another kind of error.
//
// No error repeats an account key, a signature or a password: a URL is
// shown without its query and user information, a value longer than any
// name or suffix only by its length (a key pasted into the wrong setting,
// or alone: a base64 key ends in "=", so it reads as a setting named by
// it), and a setting that is not key=value only by its position. Each
// error of a connection string that cannot be read matches
// entity.ErrInvalidConnectionString; a setting given with no value is
// refused (an empty TableEndpoint would leave the endpoint derived, to a
// host the string did not name). TestNoSecretInErrors in internal/secretscan feeds about forty
// malformed connection strings and twenty-odd SAS URLs through every
// constructor of the module that takes a credential and scans each error's
// Error(), %+v and %#v (and those of every error it wraps) for the key,
// the signature and the password, any 8 characters of them in a row, and
// their escaped, base64 and hex forms; FuzzNewFromConnectionString checks
// that no error repeats the AccountKey.
//
// # Where this package sits
//
// Package account is a top-level package beside entity, cost and keys, not
// part of any of them: entity is the table layer and links no queue or blob
// SDK, integration links package testing (which a production binary should
// not), and an internal package could not be called by users. It depends on
// cost (the meter) and on the two internal packages that entity's
// ClientOptions and integration already use (connstr, pipeline), and on no
// tablekit package that builds on tables, so that integration, the
// patterns and programs can build on it without an import cycle. Patterns keep taking
// the Azure SDK's own clients, so code that builds its clients another way
// still works; it needs entity.ClientOptions (or this package) for lost
// replies to be settled. TestLinksNoTesting checks that it links no package
// testing.
package account
