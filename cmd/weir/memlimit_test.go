package main

import "testing"

// The soft limit is three quarters of the lower of the machine's memory
// and the cgroup's limit, at most half the address-space limit.
func TestSoftLimit(t *testing.T) {
	const g = 1 << 30
	for _, c := range []struct {
		mem, cg, as uint64
		want        int64
	}{
		{0, 0, 0, 0},
		{24 * g, 0, 0, 18 * g},
		{24 * g, 8 * g, 0, 6 * g},
		{8 * g, 24 * g, 0, 6 * g},
		{24 * g, 0, 16 * g, 8 * g},
		{24 * g, 0, 40 * g, 18 * g},
		{0, 0, 16 * g, 8 * g},
		{0, 4 * g, 0, 3 * g},
	} {
		if got := softLimit(c.mem, c.cg, c.as); got != c.want {
			t.Errorf("softLimit(%d, %d, %d) = %d; want %d", c.mem, c.cg, c.as, got, c.want)
		}
	}
}
