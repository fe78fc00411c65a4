package crypt

import (
	"bytes"
	"fmt"
	"testing"
)

func TestKeyCache(t *testing.T) {
	c := newKeyCache(64)
	g1, _ := newGCM(bytes.Repeat([]byte{1}, 32))
	g2, _ := newGCM(bytes.Repeat([]byte{2}, 32))
	c.put([]byte("a"), g1)
	if c.get([]byte("a")) != g1 {
		t.Fatal("a key just put was not found")
	}
	if c.get([]byte("b")) != nil || c.get([]byte("aa")) != nil || c.get(nil) != nil {
		t.Fatal("a key never put was found")
	}
	// A later key that maps to the same slot takes it over; nothing else
	// ever answers for a key.
	for i := range 1000 {
		k := []byte(fmt.Sprint("k", i))
		c.put(k, g2)
		if c.get(k) != g2 {
			t.Fatalf("key %s not found right after put", k)
		}
	}
	if g := c.get([]byte("a")); g != nil && g != g1 {
		t.Fatal("key a answered with another key's content key")
	}
	var none = newKeyCache(-1)
	none.put([]byte("a"), g1)
	if none != nil || none.get([]byte("a")) != nil {
		t.Error("a disabled cache kept a key")
	}
}
