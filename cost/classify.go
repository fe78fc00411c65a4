package cost

import (
	"net"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"net/http"
	"net/url"
	"strings"
)

// PolicyFor is Policy for clients of one known service: requests are counted
// under svc whatever their URL looks like.
func (m *Meter) PolicyFor(svc Service) policy.Policy {
	return meterPolicy{m: m, svc: svc}
}

// Classify tells which service and operation kind a request is billed as.
// The service comes from the host name (ACCOUNT.table.core.windows.net) or,
// for path-style endpoints such as Azurite's (http://127.0.0.1:10002/ACCOUNT/…),
// from the request's shape.
func Classify(r *http.Request) Key {
	svc := serviceOf(r)
	return Key{Service: svc, Op: operationOf(svc, r)}
}

func serviceOf(r *http.Request) Service {
	host := strings.ToLower(r.URL.Hostname())
	switch {
	case strings.Contains(host, ".table."):
		return Table
	case strings.Contains(host, ".queue."):
		return Queue
	case strings.Contains(host, ".blob."):
		return Blob
	}
	// Path-style endpoint: tell the services apart by what they send.
	segs := pathSegments(r.URL, true)
	q := r.URL.Query()
	switch {
	case r.Header.Get("DataServiceVersion") != "" || r.Header.Get("MaxDataServiceVersion") != "" ||
		strings.Contains(r.Header.Get("Accept"), "odata") ||
		strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
		return Table // only the table service speaks JSON (OData); queues and blobs speak XML
	case len(segs) > 0 && (segs[0] == "$batch" || segs[0] == "Tables" || strings.HasPrefix(segs[0], "Tables(") ||
		strings.Contains(segs[0], "(")):
		return Table
	case r.Header.Get("x-ms-blob-type") != "" || q.Get("restype") == "container" ||
		r.Header.Get("x-ms-blob-content-type") != "" || q.Get("comp") == "block" ||
		q.Get("comp") == "blocklist" || q.Get("comp") == "appendblock":
		return Blob
	case len(segs) >= 2 && segs[1] == "messages":
		return Queue
	case len(segs) == 1 && q.Get("restype") == "":
		return Queue // PUT/DELETE/GET ?comp=metadata of a queue; containers carry restype
	case len(segs) >= 2:
		return Blob // container/blob
	}
	return Other
}

// pathSegments splits the URL path; for a path-style endpoint (an IP
// address or localhost, as Azurite serves) the first segment, the account
// name, is dropped.
func pathSegments(u *url.URL, dropAccount bool) []string {
	p := strings.Trim(u.EscapedPath(), "/")
	var segs []string
	if p != "" {
		segs = strings.Split(p, "/")
	}
	if dropAccount && pathStyle(u) && len(segs) > 0 {
		segs = segs[1:]
	}
	for i, s := range segs {
		if un, err := url.PathUnescape(s); err == nil {
			segs[i] = un
		}
	}
	return segs
}

func pathStyle(u *url.URL) bool {
	h := u.Hostname()
	return h == "localhost" || net.ParseIP(h) != nil
}

func operationOf(svc Service, r *http.Request) string {
	segs := pathSegments(r.URL, true)
	q := r.URL.Query()
	m := r.Method
	switch svc {
	case Table:
		return tableOp(m, segs, q, r.Header)
	case Queue:
		return queueOp(m, segs, q)
	case Blob:
		return blobOp(m, segs, q)
	}
	return m
}

func tableOp(m string, segs []string, q url.Values, h http.Header) string {
	first := ""
	if len(segs) > 0 {
		first = segs[0]
	}
	switch {
	case first == "$batch":
		return OpBatch
	case first == "Tables" && m == http.MethodPost:
		return OpCreateTable
	case first == "Tables" && m == http.MethodGet:
		return OpListTables
	case strings.HasPrefix(first, "Tables(") && m == http.MethodDelete:
		return OpDeleteTable
	case q.Get("comp") == "acl":
		return OpTableACL
	}
	// An entity address is Table(PartitionKey='…',RowKey='…'); a query
	// is Table() or Table with $filter.
	addressed := strings.Contains(first, "PartitionKey=")
	switch m {
	case http.MethodGet:
		if addressed {
			return OpGet
		}
		return OpQuery
	case http.MethodPost:
		return OpInsert
	case http.MethodPut, http.MethodPatch, "MERGE":
		if h.Get("If-Match") != "" {
			return OpUpdate
		}
		return OpUpsert
	case http.MethodDelete:
		return OpDelete
	}
	return m
}

func queueOp(m string, segs []string, q url.Values) string {
	switch {
	case len(segs) == 0:
		if q.Get("comp") == "list" {
			return OpListQueues
		}
		return OpQueueOperation
	case len(segs) == 1:
		switch {
		case q.Get("comp") == "metadata" || q.Get("comp") == "acl":
			return OpQueueMetadata
		case m == http.MethodPut:
			return OpCreateQueue
		case m == http.MethodDelete:
			return OpDeleteQueue
		}
		return OpQueueOperation
	case len(segs) == 2: // queue/messages
		switch m {
		case http.MethodPost:
			return OpPutMessage
		case http.MethodGet:
			if q.Get("peekonly") == "true" {
				return OpPeekMessages
			}
			return OpGetMessages
		case http.MethodDelete:
			return OpClearMessages
		}
	case len(segs) >= 3: // queue/messages/id
		switch m {
		case http.MethodPut:
			return OpUpdateMessage
		case http.MethodDelete:
			return OpDeleteMessage
		}
	}
	return OpQueueOperation
}

func blobOp(m string, segs []string, q url.Values) string {
	comp := q.Get("comp")
	if len(segs) <= 1 || q.Get("restype") == "container" {
		switch {
		case comp == "list":
			return OpListBlobs
		case m == http.MethodPut && comp == "":
			return OpCreateContainer
		case m == http.MethodDelete:
			return OpDeleteContainer
		}
		return OpBlobOperation
	}
	switch m {
	case http.MethodPut:
		switch comp {
		case "block":
			return OpPutBlock
		case "blocklist":
			return OpPutBlockList
		case "appendblock":
			return OpAppendBlock
		case "metadata":
			return OpSetBlobMetadata
		case "":
			return OpPutBlob
		}
	case http.MethodGet:
		if comp == "" {
			return OpGetBlob
		}
	case http.MethodHead:
		return OpGetBlobProperties
	case http.MethodDelete:
		return OpDeleteBlob
	}
	return OpBlobOperation
}
