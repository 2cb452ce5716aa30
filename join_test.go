package weir_test

import (
	"testing"

	"github.com/weirstream/weir"
)

// joined is the output of the joins under test: the key and the IDs of the
// left and right records.
type joined struct {
	Key  string
	L, R int
}

func joinRecs(key string, l, r rec) joined { return joined{key, l.ID, r.ID} }

// nestedLoopJoin is the model of a windowed inner join: for every window of
// every key, every pair of a left and a right record in it.
func nestedLoopJoin(left, right map[winKey][]rec) []joined {
	var out []joined
	for w, ls := range left {
		for _, l := range ls {
			for _, r := range right[w] {
				out = append(out, joinRecs(w.Key, l, r))
			}
		}
	}
	return out
}

func TestJoinAgainstModel(t *testing.T) {
	left := genRecs(31, 1500, 37, maxDelay)
	right := genRecs(32, 1100, 37, maxDelay)
	for _, wm := range winModels() {
		if wm.name == "session" {
			continue // not supported by Join: see TestBuildErrors
		}
		want := nestedLoopJoin(wm.assign(left), wm.assign(right))
		t.Run(wm.name, func(t *testing.T) {
			for _, c := range runCfgs() {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					j := c.job()
					l := weir.KeyBy(timedSource(c, j, "left", left), recKey)
					r := weir.KeyBy(timedSource(c, j, "right", right, weir.Parallelism(max(1, c.workers/2))), recKey)
					out := &bag[joined]{}
					weir.Sink(weir.Join(l, r, wm.spec(), joinRecs, wm.opts...), out)
					run(t, j)
					checkBag(t, out.out, want)
				})
			}
		})
	}
}
