package wide

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
)

// Bookkeeping properties. Every row of properties carries the version of
// the write that last wrote it. The head row, 00, carries no user property:
// it names the current version, the number of rows and the version each row
// must carry (the manifest), and remembers the last historyLen versions, so
// that a writer whose reply was lost can tell whether its write was applied.
// Every write changes the head, and its ETag guards the transaction.
const (
	propVersion  = "WideVersion"  // every row: the token of the write that last wrote it
	propSeq      = "WideSeq"      // head: the sequence number of the current version (Int64)
	propBorn     = "WideBorn"     // head: the sequence number the entity was inserted with (Int64)
	propRows     = "WideRows"     // head: the number of rows of properties (Int32)
	propManifest = "WideManifest" // head: the rows' versions, row 01 first, space-separated
	propHistory  = "WideH"        // head: WideH00 … WideH15, the token of version seq in slot seq mod historyLen

	historyLen = 16
)

// A version token is a random UUID: unique to one write, so finding it
// stored proves that write was applied.
func newToken() string { return uuid.NewString() }

// firstSeq is the sequence number of an inserted entity: random, so that
// the versions of an entity deleted and inserted again do not repeat those
// of its earlier life. Each write adds one. It stays below 2^52, where
// every consumer of the JSON number is exact.
func firstSeq() int64 { return 1 + rand.Int64N(1<<52) }

func historyProp(seq int64) string { return propHistory + pad2(int(seq%historyLen)) }

func pad2(k int) string {
	return string([]byte{byte('0' + k/10), byte('0' + k%10)})
}

// head is what the head row says.
type head struct {
	etag    string
	ts      time.Time
	version string
	seq     int64
	born    int64
	tokens  []string // of rows 01 … n
	history [historyLen]string
}

// parseHead reads the head row; an error means it is not one (ErrCorrupt).
func parseHead(d *entity.DynamicEntity) (*head, error) {
	h := &head{etag: d.ETag, ts: d.Timestamp}
	version, okV := entity.Prop[string](d, propVersion)
	seq, okS := entity.Prop[int64](d, propSeq)
	born, okB := entity.Prop[int64](d, propBorn)
	n, okN := entity.Prop[int32](d, propRows)
	manifest, okM := entity.Prop[string](d, propManifest)
	if !okV || !okS || !okB || !okN || !okM {
		return nil, corrupt("the head lacks %s, %s, %s, %s or %s, or one has another type", propVersion, propSeq, propBorn, propRows, propManifest)
	}
	h.version, h.seq, h.born = version, seq, born
	if h.version == "" || h.seq < 1 || h.born < 1 || h.born > h.seq {
		return nil, corrupt("the head's version %q, sequence %d or first sequence %d is invalid", h.version, h.seq, h.born)
	}
	if n < 0 || n > MaxRows {
		return nil, corrupt("the head counts %d rows", n)
	}
	if n > 0 || manifest != "" {
		h.tokens = strings.Split(manifest, " ")
	}
	if len(h.tokens) != int(n) || slices.Contains(h.tokens, "") {
		return nil, corrupt("the head's manifest lists %d versions for %d rows", len(h.tokens), n)
	}
	for i := range historyLen {
		h.history[i], _ = entity.Prop[string](d, propHistory+pad2(i))
	}
	if h.history[h.seq%historyLen] != h.version {
		return nil, corrupt("the head's history does not hold its version")
	}
	return h, nil
}

// headRow is the head of a new version.
func headRow(pk, id, etag, token string, seq, born int64, tokens []string, insert bool) *entity.DynamicEntity {
	d := &entity.DynamicEntity{PartitionKey: pk, RowKey: rowKey(id, 0), ETag: etag}
	d.Set(propVersion, token).Set(propSeq, seq).Set(propRows, int32(len(tokens))).
		Set(propManifest, strings.Join(tokens, " ")).Set(historyProp(seq), token)
	if insert {
		d.Set(propBorn, born)
	}
	return d
}

// written is a write whose reply may have been lost.
type written struct {
	token  string
	seq    int64
	guard  string // the head's ETag the write is conditioned on; "" for an insert
	insert bool
}

type verdict uint8

const (
	applied    verdict = iota + 1
	notApplied         // and never will be: the head has moved on without it
	pending            // the head is as the write found it: it may yet arrive
	unknown            // its trace may have left the head's history
	overtaken          // the entity was deleted (and maybe inserted again) since: its history is gone with it
)

// outcome tells from the head as it is now (nil: there is none) whether w
// was applied. The head remembers the tokens of its last historyLen
// versions, so a write is applied exactly when its token is there or, for
// an insert, when the entity's first sequence number is the insert's.
//
// Otherwise the head must prove that the write was not applied: it is of
// the same life as the version the write replaced (inserted with a first
// sequence number at most the write's base, and at or past the write's
// sequence number, which exactly one write of that life takes) and recent
// enough that version w.seq is still in its history — then another write
// took that version, and the write's condition can never hold again.
//
// A head unchanged since the write read it leaves the write pending (it
// may yet arrive); a head of another life, or none, leaves it overtaken:
// the entity was deleted since, and the write may have been applied before
// the delete, with no trace left. Delete and insert again give a new
// random first sequence number, so the sequence numbers of two lives do
// not meet (two random 52-bit ranges of a few versions each).
func outcome(h *head, w written) verdict {
	if h == nil {
		if w.insert {
			return pending
		}
		return overtaken
	}
	for _, t := range h.history {
		if t == w.token {
			return applied
		}
	}
	switch {
	case w.insert && h.born == w.seq:
		return applied // its entity, changed more than historyLen times since
	case w.insert:
		return overtaken // another writer's entity: this insert refused, or applied and deleted before it
	case h.etag == w.guard:
		return pending
	case !sameLife(h, w.seq-1) || w.seq > h.seq:
		return overtaken
	case h.seq-w.seq >= historyLen:
		return unknown
	}
	return notApplied
}

// sameLife reports whether the version with sequence number seq belongs to
// the life of the entity whose head is h: between its first and its
// current sequence numbers.
func sameLife(h *head, seq int64) bool { return h.born <= seq && seq <= h.seq }

// ETag of a logical entity: the number of rows, the sequence number and the
// head's ETag, in the form "n;seq;etag". It is opaque to users; a write
// needs all three to replace or delete the version without reading it.
func formatETag(n int, seq int64, headETag string) string {
	return strconv.Itoa(n) + ";" + strconv.FormatInt(seq, 10) + ";" + headETag
}

// parseETag reverses formatETag. It accepts exactly what formatETag returns
// for 0 <= n <= MaxRows, seq >= 1 and a non-empty head ETag.
func parseETag(s string) (n int, seq int64, headETag string, err error) {
	ns, rest, ok1 := strings.Cut(s, ";")
	ss, headETag, ok2 := strings.Cut(rest, ";")
	n, errN := strconv.Atoi(ns)
	seq, errS := strconv.ParseInt(ss, 10, 64)
	if !ok1 || !ok2 || errN != nil || errS != nil || n < 0 || n > MaxRows || seq < 1 || headETag == "" ||
		strconv.Itoa(n) != ns || strconv.FormatInt(seq, 10) != ss {
		return 0, 0, "", &ETagError{ETag: s}
	}
	return n, seq, headETag, nil
}
