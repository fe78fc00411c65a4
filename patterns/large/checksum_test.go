package large_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/large"
)

// With Config.Checksum ChecksumCRC32C the entity records each value's
// CRC-32C (a []byte in one Put Blob, a Stream in blocks): read back with
// a raw aztables client, then by Get and Open; a blob corrupted — one bit,
// one byte short, a byte more — is a *BlobError matching ErrBlobCorrupt,
// for Get and at the end of a Stream; a Table of either Checksum reads
// what the other wrote; and a value written again under CRC-32C gets a new
// blob, where SHA-256 keeps the stored one.
func TestChecksums(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig()
	cfg.Checksum = large.ChecksumCRC32C
	f := newFixture(t, cfg)
	e := stored(t, f)
	crc := func(b []byte) string {
		return fmt.Sprintf("%08x", crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	}
	refs := f.rawRefs(t)
	for prop, value := range map[string][]byte{"Photo": v1.photo, "Resume": []byte(v1.cv), "Video": v1.video} {
		r := refs["Sales/000123/"+prop]
		if r.CRC32C != crc(value) || r.SHA256 != "" || r.Size != int64(len(value)) {
			t.Errorf("%s is stored as %+v, want size %d and crc32c %s alone", prop, r, len(value), crc(value))
		}
	}
	if got := e.Video.Ref(); got.Checksum != large.ChecksumCRC32C || got.SHA256 != [32]byte{} || fmt.Sprintf("%08x", got.CRC32C) != crc(v1.video) {
		t.Errorf("the written Stream's Ref is %+v", got)
	}
	readsAs(t, f, false, v1)

	// A Table checking SHA-256 reads it, and writes what this one reads.
	sha := *f
	sha.cfg = testConfig()
	shaT := sha.on(t, f.env)
	readsAs(t, shaT, false, v1)
	w := v2.employee()
	w.ID = "000124"
	if err := shaT.emps.Insert(ctx, &w); err != nil {
		t.Fatal(err)
	}
	if r := f.rawRefs(t)["Sales/000124/Photo"]; len(r.SHA256) != 64 || r.CRC32C != "" {
		t.Errorf("the SHA-256 Table stored %+v", r)
	}
	if got, err := f.emps.Get(ctx, "Sales", "000124"); err != nil || same(got.Photo, v2.photo) != "" {
		t.Errorf("the CRC-32C Table reads the SHA-256 one's photo: %v %s", err, same(got.Photo, v2.photo))
	}

	// The same value written again: a new blob under CRC-32C, the stored
	// one under SHA-256.
	for _, c := range []struct {
		fx   *fixture
		id   string
		kept bool
	}{{f, "000123", false}, {shaT, "000124", true}} {
		before := f.rawRefs(t)["Sales/"+c.id+"/Photo"].Blob
		got, err := c.fx.emps.Get(ctx, "Sales", c.id)
		if err != nil {
			t.Fatal(err)
		}
		got.Name = "renamed"
		if err := c.fx.emps.Replace(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if after := f.rawRefs(t)["Sales/"+c.id+"/Photo"].Blob; (after == before) != c.kept {
			t.Errorf("%s: the photo's blob went from %s to %s; kept = %v, want %v", c.id, before, after, after == before, c.kept)
		}
	}
	f.settle(t)
	f.checkClean(t)

	// Corruption, found by the CRC-32C.
	photo := f.rawRefs(t)["Sales/000123/Photo"].Blob
	for name, tamper := range map[string]func([]byte) []byte{
		"one bit":   func(b []byte) []byte { c := bytes.Clone(b); c[len(c)/2] ^= 1; return c },
		"truncated": func(b []byte) []byte { return b[:len(b)-1] },
		"longer":    func(b []byte) []byte { return append(bytes.Clone(b), 0) },
	} {
		overwrite(t, f, photo, tamper(v1.photo))
		got, err := f.emps.Get(ctx, "Sales", "000123")
		var be *large.BlobError
		if !errors.Is(err, large.ErrBlobCorrupt) || !errors.As(err, &be) || be.Field != "Photo" || got.Photo != nil {
			t.Errorf("%s: Get = %d bytes, %v; want a *BlobError matching ErrBlobCorrupt for Photo", name, len(got.Photo), err)
		}
	}
	overwrite(t, f, photo, v1.photo)
	video := f.rawRefs(t)["Sales/000123/Video"].Blob
	bad := bytes.Clone(v1.video)
	bad[0] ^= 0x80
	overwrite(t, f, video, bad)
	got, err := f.emps.Get(ctx, "Sales", "000123")
	if err != nil || same(got.Photo, v1.photo) != "" {
		t.Fatalf("Get with the photo restored: %v %s", err, same(got.Photo, v1.photo))
	}
	r, err := got.Video.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n, err := io.Copy(io.Discard, r); !errors.Is(err, large.ErrBlobCorrupt) {
		t.Errorf("reading a corrupted video to the end: %d bytes, %v; want ErrBlobCorrupt", n, err)
	}
}

// A Config.Checksum that is not one of the constants is refused by New.
func TestUnknownChecksum(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testConfig())
	tbl, err := entity.NewTableFromService[Employee](env.TableService, f.table)
	if err != nil {
		t.Fatal(err)
	}
	_, err = large.New(tbl, f.cont, large.Config{Processor: f.proc, Checksum: large.ChecksumCRC32C + 1})
	var ce *large.ConfigError
	if !errors.As(err, &ce) || ce.Field != "Config.Checksum" || !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("New with Checksum 2 = %v, want a *ConfigError for Config.Checksum matching entity.ErrInvalid", err)
	}
}
