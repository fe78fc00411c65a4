package throttle

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/tablekit/tablekit/internal/jsonscan"
	"github.com/tablekit/tablekit/internal/pipeline"
)

// work is what a request asks of the service, as the scale targets count
// it: its account, and for an entity write its table, PartitionKey and
// number of entities.
type work struct {
	account   string
	table     string // "" when the request names no entity of one partition
	partition string
	entities  int
}

// partitionKey is the pacing key of the request's partition.
func (w work) partitionKey() string { return w.account + "\x00" + w.table + "\x00" + w.partition }

var batchLine = []byte(" HTTP/1.1\r\n")

const pkInURL = "PartitionKey='"

// workOf reads req's account, table, PartitionKey and entity count from its
// URL and, for an insert or a $batch, its body (which it rewinds).
func workOf(req *policy.Request) work {
	raw := req.Raw()
	path, seg := lastSegment(raw.URL)
	w := work{account: accountOf(raw.URL, path), entities: 1}
	switch {
	case seg == "$batch":
		w.table, w.partition, w.entities = batchWork(pipeline.ReadBody(req))
		if w.table == "" {
			return work{account: w.account, entities: 1}
		}
		return w
	case strings.HasPrefix(seg, "Tables"), seg == "":
		return w
	}
	table, keys, hasKeys := strings.Cut(seg, "(")
	w.table = table
	switch {
	case hasKeys && strings.HasPrefix(keys, pkInURL):
		w.partition = quotedInURL(keys[len(pkInURL):])
	case raw.Method == http.MethodPost && !hasKeys:
		w.partition, _ = partitionInJSON(pipeline.ReadBody(req))
	default:
		w.table = "" // a query: the account's work only
	}
	return w
}

// lastSegment returns u's escaped path and its last segment, unescaped: a
// key's escaped '/' stays in the segment.
func lastSegment(u *url.URL) (path, seg string) {
	path = u.EscapedPath()
	seg = path[strings.LastIndexByte(path, '/')+1:]
	if s, err := url.PathUnescape(seg); err == nil {
		seg = s
	}
	return path, seg
}

// services are the host labels that name an account's service endpoint:
// NAME.table.core.windows.net, NAME.queue.…, NAME.blob.… are one account.
var services = map[string]bool{"table": true, "queue": true, "blob": true, "dfs": true, "file": true}

// accountOf is the key of the account a request goes to, the same for
// each of its service endpoints, since the service's scale target of
// requests per second is the account's: the host without its service
// label ("acct.core.windows.net" for acct.table.core.windows.net and
// acct.queue.core.windows.net), or, for an emulator's path-style
// endpoint, its host without the port and the account from the path
// ("127.0.0.1/devstoreaccount1" for Azurite's 10000, 10001 and 10002).
// Any other host is its own key.
func accountOf(u *url.URL, path string) string {
	if isEmulatorPath(u) {
		name, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
		return u.Hostname() + "/" + name
	}
	host := u.Hostname()
	name, rest, ok := strings.Cut(host, ".")
	if !ok {
		return host
	}
	if svc, domain, ok := strings.Cut(rest, "."); ok && services[svc] {
		return name + "." + domain
	}
	return host
}

func isEmulatorPath(u *url.URL) bool {
	host := u.Hostname()
	return host == "127.0.0.1" || host == "localhost" || host == "::1" || strings.HasPrefix(host, "127.")
}

// quotedInURL reads an OData string literal's body up to its closing quote
// (” is a quote).
func quotedInURL(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			break
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// batchWork reads a $batch body: the table and PartitionKey of its first
// operation — from the operation's URL, or for an insert from its JSON
// body — and its number of operations (at least 1). table is "" when the
// body holds no operation.
func batchWork(body []byte) (table, partition string, ops int) {
	i := bytes.Index(body, batchLine)
	if i < 0 {
		return "", "", 1
	}
	ops = bytes.Count(body, batchLine)
	line := body[:i]
	if k := bytes.LastIndexByte(line, '\n'); k >= 0 {
		line = line[k+1:]
	}
	_, target, ok := bytes.Cut(line, []byte(" "))
	if !ok {
		return "", "", ops
	}
	u, err := url.Parse(string(target))
	if err != nil {
		return "", "", ops
	}
	_, seg := lastSegment(u)
	table, keys, hasKeys := strings.Cut(seg, "(")
	if hasKeys && strings.HasPrefix(keys, pkInURL) {
		return table, quotedInURL(keys[len(pkInURL):]), ops
	}
	// An insert: the entity is the operation's body, after its headers.
	rest := body[i+len(batchLine):]
	if h := bytes.Index(rest, []byte("\r\n\r\n")); h >= 0 {
		partition, _ = partitionInJSON(rest[h+4:])
	}
	return table, partition, ops
}

// errFound ends the scan of partitionInJSON once it has the PartitionKey.
var errFound = errors.New("throttle: PartitionKey found")

// partitionInJSON reads the PartitionKey member (exactly so named) of the
// JSON object at the start of b; what follows the object is ignored.
func partitionInJSON(b []byte) (string, bool) {
	sc := jsonscan.New(b)
	var pk string
	var ok bool
	err := sc.Members(func(name []byte, esc bool) error {
		var p jsonscan.Prop
		if err := sc.Value(&p); err != nil {
			return err
		}
		if esc {
			u, uok := jsonscan.Unescape(name)
			if !uok {
				return nil
			}
			name = []byte(u)
		}
		if string(name) != "PartitionKey" {
			return nil
		}
		if p.Kind == jsonscan.String {
			pk, ok = jsonscan.StringOf(p.Val, p.ValEsc)
		}
		return errFound
	})
	return pk, ok && errors.Is(err, errFound)
}
