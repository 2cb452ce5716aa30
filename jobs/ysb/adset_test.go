package ysb

import (
	"fmt"
	"testing"

	"github.com/weirstream/weir/connector/gen"
)

func TestAdSetAgainstMap(t *testing.T) {
	_, ads := gen.YSBEvents(1, 7)
	c := FromAds(ads)
	c["short"] = "x"
	c["12345678"] = "y"
	s := newAdSet(c)
	probes := []string{"", "short", "shor", "12345678", "123456789", "1234567"}
	for _, a := range ads {
		probes = append(probes, a.AdID, a.AdID[:len(a.AdID)-1], a.AdID+"x", "0"+a.AdID[1:])
	}
	for i := 0; i < 1000; i++ {
		probes = append(probes, fmt.Sprintf("%08x-0000-0000-0000-000000000000", i*7919))
	}
	for _, p := range probes {
		_, want := c[p]
		if got := s.has(p); got != want {
			t.Errorf("has(%q) = %v; want %v", p, got, want)
		}
	}
}
