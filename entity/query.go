package entity

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"iter"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
)

// MaxPageSize is the most entities the service returns in one page.
const MaxPageSize = 1000

// ErrInvalidToken reports a continuation token that is malformed, not in
// the one form QueryPage writes, changed, or made by a query of another
// table, filter or select. It matches ErrInvalid: the token is refused
// before any request.
var ErrInvalidToken = invalidArg("entity: invalid continuation token")

// Query describes a query over a table (design guide §2, §7).
type Query struct {
	// Filter selects entities; built with package filter, so every value is
	// escaped and typed. The empty Expr reads the whole table.
	Filter filter.Expr
	// Select names the properties to return ($select, server-side
	// projection); only those fields of T are filled. PartitionKey and RowKey
	// always come back. Empty means every property. A row read with Select
	// carries its ETag but not its other properties: write it back with
	// Merge, never Replace, which would store it without them.
	Select []string
	// PageSize is the most entities per request ($top), 1 to 1000; 0 means the
	// service's maximum. It limits a page, not the result.
	PageSize int
	// Limit is the most entities the whole query yields; 0 means no limit.
	Limit int
	// ContinueOnRowError lets a query go on past a row that cannot be
	// decoded into T (or, through package crypt, authenticated), so that
	// whoever can write one bad row cannot block every listing of its
	// partition. Such a row is always reported as a *RowError naming its
	// keys (matching ErrDecode, or crypt.ErrTampered, through Unwrap),
	// with T's zero value, never a partly filled one. By default the
	// first such error ends the sequence, as any error does; with
	// ContinueOnRowError the row's error is yielded and the rows after it
	// follow, the caller breaking when it wants. A failed row counts
	// toward Limit. A failure of the request itself (transport, the
	// service's answer, a response that cannot be read) still ends the
	// sequence. QueryPage reports such rows in Page.RowErrors instead of
	// failing. A Table[json.RawMessage] hands rows out undecoded, so none
	// fails there (TestQueryContinuesPastBadRows).
	ContinueOnRowError bool
}

// Plan tells which of the guide's four query kinds the query is, with the
// guide's warnings (no PartitionKey, `or` over RowKeys, …).
func (q Query) Plan() filter.Plan { return q.Filter.Plan() }

// Page is one page of a query: the entities of one service response (which
// may be empty) and the token that resumes after it.
type Page[T any] struct {
	Items []T
	// Next resumes the query after this page, in this process or another;
	// "" when the query is complete.
	Next string
	// RowErrors are the rows of this page that could not be decoded (or
	// authenticated), in the service's order, when the query has
	// ContinueOnRowError; they are not in Items. Without it such a row
	// makes QueryPage fail with its *RowError.
	RowErrors []*RowError
}

// compiled is a query checked against T and rendered for the wire.
type compiled struct {
	filter      *string
	selectStr   *string
	fingerprint uint64
}

func (t *Table[T]) compile(q Query) (compiled, error) {
	var c compiled
	if q.PageSize < 0 || q.PageSize > MaxPageSize {
		return c, &ValidationError{Rule: "page size", Limit: "0 to 1000", Value: strconv.Itoa(q.PageSize)}
	}
	if q.Limit < 0 {
		return c, &ValidationError{Rule: "limit", Limit: "0 (no limit) or more", Value: strconv.Itoa(q.Limit)}
	}
	h := fnv.New64a()
	h.Write([]byte(strings.ToLower(t.name))) // a token of another table is refused
	h.Write([]byte{0})
	if !q.Filter.IsEmpty() {
		f, err := q.Filter.Build()
		if err != nil {
			return c, err
		}
		if n := q.Filter.Comparisons(); n > filter.MaxComparisons {
			return c, &ValidationError{Rule: "filter comparisons", Limit: "at most 15 (the service refuses more in one $filter)", Value: strconv.Itoa(n)}
		}
		c.filter = &f
		h.Write([]byte(f))
	}
	h.Write([]byte{0})
	if len(q.Select) > 0 {
		for _, name := range q.Select {
			if !t.shape.selectable(name) {
				return c, &ValidationError{Property: name, Rule: "select", Limit: "a property of " + t.shape.goType().String(), Value: strconv.Quote(name)}
			}
		}
		// The keys are always asked for: Azurite, unlike the service,
		// leaves out what $select does not name.
		names := append([]string{"PartitionKey", "RowKey"}, q.Select...)
		if t.shape.hasTimestamp() {
			names = append(names, "Timestamp")
		}
		s := strings.Join(names, ",")
		c.selectStr = &s
		h.Write([]byte(s))
	}
	c.fingerprint = h.Sum64()
	return c, nil
}

// Query runs q and yields its entities in the service's order
// (PartitionKey, then RowKey), following continuation tokens — including
// those of empty pages — until the results or q.Limit run out. The first
// error is yielded and ends the sequence, except, with
// q.ContinueOnRowError, a row that cannot be decoded: its *RowError is
// yielded in its place and the sequence goes on.
func (t *Table[T]) Query(ctx context.Context, q Query) iter.Seq2[T, error] {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(T, error) bool) { yield(*new(T), err) }
	}
	t, q, err := t.bindQuery(ctx, "Query", q, nil, false)
	if err != nil {
		return failed[T](err)
	}
	return iterate(ctx, t, q, t.fetch)
}

// QueryPage reads one page of q, starting at token ("" for the first page).
// q.Limit, if set, caps this page (a limit across pages is the caller's to
// keep, since the pages may be read by different processes).
// The returned Page.Next, stored anywhere, resumes the same query later; it
// is refused with ErrInvalidToken by a query of another table, filter or
// select, and when changed in any byte (TestTokensOfAnotherTableOrChanged).
// A page may be empty and still have a Next. A continuation at an empty
// PartitionKey or RowKey is kept as such, so the next page starts exactly
// there.
func (t *Table[T]) QueryPage(ctx context.Context, q Query, token string) (Page[T], error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return Page[T]{}, err
	}
	t, q, err := t.bindQuery(ctx, "QueryPage", q, nil, false)
	if err != nil {
		return Page[T]{}, err
	}
	return page(ctx, t, q, token, t.fetch)
}

// pageTop is the $top of the next request: the page size, cut to what is
// left of the limit, never above the service's maximum (0: the service's
// default of 1,000).
func pageTop(pageSize, limit, yielded int) int {
	top := pageSize
	if limit > 0 {
		if left := limit - yielded; top == 0 || left < top {
			top = left
		}
	}
	return min(top, MaxPageSize)
}

// pageFetcher reads one page of at most top entities from cont. rowErrs
// is nil, or holds for each item the *RowError of a row that could not be
// decoded (the item is then the zero value), nil for the others.
type pageFetcher[E any] func(ctx context.Context, c compiled, top int, cont continuation) (items []E, rowErrs []error, next continuation, err error)

func iterate[T, E any](ctx context.Context, t *Table[T], q Query, fetch pageFetcher[E]) iter.Seq2[E, error] {
	return func(yield func(E, error) bool) {
		var zero E
		if err := t.ok(); err != nil {
			yield(zero, err)
			return
		}
		c, err := t.compile(q)
		if err != nil {
			yield(zero, err)
			return
		}
		var cont continuation
		yielded := 0
		for {
			top := pageTop(q.PageSize, q.Limit, yielded)
			items, rowErrs, next, err := fetch(ctx, c, top, cont)
			if err != nil {
				yield(zero, err)
				return
			}
			for i := range items {
				if rowErrs != nil && rowErrs[i] != nil {
					if !yield(zero, rowErrs[i]) || !q.ContinueOnRowError {
						return
					}
				} else if !yield(items[i], nil) {
					return
				}
				yielded++
				if q.Limit > 0 && yielded >= q.Limit {
					return
				}
			}
			if next.done() {
				return
			}
			cont = next
		}
	}
}

func page[T, E any](ctx context.Context, t *Table[T], q Query, token string, fetch pageFetcher[E]) (Page[E], error) {
	if err := t.ok(); err != nil {
		return Page[E]{}, err
	}
	c, err := t.compile(q)
	if err != nil {
		return Page[E]{}, err
	}
	cont, err := decodeToken(token, c.fingerprint)
	if err != nil {
		return Page[E]{}, err
	}
	items, rowErrs, next, err := fetch(ctx, c, pageTop(q.PageSize, q.Limit, 0), cont)
	if err != nil {
		return Page[E]{}, err
	}
	p := Page[E]{Items: items, Next: next.encode(c.fingerprint)}
	if rowErrs == nil {
		return p, nil
	}
	p.Items = make([]E, 0, len(items))
	for i := range items {
		switch re, _ := rowErrs[i].(*RowError); {
		case re == nil:
			p.Items = append(p.Items, items[i])
		case !q.ContinueOnRowError:
			return Page[E]{}, re
		default:
			p.RowErrors = append(p.RowErrors, re)
		}
	}
	return p, nil
}

// fetch reads one page and decodes it into T. A row that cannot be
// decoded is left T's zero value, with its *RowError.
func (t *Table[T]) fetch(ctx context.Context, c compiled, top int, cont continuation) ([]T, []error, continuation, error) {
	bodies, _, next, err := t.fetchRaw(ctx, c, top, cont)
	if err != nil {
		return nil, nil, next, err
	}
	items := make([]T, len(bodies))
	var rowErrs []error
	for i, b := range bodies {
		if err := t.shape.decode(b, reflect.ValueOf(&items[i]).Elem()); err != nil {
			var zero T
			items[i] = zero // fail closed: nothing of the row is handed out
			if rowErrs == nil {
				rowErrs = make([]error, len(bodies))
			}
			s := rawSystem(b)
			rowErrs[i] = &RowError{Op: "Query", Table: t.name, PartitionKey: s.PartitionKey, RowKey: s.RowKey, Err: err}
		}
	}
	return items, rowErrs, next, nil
}

// fetchRaw reads one page of entity bodies; none fails on its own. A
// failure is the Query's.
func (t *Table[T]) fetchRaw(ctx context.Context, c compiled, top int, cont continuation) ([][]byte, []error, continuation, error) {
	return t.readPage(ctx, c, top, cont, func(err error) error { return wrapErr("Query", t.name, err) })
}

// readPage is fetchRaw with the failure made by fail: the error of the
// call that reads the page.
func (t *Table[T]) readPage(ctx context.Context, c compiled, top int, cont continuation, fail func(error) error) ([][]byte, []error, continuation, error) {
	opts := &aztables.ListEntitiesOptions{
		Filter:           c.filter,
		Select:           c.selectStr,
		Format:           &t.readFormat,
		NextPartitionKey: cont.pk,
		NextRowKey:       cont.rk,
	}
	if top > 0 {
		n := int32(top)
		opts.Top = &n
	}
	var raw *http.Response
	resp, err := t.client.NewListEntitiesPager(opts).NextPage(policy.WithCaptureResponse(ctx, &raw))
	if err != nil {
		return nil, nil, continuation{}, fail(err)
	}
	if raw == nil {
		return resp.Entities, nil, continuation{pk: resp.NextPartitionKey, rk: resp.NextRowKey}, nil
	}
	next := continuationOf(raw.Header)
	body, err := runtime.Payload(raw)
	if err != nil {
		return nil, nil, continuation{}, fail(err)
	}
	bodies, err := entityArray(body, make([][]byte, 0, len(resp.Entities)))
	if err != nil {
		return nil, nil, continuation{}, fail(err)
	}
	return bodies, nil, next, nil
}

// continuation is the service's pair of continuation headers. A header
// that is present with an empty value is a continuation too: it is how the
// service (Azurite at least) names an empty PartitionKey or RowKey, and it
// is sent back as such (NextPartitionKey=). aztables drops empty headers,
// which would restart or end the query there, so they are read from the
// raw response.
type continuation struct{ pk, rk *string }

// Continuation headers of a query response.
const (
	headerNextPK = "x-ms-continuation-NextPartitionKey"
	headerNextRK = "x-ms-continuation-NextRowKey"
)

// continuationOf reads the continuation headers, keeping present-but-empty
// values.
func continuationOf(h http.Header) continuation {
	var c continuation
	if v := h.Values(headerNextPK); len(v) > 0 {
		c.pk = &v[0]
	}
	if v := h.Values(headerNextRK); len(v) > 0 {
		c.rk = &v[0]
	}
	return c
}

func (c continuation) done() bool { return c.pk == nil && c.rk == nil }

// Token layout, base64url without padding: version 2, flags (bit 0: a
// NextPartitionKey, bit 1: a NextRowKey), a check (8 bytes, big-endian:
// FNV-1a of the query's fingerprint — its table, filter and select — and
// of the continuation values), NextPartitionKey, 0x00, NextRowKey.
// Continuation values never hold U+0000. A token of another table or
// query, or changed in any byte, fails the check (TestTokensOfAnotherTableOrChanged).
// A continuation has exactly one token: decodeToken refuses any other
// spelling of it (base64 that skips CR and LF, or ends in non-zero bits),
// so a token read back is the token written (FuzzDecodeToken). Version 1
// tokens, whose check covered the query alone, are refused.
const tokenVersion = 2

// tokenCheck is a token's check of the query's fingerprint and the
// continuation values.
func tokenCheck(fingerprint uint64, pk, rk string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], fingerprint)
	h.Write(b[:])
	h.Write([]byte(pk))
	h.Write([]byte{0})
	h.Write([]byte(rk))
	return h.Sum64()
}

func (c continuation) encode(fingerprint uint64) string {
	if c.done() {
		return ""
	}
	var flags byte
	var pk, rk string
	if c.pk != nil {
		flags |= 1
		pk = *c.pk
	}
	if c.rk != nil {
		flags |= 2
		rk = *c.rk
	}
	b := make([]byte, 0, 11+len(pk)+len(rk))
	b = append(b, tokenVersion, flags)
	b = binary.BigEndian.AppendUint64(b, tokenCheck(fingerprint, pk, rk))
	b = append(b, pk...)
	b = append(b, 0)
	b = append(b, rk...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeToken(token string, fingerprint uint64) (continuation, error) {
	if token == "" {
		return continuation{}, nil
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(b) < 11 || b[0] != tokenVersion || b[1]&^3 != 0 {
		return continuation{}, ErrInvalidToken
	}
	pk, rk, ok := strings.Cut(string(b[10:]), "\x00")
	if !ok || strings.Contains(rk, "\x00") {
		return continuation{}, ErrInvalidToken
	}
	if binary.BigEndian.Uint64(b[2:10]) != tokenCheck(fingerprint, pk, rk) {
		return continuation{}, join(ErrInvalidToken, errors.New("the token belongs to a query of another table, filter or select, or was changed"))
	}
	// A part that is absent holds nothing: one continuation, one token.
	if (b[1]&1 == 0 && pk != "") || (b[1]&2 == 0 && rk != "") {
		return continuation{}, ErrInvalidToken
	}
	var c continuation
	if b[1]&1 != 0 {
		c.pk = &pk
	}
	if b[1]&2 != 0 {
		c.rk = &rk
	}
	if c.done() || c.encode(fingerprint) != token {
		// Strict base64 still skips CR and LF: only the canonical
		// spelling is a token.
		return continuation{}, ErrInvalidToken
	}
	return c, nil
}
