package wtoken

import (
	"crypto/rand"
	"encoding/base64"
	"hash/fnv"
	"slices"
	"strings"
)

// Property is the name of the reserved property that holds the chain.
const Property = "TkWrite"

// MaxTokens is the most tokens a chain keeps.
const MaxTokens = 16

const (
	tokenLen = 8 // 48 bits in base64url
	rootLen  = 6 // 36 bits in base64url
	noRoot   = "......"
)

// New returns a fresh token: 8 base64url characters of 48 random bits.
func New() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Chain is the value of the TkWrite property.
type Chain struct {
	// Root is the hash of the ETag the oldest token's write was
	// conditional on, when that version had no chain; "" when unknown.
	Root string
	// Tokens are the writes' tokens, newest first.
	Tokens []string
}

// Parse reads a TkWrite value; ok is false for anything this package did
// not write.
func Parse(s string) (c Chain, ok bool) {
	if len(s) < rootLen || (len(s)-rootLen)%tokenLen != 0 || len(s) > rootLen+MaxTokens*tokenLen {
		return Chain{}, false
	}
	if root := s[:rootLen]; root != noRoot {
		if !isB64(root) {
			return Chain{}, false
		}
		c.Root = root
	}
	for i := rootLen; i < len(s); i += tokenLen {
		tok := s[i : i+tokenLen]
		if !isB64(tok) {
			return Chain{}, false
		}
		c.Tokens = append(c.Tokens, tok)
	}
	return c, true
}

func isB64(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// String is the stored form: the root (or "......") and the tokens.
func (c Chain) String() string {
	var b strings.Builder
	b.Grow(rootLen + len(c.Tokens)*tokenLen)
	if c.Root == "" {
		b.WriteString(noRoot)
	} else {
		b.WriteString(c.Root)
	}
	for _, t := range c.Tokens {
		b.WriteString(t)
	}
	return b.String()
}

// Base is what a writer knew of the version its write is conditional on.
type Base struct {
	// ETag is the version's ETag; "" for an insert (no version).
	ETag string
	// Chain is the version's chain, when it had one and the writer read it.
	Chain Chain
	// Known reports that the writer read the version's TkWrite (Chain is
	// then its chain, empty when it had none).
	Known bool
}

// Next returns the chain a write with token tok on base stores.
func Next(base Base, tok string) Chain {
	if base.ETag == "" || !base.Known {
		// An insert starts a chain; a writer that did not read the chain
		// starts one with no root, which proves only its own write.
		return Chain{Tokens: []string{tok}}
	}
	if len(base.Chain.Tokens) == 0 {
		return Chain{Root: RootOf(base.ETag), Tokens: []string{tok}}
	}
	c := Chain{Root: base.Chain.Root, Tokens: make([]string, 0, min(len(base.Chain.Tokens)+1, MaxTokens))}
	c.Tokens = append(c.Tokens, tok)
	c.Tokens = append(c.Tokens, base.Chain.Tokens[:min(len(base.Chain.Tokens), MaxTokens-1)]...)
	if len(base.Chain.Tokens) >= MaxTokens {
		c.Root = "" // the root's token is cut off
	}
	return c
}

// RootOf hashes an ETag into a root.
func RootOf(etag string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(etag))
	var b [8]byte
	s := h.Sum(b[:0])
	return base64.RawURLEncoding.EncodeToString(s[:6])[:rootLen]
}

// Verdict is what a read-back says of a write.
type Verdict uint8

const (
	Unknown    Verdict = iota // nothing proves either way
	Applied                   // the write's token is stored
	NotApplied                // another write won the version this one was conditional on
)

func (v Verdict) String() string {
	return [...]string{"unknown", "applied", "not applied"}[v]
}

// Judge says whether the write with token tok on base was applied, given
// the stored chain (has is false when the stored entity has no valid
// TkWrite).
func Judge(base Base, tok string, stored Chain, has bool) Verdict {
	if !has {
		return Unknown
	}
	if slices.Contains(stored.Tokens, tok) {
		return Applied
	}
	if base.ETag == "" || !base.Known {
		return Unknown
	}
	if len(base.Chain.Tokens) > 0 {
		// The write would have followed the token on top of its base.
		if slices.Contains(stored.Tokens, base.Chain.Tokens[0]) {
			return NotApplied
		}
		return Unknown
	}
	if stored.Root != "" && stored.Root == RootOf(base.ETag) && len(stored.Tokens) > 0 {
		return NotApplied // the chain's first write won the base
	}
	return Unknown
}
