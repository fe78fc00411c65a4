package throttle

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
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

var (
	batchLine = []byte(" HTTP/1.1\r\n")
	pkInURL   = "PartitionKey='"
	pkInJSON  = []byte(`"PartitionKey":"`)
)

// workOf reads req's account, table, PartitionKey and entity count from its
// URL and, for an insert or a $batch, its body (which it rewinds).
func workOf(req *policy.Request) work {
	raw := req.Raw()
	w := work{account: raw.URL.Host, entities: 1}
	path := raw.URL.Path
	seg := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.IndexByte(path[1:], '/'); i >= 0 && isEmulatorPath(raw.URL) {
		w.account += path[:i+1] // path-style: /account/table
	}
	switch {
	case seg == "$batch":
		body := readBody(req)
		if n := bytes.Count(body, batchLine); n > 0 {
			w.entities = n
		}
		w.table, w.partition = tableOfBatch(body), partitionIn(body)
		if w.partition == "" && w.table == "" {
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
		w.partition = partitionIn(readBody(req))
	default:
		w.table = "" // a query: the account's work only
	}
	return w
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

// partitionIn finds the first PartitionKey in a body: in a URL (a $batch's
// update or delete) or a JSON member (an insert).
func partitionIn(body []byte) string {
	u := bytes.Index(body, []byte(pkInURL))
	j := bytes.Index(body, pkInJSON)
	switch {
	case u >= 0 && (j < 0 || u < j):
		rest := body[u+len(pkInURL):]
		if e := bytes.IndexByte(rest, ')'); e >= 0 {
			rest = rest[:e]
		}
		s, err := url.PathUnescape(string(rest))
		if err != nil {
			s = string(rest)
		}
		return quotedInURL(s)
	case j >= 0:
		rest := body[j+len(pkInJSON)-1:]
		var s string
		dec := json.NewDecoder(bytes.NewReader(rest))
		if dec.Decode(&s) == nil {
			return s
		}
	}
	return ""
}

// tableOfBatch is the table named by a $batch's first operation.
func tableOfBatch(body []byte) string {
	i := bytes.Index(body, batchLine)
	if i < 0 {
		return ""
	}
	line := body[:i]
	if k := bytes.LastIndexByte(line, '\n'); k >= 0 {
		line = line[k+1:]
	}
	_, target, ok := bytes.Cut(line, []byte(" "))
	if !ok {
		return ""
	}
	u, err := url.Parse(string(target))
	if err != nil {
		return ""
	}
	seg := u.Path[strings.LastIndexByte(u.Path, '/')+1:]
	table, _, _ := strings.Cut(seg, "(")
	return table
}

// readBody returns the request's body and rewinds it.
func readBody(req *policy.Request) []byte {
	body := req.Body()
	if body == nil {
		return nil
	}
	b, err := io.ReadAll(body)
	if rerr := req.RewindBody(); err != nil || rerr != nil {
		return nil
	}
	return b
}
