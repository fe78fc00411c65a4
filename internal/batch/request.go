package batch

import (
	"net/url"
	"strconv"
	"strings"
)

// The HTTP methods of a changeset's operations.
const (
	MethodInsert  = "POST"   // insert
	MethodReplace = "PUT"    // replace (If-Match) or insert-or-replace (none)
	MethodMerge   = "MERGE"  // merge (If-Match) or insert-or-merge (none)
	MethodDelete  = "DELETE" // delete (If-Match, "*" for any version)
)

// Operation is one operation of an entity group transaction, as sent.
type Operation struct {
	Method string
	// PartitionKey and RowKey address the entity; an insert is addressed
	// by the table alone and ignores them.
	PartitionKey, RowKey string
	// IfMatch is the If-Match header: an ETag, "*", or "" for none (an
	// upsert, or an insert).
	IfMatch string
	// Body is the entity's JSON; nil for a delete.
	Body []byte
}

// Request builds the body of a $batch request: one changeset holding ops,
// addressed to table at endpoint (the account's table service URL, such as
// https://account.table.core.windows.net/, without a query). id makes the
// boundaries unique; any string of letters, digits and '-' will do.
//
// Keys are written into each operation's URL as the single-entity calls
// write them, so every key the service allows can be addressed: each ' is
// doubled (the OData string literal rule) and the result percent-encoded
// (url.PathEscape). Empty keys are allowed.
//
// It returns the body and the request's Content-Type. The format is the one
// "Performing entity group transactions" documents.
func Request(dst []byte, endpoint, table, id string, ops []Operation) (body []byte, contentType string) {
	base := strings.TrimSuffix(endpoint, "/") + "/" + url.PathEscape(table)
	batchB, csB := "batch_"+id, "changeset_"+id
	b := dst
	b = append(b, "--"...)
	b = append(b, batchB...)
	b = append(b, "\r\nContent-Type: multipart/mixed; boundary="...)
	b = append(b, csB...)
	b = append(b, "\r\n\r\n"...)
	for _, op := range ops {
		b = append(b, "--"...)
		b = append(b, csB...)
		b = append(b, "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"...)
		b = append(b, op.Method...)
		b = append(b, ' ')
		b = append(b, base...)
		if op.Method != MethodInsert {
			b = AppendKeyPath(b, op.PartitionKey, op.RowKey)
		}
		b = append(b, " HTTP/1.1\r\nAccept: application/json;odata=nometadata\r\nDataServiceVersion: 3.0\r\n"...)
		if op.Method == MethodInsert {
			b = append(b, "Prefer: return-no-content\r\n"...)
		}
		if op.IfMatch != "" {
			b = append(b, "If-Match: "...)
			b = append(b, op.IfMatch...)
			b = append(b, "\r\n"...)
		}
		if op.Body != nil {
			b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
			b = strconv.AppendInt(b, int64(len(op.Body)), 10)
			b = append(b, "\r\n\r\n"...)
			b = append(b, op.Body...)
			b = append(b, "\r\n"...)
		} else {
			// The blank line that ends the headers; the next CRLF belongs
			// to the boundary.
			b = append(b, "\r\n\r\n"...)
		}
	}
	b = append(b, "--"...)
	b = append(b, csB...)
	b = append(b, "--\r\n--"...)
	b = append(b, batchB...)
	b = append(b, "--\r\n"...)
	return b, "multipart/mixed; boundary=" + batchB
}

// AppendKeyPath appends "(PartitionKey='pk',RowKey='rk')" with the keys
// escaped as the single-entity calls escape them: ' doubled, then
// percent-encoded.
func AppendKeyPath(b []byte, pk, rk string) []byte {
	b = append(b, "(PartitionKey='"...)
	b = appendKey(b, pk)
	b = append(b, "',RowKey='"...)
	b = appendKey(b, rk)
	return append(b, "')"...)
}

func appendKey(b []byte, k string) []byte {
	if !strings.ContainsRune(k, '\'') && isPlain(k) {
		return append(b, k...) // the common case: nothing to escape
	}
	return append(b, url.PathEscape(strings.ReplaceAll(k, "'", "''"))...)
}

// isPlain reports a key that url.PathEscape leaves unchanged.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == '~':
		default:
			return false
		}
	}
	return true
}
