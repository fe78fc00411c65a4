package crypt

import (
	"bytes"
	"testing"
)

func TestKeyCache(t *testing.T) {
	c := newKeyCache(2)
	gcms := make([]any, 3)
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	for i, k := range keys {
		g, err := newGCM(bytes.Repeat([]byte{byte(i)}, 32))
		if err != nil {
			t.Fatal(err)
		}
		gcms[i] = g
		c.put(k, g)
	}
	if c.get(keys[0]) != nil {
		t.Error("the oldest key was not forgotten")
	}
	for i := 1; i < 3; i++ {
		if g := c.get(keys[i]); g == nil || any(g) != gcms[i] {
			t.Errorf("key %s: %v", keys[i], g)
		}
	}
	if c.get([]byte("bb")) != nil || c.get(nil) != nil {
		t.Error("a key never put was found")
	}
	if len(c.idx) != 2 {
		t.Errorf("index holds %d entries, want 2", len(c.idx))
	}
	var none *keyCache = newKeyCache(-1)
	none.put(keys[0], nil)
	if none != nil || none.get(keys[0]) != nil {
		t.Error("a disabled cache kept a key")
	}
}
