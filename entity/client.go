package entity

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/internal/pipeline"
)

// ClientOptions returns a copy of opts (nil means aztables' defaults) with
// tablekit's two pipeline policies added. Build the *aztables.Client or
// *aztables.ServiceClient handed to NewTable or NewTableFromService with
// it; tablekit's own constructors do so themselves:
//
//	svc, err := aztables.NewServiceClient(url, cred, entity.ClientOptions(nil))
//	people, err := entity.NewTableFromService[Person](svc, "People")
//
// The policies add no request and change no request of aztables'. One
// counts azcore's tries of each write, so that an answer to a resent
// request (after a reply was lost) is never taken for the truth: such a
// write is checked by reading the entity back, and reported as done, as
// refused, or as ErrOutcomeUnknown. The other lets writes go out as
// tablekit's own requests through the client's pipeline (its credential,
// retries, logging and tracing): transactions as tablekit's $batch, and
// single-entity writes (Insert, Upsert, Update, UpdateAny, Delete,
// Modify) and point reads (Get, Modify's read) as requests tablekit
// builds, each carried by the aztables call of its kind, so that tracing
// names it. Together they address every key the service allows, ' and
// empty keys included, in every call, and send and read each body as
// encoded (aztables decodes and re-encodes it).
//
// A client built without them still works, with these differences: a
// merge, replace, upsert or delete addressed by an empty PartitionKey is
// refused before any request with a *ClientOptionsError
// (ErrNeedsClientOptions) that says to build the client with
// ClientOptions, since aztables builds no URL for it; Batch goes through
// aztables' SubmitTransaction, which also cannot address a key holding '
// in such an operation (refused the same way), while BulkWrite sends such
// an upsert as a single-entity upsert; and a conflict answered to a resent
// write is reported as the service answered it, which a lost reply can
// make wrong. Modify with write tokens never applies a change twice
// either way (see Table.WithWriteTokens).
func ClientOptions(opts *aztables.ClientOptions) *aztables.ClientOptions {
	var o aztables.ClientOptions
	if opts != nil {
		o = *opts
	}
	pipeline.Install(&o.ClientOptions)
	return &o
}

// conn is a table client and what tablekit learnt of its pipeline.
type conn struct {
	client *aztables.Client
	// kit: the pipeline carries tablekit's policies; endpoint and table
	// are then the service URL and table name its requests go to.
	kit      bool
	endpoint string
	table    string
	// base is the escaped path of the table's URL (/account/Table), to
	// which single-entity writes append the keys.
	base string
	// cosmos: the endpoint is Cosmos DB's Table API, which takes a merge
	// as POST with X-HTTP-Method: MERGE.
	cosmos bool
}

var errNilClient = invalidArg("entity: nil *aztables.Client")

// connect probes client's pipeline, sending nothing.
func connect(client *aztables.Client) (*conn, error) {
	if client == nil {
		return nil, errNilClient
	}
	c := &conn{client: client}
	u, ok := pipeline.Probe(func(ctx context.Context) {
		_, _ = client.GetEntity(ctx, "p", "r", nil)
	})
	if !ok {
		c.table = nameFromSAS(client)
		return c, nil
	}
	table, endpoint, base := splitProbe(u)
	if table == "" {
		return c, nil
	}
	c.kit = true
	c.table, c.endpoint, c.base = table, endpoint, base
	c.cosmos = isCosmos(endpoint)
	return c, nil
}

// nameFromSAS reads the table name of a client without tablekit's
// policies from a SAS it signs, locally, when it holds a shared key (""
// otherwise: aztables shows a client's URL nowhere else). The SAS names
// the table in lower case (tn=); aztables appends the name as given to
// the end of the URL's path.
func nameFromSAS(client *aztables.Client) string {
	now := time.Now()
	s, err := client.GetTableSASURL(aztables.SASPermissions{Read: true}, now, now.Add(time.Minute))
	if err != nil {
		return ""
	}
	base, query, _ := strings.Cut(s, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return ""
	}
	tn := q.Get("tn")
	if tn == "" || len(tn) > len(base) || !strings.EqualFold(base[len(base)-len(tn):], tn) {
		return ""
	}
	return base[len(base)-len(tn):]
}

// splitProbe reads the table name, the service endpoint and the escaped
// path of the table from the probe's URL,
// ENDPOINT/TABLE(PartitionKey='p',RowKey='r'); "" when it is not of that
// form.
func splitProbe(u *url.URL) (table, endpoint, base string) {
	path := u.EscapedPath()
	i := strings.LastIndex(path, "(PartitionKey=")
	if i < 0 {
		return "", "", ""
	}
	slash := strings.LastIndexByte(path[:i], '/')
	if slash < 0 {
		return "", "", ""
	}
	return path[slash+1 : i], u.Scheme + "://" + u.Host + path[:slash+1], path[:i]
}
