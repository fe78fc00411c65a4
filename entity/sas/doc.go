// Package sas makes and opens shared access signatures for Azure Table
// Storage that keep every field they sign, so that a token limited to a
// PartitionKey or PartitionKey+RowKey range works (design guide §7,
// [controlling access with shared access signatures]: "one user sees only their own entities",
// tokens "generated where the account key or identity lives").
//
// # The problem
//
// aztables v1.4.1's SASSignatureValues signs the key range (spk, srk, epk,
// erk) but leaves it out of the query string, so the service (and Azurite)
// computes another string-to-sign and refuses every range-limited token
// (403); its GetTableSASURL also needs a trailing slash
// on the endpoint. Its signing is right: only the URL is wrong.
//
// # The fix
//
// [Key.SignTable] builds the string-to-sign exactly as the REST reference
// ("Create a service SAS", versions 2015-04-05 and later) gives it for
// tables, and [Token.Query] writes every signed field into the query:
//
//	sp \n st \n se \n /table/<account>/<table in lower case> \n si \n sip \n spr \n sv \n spk \n srk \n epk \n erk
//
// with sv = 2019-02-02, the Table service version every Azure table SDK
// speaks. [Key.SignAccount] does the same for an account SAS ("Create an
// account SAS", ss=t). The tests check the signatures against the
// published vectors of aztables' own tests, against aztables'
// SASSignatureValues for the same inputs (it signs correctly; only the URL
// lacks fields), against tokens made by the JavaScript SDK
// (@azure/data-tables 13.3.2, testdata/jsvectors.json), and against the
// Python SDK's algorithm written out independently.
//
// # Guarantee
//
// A token made here carries every field it signs, so the service verifies
// the same string that was signed; every value is checked before signing
// (table name, permission letters in the service's order, UTC times to the
// second with expiry after start, IP range, protocol, stored access policy
// id, key bounds that are valid keys forming a non-empty range) and no
// value can contain a newline, so none can stand for another field of the
// string-to-sign. A token's key range grants exactly the entities
// [KeyRange.Contains] reports, by the REST reference's definition and the
// service's key order ([keys.Compare]); [Issuer.Grant] refuses to make a token without a range.
// [OpenTable] checks a URL and its token before any request.
//
// # Steps
//
// Where the key lives (a server, never the client):
//
//  1. [NewIssuer](endpoint, key, [Config]) or [NewIssuerFromConnectionString].
//  2. [Issuer.Grant](table, [Partition](userID), [ReadWrite]) signs a token
//     for one user's partition ([Rows] and [RowPrefix] for one user's rows
//     of a shared partition) and returns the table's URL carrying it;
//     [Issuer.TableURL] takes a full [TableSAS] (IP range, protocol, start,
//     stored access policy), [Issuer.AccountURL] an account SAS.
//
// In the client, which holds only the URL:
//
//  3. [OpenTable][T](url, opts) returns an [*entity.Table]; [OpenClient] the
//     table's [*aztables.Client], for resolver.NewTable and other views;
//     [OpenService] an [*aztables.ServiceClient] for an account SAS. Every request carries the token; the service checks it.
//
// # Failure and recovery
//
// Nothing is stored: a token is a signed string. A request the token does
// not allow (a permission it lacks, a key outside its range, after its
// expiry, from another address or over http when it says https) fails with
// an [*entity.ServiceError] of StatusCode 403 and nothing is written; the
// client asks the Issuer for a new URL. A token cannot be revoked before it
// expires except by rotating the account key, or by deleting or changing
// the stored access policy ([TableSAS].Policy) it names: give long-lived
// tokens a policy.
//
// # Azurite / Cosmos DB differences
//
// Azurite 3.37.0 checks a table SAS's signature (over all twelve lines,
// the key range included), its permissions, start and expiry, its protocol
// and its stored access policy; it does not check the IP range, and it
// does NOT enforce the key range: a range-limited token can read and write
// outside its range on Azurite. The integration tests therefore prove on
// Azurite what it enforces (a read-only token cannot insert, update or
// delete, an add-only token cannot read or upsert, an expired or
// not-yet-valid token is refused, an https-only token is refused over
// http, deleting a stored access policy revokes its tokens, a
// range-bearing token is accepted while the same token with a bound changed
// or left out is refused), and prove the range by the token's fields and
// signature against the vectors above. Only a real account refuses keys
// outside the range; the same tests, run against one with
// TABLEKIT_CONNECTION_STRING, assert that refusal. Azurite also differs in three smaller ways: it checks a
// table SAS on a transaction ($batch) against the table name "$batch" and
// refuses it (an account SAS works; a real account takes both); it decodes
// the query twice, so a '%' in a key bound is refused or fails with 500;
// and it answers AuthorizationFailure where a real account answers
// AuthenticationFailed. Tokens for the Cosmos DB Table API are not tested.
//
// A user delegation SAS (signed with a Microsoft Entra identity's key
// instead of the account key) is generally available for Blob Storage only;
// for Table Storage it is in preview, reachable through the REST API alone
// (no Azure SDK makes one for tables, Azurite has none) and is not offered
// here: use [entity.NewTableWithCredential] with an Entra identity instead.
// An account SAS cannot carry a key range or a stored access policy.
//
// # Usage
//
//	// On the server, where the account key lives:
//	iss, err := sas.NewIssuerFromConnectionString(connStr, sas.Config{TTL: 15 * time.Minute})
//	url, err := iss.Grant("Orders", sas.Partition(userID), sas.ReadWrite)
//	// … hand url to the signed-in user's client …
//
//	// In the client:
//	orders, err := sas.OpenTable[Order](url, nil)
//	err = orders.Insert(ctx, &Order{Customer: userID, ID: "000001"})    // inside the range
//	_, err = orders.Get(ctx, "someone-else", "000001")                  // 403 on a real account
//
// [controlling access with shared access signatures]: https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#controlling-access-with-shared-access-signatures
package sas
