package canary_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	azlog "github.com/Azure/azure-sdk-for-go/sdk/azcore/log"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/integration"
)

// secret is the unique plaintext of one run and every form a leak of it
// could take: as is, in base64 and base64url at each of the three
// alignments a value can start at within a 3-byte group (the characters
// of the groups wholly inside it, which are the same whatever surrounds
// it), and in hex, lower and upper case.
type secret struct {
	text  string
	forms map[string]string // form name → needle
}

func newSecret(t testing.TB) *secret {
	var b [13]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	s := &secret{text: "canary" + hex.EncodeToString(b[:]), forms: map[string]string{}}
	s.forms["plain"] = s.text
	s.forms["hex"] = hex.EncodeToString([]byte(s.text))
	s.forms["HEX"] = strings.ToUpper(s.forms["hex"])
	for a := range 3 {
		buf := append(bytes.Repeat([]byte{0}, a), s.text...)
		first := 0
		if a > 0 {
			first = 3 // the first group mixes what precedes the value
		}
		last := len(buf) / 3 * 3 // the last group may mix what follows
		for name, enc := range map[string]*base64.Encoding{"base64": base64.StdEncoding, "base64url": base64.URLEncoding} {
			full := enc.EncodeToString(buf)
			s.forms[fmt.Sprintf("%s@%d", name, a)] = full[first/3*4 : last/3*4]
		}
	}
	return s
}

// value is the plaintext with a label of where it was written: every
// value holds the secret.
func (s *secret) value(label string) string { return s.text + "-" + label }

// find returns the names of the forms of s that text holds.
func (s *secret) find(text string) []string {
	var found []string
	for name, needle := range s.forms {
		if strings.Contains(text, needle) {
			found = append(found, name)
		}
	}
	return found
}

// leaks collects where a secret was found.
type leaks struct {
	mu    sync.Mutex
	where []string
}

func (l *leaks) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.where = append(l.where, fmt.Sprintf(format, args...))
}

// check looks for s in text, and in the strings of text read as JSON (a
// JSON string may escape '/' in base64 as "\/").
func (l *leaks) check(s *secret, where, text string) {
	if found := s.find(text); len(found) > 0 {
		l.add("%s: %v", where, found)
		return
	}
	var v any
	if json.Unmarshal([]byte(text), &v) == nil {
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case string:
				if found := s.find(v); len(found) > 0 {
					l.add("%s (a JSON string): %v", where, found)
				}
				if b, err := base64.StdEncoding.DecodeString(v); err == nil {
					if found := s.find(string(b)); len(found) > 0 {
						l.add("%s (a base64 JSON string): %v", where, found)
					}
				}
			case map[string]any:
				for k, x := range v {
					walk(k)
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		walk(v)
	}
}

// checkBytes is check for content that may be gzip (a backup) or base64
// (a queue message).
func (l *leaks) checkBytes(s *secret, where string, data []byte) {
	l.check(s, where, string(data))
	if len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b {
		if zr, err := gzip.NewReader(bytes.NewReader(data)); err == nil {
			if plain, err := io.ReadAll(zr); err == nil {
				l.check(s, where+" (gunzipped)", string(plain))
			}
		}
	}
	if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data))); err == nil {
		l.check(s, where+" (base64-decoded)", string(b))
	}
}

// logs records every line azcore logs while it is installed.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func captureLogs(t testing.TB) *logs {
	l := &logs{}
	azlog.SetListener(func(ev azlog.Event, msg string) {
		l.mu.Lock()
		l.lines = append(l.lines, string(ev)+": "+msg)
		l.mu.Unlock()
	})
	t.Cleanup(func() { azlog.SetListener(nil) })
	return l
}

func (l *logs) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// errs records every error the calls under test returned, expected ones
// included: their text is what gets logged.
type errs struct {
	mu   sync.Mutex
	text []string
}

func (e *errs) add(err error) {
	if err == nil {
		return
	}
	e.mu.Lock()
	e.text = append(e.text, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
	e.mu.Unlock()
}

// scanAccount reads everything the account holds — every entity of every
// table (raw, in full metadata), the messages of every queue (poison
// queues are queues), every blob with its metadata — and checks it for s.
// It only reads: the account may be shared with other test binaries.
func scanAccount(t testing.TB, env *integration.Env, s *secret, l *leaks) (tables, entities, messages, blobs int) {
	t.Helper()
	ctx := context.Background()
	full := aztables.MetadataFormatFull
	tp := env.TableService.NewListTablesPager(nil)
	for tp.More() {
		page, err := tp.NextPage(ctx)
		if err != nil {
			t.Fatalf("listing tables: %v", err)
		}
		for _, tb := range page.Tables {
			name := *tb.Name
			tables++
			l.check(s, "table name "+name, name)
			ep := env.TableService.NewClient(name).NewListEntitiesPager(&aztables.ListEntitiesOptions{Format: &full})
			for ep.More() {
				ents, err := ep.NextPage(ctx)
				if err != nil {
					if isNotFound(err) {
						break // dropped meanwhile by another test
					}
					t.Fatalf("listing the entities of %s: %v", name, err)
				}
				for _, e := range ents.Entities {
					entities++
					l.check(s, "an entity of table "+name, string(e))
				}
			}
		}
	}
	qp := env.QueueService.NewListQueuesPager(&azqueue.ListQueuesOptions{Include: azqueue.ListQueuesInclude{Metadata: true}})
	for qp.More() {
		page, err := qp.NextPage(ctx)
		if err != nil {
			t.Fatalf("listing queues: %v", err)
		}
		for _, q := range page.Queues {
			name := *q.Name
			for k, v := range q.Metadata {
				l.check(s, "metadata of queue "+name, k+"="+deref(v))
			}
			// Peeked, which changes nothing: other test binaries may share
			// the account. A peek shows a queue's first 32 visible
			// messages, which is every message the canary leaves.
			n := int32(32)
			resp, err := env.QueueService.NewQueueClient(name).PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: &n})
			if err != nil {
				if isNotFound(err) {
					continue
				}
				t.Fatalf("reading queue %s: %v", name, err)
			}
			for _, m := range resp.Messages {
				messages++
				l.checkBytes(s, "a message of queue "+name, []byte(deref(m.MessageText)))
			}
		}
	}
	cp := env.BlobService.NewListContainersPager(&azblob.ListContainersOptions{Include: azblob.ListContainersInclude{Metadata: true}})
	for cp.More() {
		page, err := cp.NextPage(ctx)
		if err != nil {
			t.Fatalf("listing containers: %v", err)
		}
		for _, c := range page.ContainerItems {
			name := *c.Name
			cc := env.BlobService.ServiceClient().NewContainerClient(name)
			bp := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Metadata: true}})
			for bp.More() {
				bpage, err := bp.NextPage(ctx)
				if err != nil {
					if isNotFound(err) {
						break
					}
					t.Fatalf("listing blobs of %s: %v", name, err)
				}
				for _, b := range bpage.Segment.BlobItems {
					blobs++
					where := "blob " + name + "/" + *b.Name
					l.check(s, where+" (name)", *b.Name)
					for k, v := range b.Metadata {
						l.check(s, where+" (metadata)", k+"="+deref(v))
					}
					resp, err := cc.NewBlobClient(*b.Name).DownloadStream(ctx, nil)
					if err != nil {
						if isNotFound(err) {
							continue
						}
						t.Fatalf("reading %s: %v", where, err)
					}
					data, err := io.ReadAll(resp.Body)
					_ = resp.Body.Close()
					if err != nil {
						t.Fatalf("reading %s: %v", where, err)
					}
					l.checkBytes(s, where, data)
				}
			}
		}
	}
	return tables, entities, messages, blobs
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func isNotFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusNotFound
}
