package entity

import "testing"

func TestPageTop(t *testing.T) {
	cases := []struct{ pageSize, limit, yielded, want int }{
		{0, 0, 0, 0},          // the service's default page
		{100, 0, 0, 100},      // page size alone
		{0, 250, 0, 250},      // limit alone
		{100, 250, 200, 50},   // what is left of the limit
		{0, 5000, 0, 1000},    // never above the service's maximum
		{0, 1 << 40, 0, 1000}, // nor anything that would overflow $top
	}
	for _, c := range cases {
		if got := pageTop(c.pageSize, c.limit, c.yielded); got != c.want {
			t.Errorf("pageTop(%d, %d, %d) = %d, want %d", c.pageSize, c.limit, c.yielded, got, c.want)
		}
	}
}
