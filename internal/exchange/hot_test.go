package exchange

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// feed gives HotKeys one epoch of keys and returns how many records of
// each key it took as hot.
func feed(hk *HotKeys[string], keys []string) (hot map[string]int) {
	hot = map[string]int{}
	for _, k := range keys {
		h := uint64(len(k))*0x9e3779b97f4a7c15 ^ uint64(k[len(k)-1])
		if hk.Hot(h, k) {
			hot[k]++
		} else {
			hk.Sampled(h, k)
		}
	}
	hk.Roll()
	return hot
}

// A key with a quarter of the records becomes hot within its first epoch
// and is then hot from the first record of the next; keys of a uniform
// spread over many never are; a hot key that stops coming is dropped.
func TestHotKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	epoch := func(withHot bool) []string {
		var keys []string
		for i := range 40000 {
			if withHot && i%4 == 0 {
				keys = append(keys, "hot")
			} else {
				keys = append(keys, fmt.Sprintf("k%d", rng.IntN(5000)))
			}
		}
		return keys
	}
	hk := NewHotKeys[string](2)
	hk.Tasks = 2
	first := feed(hk, epoch(true))
	if first["hot"] < 9000 {
		t.Errorf("first epoch: %d of 10000 records of the hot key taken as hot; want most", first["hot"])
	}
	second := feed(hk, epoch(true))
	if second["hot"] != 10000 {
		t.Errorf("second epoch: %d of 10000 records of the hot key taken as hot; want all", second["hot"])
	}
	for k, n := range second {
		if k != "hot" {
			t.Errorf("second epoch: cold key %s taken as hot %d times", k, n)
		}
	}
	feed(hk, epoch(false))
	if third := feed(hk, epoch(false)); len(third) != 0 {
		t.Errorf("after an epoch without it, keys still hot: %v", third)
	}
	// An epoch without records changes nothing.
	feed(hk, nil)
	if hk.set.Len() != 0 {
		t.Errorf("%d hot keys after idle epochs; want 0", hk.set.Len())
	}
}
