package crypt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
)

// plaintexts are the values of personValue's encrypted properties, and of
// the plaintext entities a re-encrypting rotation moves: none may be
// stored in clear once the rotation wrote the entity.
var plaintexts = []string{"Jonathan", "Jones", "jonesj@contoso.com", "Plainfirst", "plain@contoso.com"}

// TestRotateCrashAtEveryRequest kills Rotate before each of its requests
// is sent, and once the service has executed it (crashtest.EveryStep),
// then resumes with a fresh Table — fresh process state: no cache, only
// the last checkpoint token the dead rotation stored — and rotates the
// rest. In each mode: rewrapping 6 entities over 2 pages (with a content
// key per entity, and with 2 content keys shared by 3 entities each), and
// re-encrypting 4 encrypted and 2 plaintext entities (ReadPlaintext). At
// any crash point every entity is still there and reads under the old
// and new keys together, and no entity the rotation wrote holds a
// plaintext. In the end, read raw: every entity is under the new key
// alone and reads as written; a rewrapped entity's ciphertext is the one
// it had before (its content key was rewrapped once, not the data
// encrypted again); the resumed rotation fails on nothing, and a second
// full rotation finds every entity current.
func TestRotateCrashAtEveryRequest(t *testing.T) {
	t.Parallel()
	oldKey, newKey := newLocalKey(t, "kek-old", 1), newLocalKey(t, "kek-new", 2)
	for _, v := range []struct {
		name      string
		reencrypt bool
		shared    int // Config.ContentKeyWrites of the writes and the rotation
	}{{"rewrap", false, 0}, {"reencrypt", true, 0}, {"rewrap-shared", false, 3}} {
		reencrypt := v.reencrypt
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			n := crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
				ctx := t.Context()
				ct, raw := onAzurite[person](t, env, crypt.Config{Key: oldKey, ContentKeyWrites: v.shared})
				tableName := ct.Name()
				encrypted := 6
				if reencrypt {
					encrypted = 4
				}
				var rks []string
				for i := range encrypted {
					e := personValue(fmt.Sprintf("%03d", i*10))
					if err := ct.Insert(ctx, &e); err != nil {
						t.Fatal(err)
					}
					rks = append(rks, e.RowKey)
				}
				if reencrypt {
					for _, rk := range []string{"005plain", "025plain"} {
						b := fmt.Sprintf(`{"PartitionKey":"Sales","RowKey":%q,"First":"Plainfirst","Last":"Plainlast","Email":"plain@contoso.com","Level":3,"Dept":"Sales"}`, rk)
						if _, err := raw.AddEntity(ctx, []byte(b), nil); err != nil {
							t.Fatal(err)
						}
						rks = append(rks, rk)
					}
				}
				// The ciphertexts before the rotation.
				before := map[string]string{}
				for _, rk := range rks {
					if s, ok := rawEntity(t, raw, "Sales", rk)["First"].(string); ok {
						before[rk] = s
					}
				}
				cfg := crypt.Config{Key: crypt.Keyring(newKey, oldKey), ReadPlaintext: reencrypt, ContentKeyWrites: v.shared}
				opts := func(from string, checkpoint func(string) error) crypt.RotateOptions {
					return crypt.RotateOptions{From: from, PageSize: 4, Reencrypt: reencrypt, Checkpoint: checkpoint}
				}
				saved := "" // what the rotating process stored: its last checkpoint
				var resumed crypt.RotateResult
				return crashtest.Run{
					Work: func(ctx context.Context, kenv *integration.Env) error {
						rt := cryptOver[person](t, kenv.TableService.NewClient(tableName), tableName, cfg)
						_, err := rt.Rotate(ctx, opts("", func(next string) error { saved = next; return nil }))
						return err
					},
					Crashed: func(t *testing.T, passed int) {
						readers := cryptOver[person](t, raw, tableName, cfg)
						bodies := rawBodies(t, raw)
						if len(bodies) != len(rks) {
							t.Errorf("after %d requests %d entities are stored, want %d", passed, len(bodies), len(rks))
						}
						for _, b := range bodies {
							m := parseBody(t, b)
							rk := m["RowKey"].(string)
							if p, err := readers.Get(t.Context(), "Sales", rk); err != nil || p.Email != "jonesj@contoso.com" && p.Email != "plain@contoso.com" {
								t.Errorf("after %d requests %s reads %+v, %v", passed, rk, p, err)
							}
							if _, isPlain := m[crypt.MetadataProperty]; !isPlain {
								continue // a plaintext entity not moved yet
							}
							for _, s := range plaintexts {
								if bytes.Contains(b, []byte(s)) {
									t.Errorf("after %d requests %s stores %q in clear", passed, rk, s)
								}
							}
						}
					},
					Recover: func(ctx context.Context) error {
						fresh := cryptOver[person](t, raw, tableName, cfg)
						var err error
						resumed, err = fresh.Rotate(ctx, opts(saved, nil))
						return err
					},
					Check: func(t *testing.T) {
						ctx := t.Context()
						if len(resumed.Failed) != 0 || resumed.Next != "" || resumed.Skipped != 0 {
							t.Errorf("the resumed rotation: %+v", resumed)
						}
						if !reencrypt && resumed.Rewrapped+resumed.Current != resumed.Scanned {
							t.Errorf("the resumed rotation neither rewrapped nor found current some entities: %+v", resumed)
						}
						onlyNew := cryptOver[person](t, raw, tableName, crypt.Config{Key: newKey})
						bodies := rawBodies(t, raw)
						if len(bodies) != len(rks) {
							t.Errorf("%d entities stored, want %d", len(bodies), len(rks))
						}
						for _, b := range bodies {
							m := parseBody(t, b)
							rk := m["RowKey"].(string)
							meta, ok := m[crypt.MetadataProperty].(string)
							if !ok {
								t.Errorf("%s is not encrypted: %s", rk, b)
								continue
							}
							if env := m.binary(t, crypt.MetadataProperty); !bytes.Contains(env, []byte("kek-new")) || bytes.Contains(env, []byte("kek-old")) {
								t.Errorf("%s is not under the new key alone: %q", rk, meta)
							}
							for _, s := range plaintexts {
								if bytes.Contains(b, []byte(s)) {
									t.Errorf("%s stores %q in clear", rk, s)
								}
							}
							p, err := onlyNew.Get(ctx, "Sales", rk)
							want := "jonesj@contoso.com"
							if strings.HasSuffix(rk, "plain") {
								want = "plain@contoso.com"
							}
							if err != nil || p.Email != want || p.Level != 3 {
								t.Errorf("%s under the new key alone: %+v, %v", rk, p, err)
							}
							if !reencrypt && m["First"] != before[rk] {
								t.Errorf("%s: its data was encrypted again, not its content key rewrapped", rk)
							}
						}
						again, err := onlyNew.Rotate(ctx, crypt.RotateOptions{PageSize: 4})
						if err != nil || again.Current != len(rks) || again.Rewrapped != 0 {
							t.Errorf("a second rotation: %+v, %v", again, err)
						}
					},
				}
			}})
			// Rewrap: 2 pages and 6 merges; re-encrypt: 2 pages, 6 reads
			// and 6 replaces.
			if want := map[bool]int{false: 8, true: 14}[reencrypt]; n < want {
				t.Errorf("the rotation made %d requests, want at least %d", n, want)
			}
		})
	}
}

// TestSubmitOneBadEntityAmongMany: a transaction of 10 inserts in which
// one entity fits the service's limits in clear but not once encrypted (a
// String of 30,000 three-byte characters is 90 KB of ciphertext, over the
// 64 KiB of a Binary). A transaction is atomic, so the contract is that
// the whole Submit is refused before any request, with an
// *entity.BatchError that gives the bad operation's index and names its
// keys and property, and matches entity.ErrInvalid; nothing is written
// (the table is read raw). The nine others, submitted again without it,
// are stored and authentic.
func TestSubmitOneBadEntityAmongMany(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	inj := faults.New(faults.Config{})
	ct, raw := onAzurite[person](t, env.With(inj), crypt.Config{})
	var es []person
	for i := range 10 {
		es = append(es, personValue(fmt.Sprintf("%03d", i)))
	}
	es[6].First = strings.Repeat("€", 30000)
	if _, err := entity.Marshal(&personPlain{PartitionKey: "p", RowKey: "r", First: es[6].First}); err != nil {
		t.Fatalf("the bad entity does not even fit in clear: %v", err)
	}
	b := ct.NewBatch()
	for i := range es {
		b.Insert(&es[i])
	}
	sent := inj.Stats().Requests
	_, err := ct.Submit(ctx, b)
	var be *entity.BatchError
	var ve *entity.ValidationError
	switch {
	case !errors.As(err, &be) || be.Index != 6:
		t.Fatalf("Submit: %v, want a *entity.BatchError at operation 6", err)
	case !errors.Is(err, entity.ErrInvalid):
		t.Errorf("%v does not match entity.ErrInvalid", err)
	case !errors.As(err, &ve) || ve.Property != "First" || ve.Rule != entity.RuleBinaryLength:
		t.Errorf("%v does not name the property and the rule", err)
	}
	if msg := err.Error(); !strings.Contains(msg, `"006"`) || !strings.Contains(msg, `"Sales"`) {
		t.Errorf("the error does not name the bad entity's keys: %q", msg)
	}
	if n := inj.Stats().Requests - sent; n != 0 {
		t.Errorf("the refused Submit made %d requests", n)
	}
	if bodies := rawBodies(t, raw); len(bodies) != 0 {
		t.Fatalf("the refused transaction wrote %d entities", len(bodies))
	}
	good := ct.NewBatch()
	for i := range es {
		if i != 6 {
			good.Insert(&es[i])
		}
	}
	if _, err := ct.Submit(ctx, good); err != nil {
		t.Fatal(err)
	}
	bodies := rawBodies(t, raw)
	if len(bodies) != 9 {
		t.Fatalf("%d entities stored, want 9", len(bodies))
	}
	for _, body := range bodies {
		m := parseBody(t, body)
		rk := m["RowKey"].(string)
		for _, s := range plaintexts {
			if bytes.Contains(body, []byte(s)) {
				t.Errorf("%s stores %q in clear", rk, s)
			}
		}
		if p, err := ct.Get(ctx, "Sales", rk); err != nil || rk == "006" || p.First != "Jonathan" {
			t.Errorf("%s: %+v %v", rk, p, err)
		}
	}
}
