package batch

import (
	"errors"
	"testing"
)

// FuzzParseResponse: ParseResponse never panics; it returns results that
// make sense or an error wrapping ErrMalformed. The committed corpus in
// testdata/fuzz/FuzzParseResponse holds the recorded and documented replies.
func FuzzParseResponse(f *testing.F) {
	f.Add("multipart/mixed; boundary=b", []byte("--b\r\nContent-Type: application/http\r\n\r\nHTTP/1.1 204 No Content\r\nETag: W/\"x\"\r\n\r\n\r\n--b--\r\n"))
	f.Add("", []byte("--b\nContent-Type: multipart/mixed; boundary=c\n\n--c\nContent-Type: application/http\n\nHTTP/1.1 409 Conflict\n\n{\"odata.error\":{\"code\":\"E\",\"message\":{\"value\":\"1:m\"}}}\n--c--\n--b--\n"))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		res, err := ParseResponse(contentType, body)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			if res != nil {
				t.Fatalf("results with an error: %+v", res)
			}
			return
		}
		if len(res) == 0 || len(res) > maxParts {
			t.Fatalf("%d results without an error", len(res))
		}
		for i, r := range res {
			if r.StatusCode < 100 || r.StatusCode > 999 {
				t.Fatalf("result %d: status %d", i, r.StatusCode)
			}
			if r.Failed() {
				if r.Index < -1 {
					t.Fatalf("result %d: index %d", i, r.Index)
				}
			} else if r.Index != i {
				t.Fatalf("result %d: index %d", i, r.Index)
			}
			if r.Header == nil {
				t.Fatalf("result %d: nil header", i)
			}
		}
		if f, ok := Failure(res); ok && !f.Failed() {
			t.Fatal("Failure returned a success")
		}
	})
}
