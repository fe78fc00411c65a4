package integration

import (
	"fmt"
	"testing"
)

// pickShared chooses by the binary's name: the same name the same
// emulator, names spread over all of them, blank lines ignored.
func TestPickShared(t *testing.T) {
	const shared = "\n  cs-a \n\ncs-b\ncs-c\n"
	seen := map[string]int{}
	for i := range 60 {
		name := fmt.Sprintf("/tmp/go-build123/b%03d/pkg%d.test", i, i)
		got, err := pickShared(shared, name)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := pickShared(shared, "/elsewhere/"+fmt.Sprintf("pkg%d.test", i))
		if again != got {
			t.Errorf("%s: %q, then %q for the same binary name", name, got, again)
		}
		seen[got]++
	}
	for _, cs := range []string{"cs-a", "cs-b", "cs-c"} {
		if seen[cs] == 0 {
			t.Errorf("no binary of 60 got %q: %v", cs, seen)
		}
	}
	if len(seen) != 3 {
		t.Errorf("picked %v, want only the three listed", seen)
	}
	if _, err := pickShared(" \n\n", "x.test"); err == nil {
		t.Error("a list of blank lines was accepted")
	}
}
