package resolver

import (
	"bytes"
	"errors"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/jsonscan"
)

// peek reads the few top-level properties of an entity body that choose its
// type, without decoding the rest: a single forward pass of entity's
// scanner (internal/jsonscan) that stops as soon as it has what it was
// asked for. It checks the JSON only as far as it reads; the decoder that
// runs next checks the whole body.
//
// Strings are returned raw (between the quotes); esc says whether they hold
// escapes, which rawValue.text resolves.

type rawValue struct {
	b     []byte
	found bool
	str   bool // a JSON string; b is its content
	esc   bool // the string holds escape sequences
}

// text returns the value as a Go string; ok is false for a non-string or a
// malformed string.
func (r rawValue) text() (string, bool) {
	if !r.found || !r.str {
		return "", false
	}
	return jsonscan.StringOf(r.b, r.esc)
}

// valueOf is the rawValue of a scanned member.
func valueOf(p *jsonscan.Prop) rawValue {
	return rawValue{b: p.Val, found: true, str: p.Kind == jsonscan.String, esc: p.ValEsc}
}

// What peek looks for.
const (
	wantPK uint8 = 1 << iota
	wantRK
	wantETag
	wantTimestamp
	wantDisc
)

type head struct {
	pk, rk, etag, ts, disc rawValue
}

// errHave ends a scan that has found everything it was asked for.
var errHave = errors.New("resolver: peek has what it wants")

// peek scans body for the properties in want; disc names the discriminator
// property.
func peek(body []byte, want uint8, disc string) (head, error) {
	var h head
	sc := jsonscan.New(body)
	err := sc.Members(func(name []byte, esc bool) error {
		var p jsonscan.Prop
		if err := sc.Value(&p); err != nil {
			return err
		}
		key := name
		if esc {
			s, ok := jsonscan.Unescape(name)
			if !ok {
				return nil // not a name peek wants; the decoder refuses the body
			}
			key = []byte(s)
		}
		var slot *rawValue
		var bit uint8
		if want&wantDisc != 0 && string(key) == disc {
			slot, bit = &h.disc, wantDisc
		} else if want&^wantDisc != 0 {
			switch string(key) {
			case "PartitionKey":
				slot, bit = &h.pk, wantPK
			case "RowKey":
				slot, bit = &h.rk, wantRK
			case "odata.etag":
				slot, bit = &h.etag, wantETag
			case "Timestamp":
				slot, bit = &h.ts, wantTimestamp
			}
		}
		if slot != nil && want&bit != 0 {
			*slot = valueOf(&p)
			want &^= bit
			if want == 0 {
				return errHave
			}
		}
		return nil
	})
	if err == nil || err == errHave {
		return h, nil
	}
	if se, ok := errors.AsType[*jsonscan.SyntaxError](err); ok {
		return h, &entity.DecodeError{Offset: se.Offset, Reason: se.Reason}
	}
	return h, err
}

// find returns the value of the top-level property whose name, followed by
// a quote and a colon, is key (`EntityType":`), found with a substring
// search rather than a scan: much faster on bodies that hold it. ok is
// false when the search cannot decide — the name is absent, written with
// escapes or whitespace, or its value is malformed — and the caller then
// scans with peek. The key leaves out the opening quote because quotes are
// the commonest byte of JSON, which would make the search slow.
//
// A match is a property name when an unescaped quote precedes it: in valid
// JSON such a quote opens a string that ends right after the name and is
// followed by a colon, which only a name is. Entity bodies have no nested
// objects, so a name is top-level.
func find(body, key []byte) (v rawValue, ok bool) {
	from := 0
	for {
		i := bytes.Index(body[from:], key)
		if i < 0 {
			return rawValue{}, false
		}
		i += from
		if i > 0 && body[i-1] == '"' {
			n := 0
			for p := i - 2; p >= 0 && body[p] == '\\'; p-- {
				n++
			}
			if n%2 == 0 {
				sc := jsonscan.At(body, i+len(key))
				sc.WS()
				var p jsonscan.Prop
				if err := sc.Value(&p); err != nil {
					return rawValue{}, false
				}
				return valueOf(&p), true
			}
		}
		from = i + 1
	}
}

// quotedKey returns `name":`, the form find searches for.
func quotedKey(name string) []byte { return []byte(name + `":`) }

var rowKeyKey = quotedKey("RowKey")
