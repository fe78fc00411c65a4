package batch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// ErrMalformed is wrapped by every error ParseResponse returns: the body is
// not a $batch response it can read.
var ErrMalformed = errors.New("batch: malformed $batch response")

// maxParts bounds the number of parts read. A changeset holds at most 100
// operations; the bound only protects against hostile input.
const maxParts = 1000

// OpResult is the outcome of one operation of an entity group transaction,
// read from its part of the multipart response.
type OpResult struct {
	// Index is the operation's 0-based position in the request. For a
	// successful transaction the service answers every operation in order,
	// so Index is the part's position. For a failure the service answers
	// with the failing operation alone and names it in the error message
	// ("1:The specified entity already exists."); Index is that number, or
	// -1 when the message carries none.
	Index int
	// StatusCode is the operation's HTTP status: 204 for updates, deletes
	// and inserts without content, 201 for inserts that return content,
	// 4xx for the failing operation.
	StatusCode int
	// Header holds the operation's own response headers (ETag, Location,
	// Preference-Applied, Content-ID, ...).
	Header http.Header
	// ETag is the entity's new ETag as the service wrote it, for example
	// W/"datetime'2024-01-02T03%3A04%3A05.1234567Z'"; empty for deletes and
	// failures.
	ETag string
	// Body is the part's body: the entity JSON of a 201 (insert with
	// Prefer: return-content), the error document of a failure, else empty.
	Body []byte
	// Code is the service error code of a failure, for example
	// "EntityAlreadyExists" or "UpdateConditionNotSatisfied".
	Code string
	// Message is the service error message without the index prefix and
	// without the RequestId and Time lines.
	Message string
	// RequestID is the RequestId line of the error message, if any.
	RequestID string
}

// Failed reports whether the operation failed (status 400 or above).
func (r OpResult) Failed() bool { return r.StatusCode >= 400 }

// Failure returns the failed operation of a transaction's results: the
// first result with a status of 400 or above. The service answers a failed
// transaction with that operation alone; its Index is the failing
// operation's position in the request (-1 when the service did not say),
// Code and Message the service's reason.
func Failure(results []OpResult) (OpResult, bool) {
	for _, r := range results {
		if r.Failed() {
			return r, true
		}
	}
	return OpResult{}, false
}

// ParseResponse reads the body of a $batch response (HTTP 202) into one
// OpResult per answered operation, in order.
//
// contentType is the response's Content-Type header, which names the outer
// (batch) boundary; when it is empty or names none, the boundary is taken
// from the first line of the body. The outer part holding the changeset
// names the inner (changeset) boundary the same way. Each inner part is an
// application/http message: a status line, headers, and an optional body.
// CRLF and bare LF line endings are both read, as are application/http parts
// outside a changeset. Lines before the status line are skipped (Azurite
// 3.37 writes the changeset boundary there when it refuses more than 100
// operations).
//
// The format is the one "Performing entity group transactions" documents
// (https://learn.microsoft.com/rest/api/storageservices/performing-entity-group-transactions)
// and [MS-ODATA] 2.2.7.6.8 "Example Batch Response" specifies.
//
// ParseResponse never panics; on input it cannot read it returns an error
// wrapping ErrMalformed.
func ParseResponse(contentType string, body []byte) ([]OpResult, error) {
	boundary, err := boundaryOf(contentType, body)
	if err != nil {
		return nil, err
	}
	p := parser{}
	if err := p.multipart(body, boundary, 0); err != nil {
		return nil, err
	}
	if len(p.results) == 0 {
		return nil, malformed("no operation in the response")
	}
	return p.results, nil
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// boundaryOf returns the multipart boundary named by contentType, else the
// one the body starts with ("--boundary" on the first line).
func boundaryOf(contentType string, body []byte) (string, error) {
	if contentType != "" {
		mt, params, err := mime.ParseMediaType(contentType)
		if err == nil && strings.HasPrefix(mt, "multipart/") && params["boundary"] != "" {
			return params["boundary"], nil
		}
		if err == nil && !strings.HasPrefix(mt, "multipart/") {
			return "", malformed("content type %q is not multipart", mt)
		}
	}
	line := body
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimRight(line, "\r \t")
	if !bytes.HasPrefix(line, []byte("--")) || len(line) == 2 {
		return "", malformed("no boundary in the content type or on the first line")
	}
	return string(line[2:]), nil
}

type parser struct {
	results []OpResult
}

// multipart reads the parts of a multipart/mixed body. depth is 0 for the
// batch, 1 for a changeset; deeper nesting is refused.
func (p *parser) multipart(body []byte, boundary string, depth int) error {
	if depth > 1 {
		return malformed("multipart nested deeper than batch and changeset")
	}
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	for n := 0; ; n++ {
		if n >= maxParts {
			return malformed("more than %d parts", maxParts)
		}
		part, err := r.NextRawPart() // raw: no quoted-printable decoding
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return malformed("reading part: %v", err)
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return malformed("reading part: %v", err)
		}
		ct := part.Header.Get("Content-Type")
		mt, params, _ := mime.ParseMediaType(ct)
		switch {
		case strings.HasPrefix(mt, "multipart/"):
			inner := params["boundary"]
			if inner == "" {
				var err error
				if inner, err = boundaryOf("", data); err != nil {
					return err
				}
			}
			if err := p.multipart(data, inner, depth+1); err != nil {
				return err
			}
		case mt == "application/http" || ct == "":
			res, err := parseHTTP(data)
			if err != nil {
				return err
			}
			res.Index = len(p.results)
			if res.Failed() {
				res.Index = -1
				res.Code, res.Message, res.RequestID, res.Index = parseError(res.Body)
			}
			p.results = append(p.results, res)
		default:
			return malformed("unexpected part content type %q", ct)
		}
	}
}

// parseHTTP reads one application/http part: a status line, MIME headers
// and a body. Lines before the status line are skipped.
func parseHTTP(data []byte) (OpResult, error) {
	br := bufio.NewReader(bytes.NewReader(data))
	var status string
	for {
		line, err := br.ReadString('\n')
		trimmed := strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(trimmed, "HTTP/") {
			status = trimmed
			break
		}
		if err != nil {
			return OpResult{}, malformed("part has no HTTP status line")
		}
	}
	// "HTTP/1.1 204 No Content"
	_, rest, ok := strings.Cut(status, " ")
	codeText, _, _ := strings.Cut(strings.TrimLeft(rest, " "), " ")
	code, err := strconv.Atoi(codeText)
	if !ok || err != nil || len(codeText) != 3 || code < 100 {
		return OpResult{}, malformed("bad status line %q", status)
	}
	tp := textproto.NewReader(br)
	h, err := tp.ReadMIMEHeader()
	if err != nil && err != io.EOF {
		return OpResult{}, malformed("bad headers after %q: %v", status, err)
	}
	body, _ := io.ReadAll(br)
	body = bytes.TrimRight(body, "\r\n")
	res := OpResult{StatusCode: code, Header: http.Header(h), ETag: h.Get("ETag")}
	if len(body) > 0 {
		res.Body = body
	}
	return res, nil
}

// parseError reads a failed operation's error document: OData JSON
// ({"odata.error":{"code":…,"message":{"lang":…,"value":…}}}, the format
// aztables asks for), or the older XML form (<error><code/><message/></error>).
// The message value starts with the failing operation's index ("1:…") and
// ends with RequestId and Time lines; both are split off. index is -1 when
// the message has no index prefix.
func parseError(body []byte) (code, message, requestID string, index int) {
	code, raw := decodeError(body)
	index, raw = splitIndex(raw)
	message, requestID = splitTrailer(raw)
	return code, message, requestID, index
}

func decodeError(body []byte) (code, message string) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return "", ""
	}
	if trimmed[0] == '<' {
		var x struct {
			Code    string `xml:"code"`
			Message string `xml:"message"`
		}
		if xml.Unmarshal(trimmed, &x) == nil {
			return strings.TrimSpace(x.Code), x.Message
		}
		return "", ""
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(trimmed, &doc) != nil {
		return "", ""
	}
	inner, ok := doc["odata.error"]
	if !ok {
		inner = doc["error"]
	}
	var e struct {
		Code    string          `json:"code"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(inner, &e) != nil {
		return "", ""
	}
	var m struct {
		Value string `json:"value"`
	}
	if json.Unmarshal(e.Message, &m) == nil && m.Value != "" {
		return e.Code, m.Value
	}
	var s string
	if json.Unmarshal(e.Message, &s) == nil {
		return e.Code, s
	}
	return e.Code, ""
}

// splitIndex splits "12:text" into 12 and "text"; -1 and the input when
// there is no such prefix.
func splitIndex(s string) (int, string) {
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i >= len(s) || s[i] != ':' {
		return -1, s
	}
	n, err := strconv.Atoi(s[:i])
	if err != nil {
		return -1, s
	}
	return n, s[i+1:]
}

// splitTrailer removes the "RequestId:…" and "Time:…" lines the service
// appends to error messages, returning the message and the request id.
func splitTrailer(s string) (message, requestID string) {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	kept := lines[:0]
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "RequestId:"):
			requestID = strings.TrimSpace(strings.TrimPrefix(l, "RequestId:"))
		case strings.HasPrefix(l, "Time:"):
		default:
			kept = append(kept, l)
		}
	}
	return strings.TrimSpace(strings.Join(kept, "\n")), requestID
}
