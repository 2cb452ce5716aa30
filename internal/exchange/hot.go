package exchange

import "github.com/weirstream/weir/internal/state"

// HotKeys is one sender's split of an epoch's keys into hot and cold:
// Prompt's frequency-aware view (a key is worth splitting over several
// tasks only when it is frequent) at the cost of a probe into a small
// table per record. The line is 1/(hotShare·Tasks) of the sender's
// records of the epoch so far. Cold keys are counted exactly for the
// epoch's first warmup records, then on a sample (Sampled); a key whose
// estimate reaches the line is hot from its next record on. Hot keys
// are counted exactly. At the epoch's end the next epoch starts with the
// hot keys still above half the line (so that a key near it does not
// flap) and the sampled keys above it; the others start cold again. An
// epoch without records changes nothing. The keys kept across epochs are
// few; string keys are cloned, so that they pin no input buffer.
type HotKeys[K comparable] struct {
	set, next *state.Table[K, int32] // hot key -> its records this epoch
	est       *state.Table[K, int32] // cold key -> its estimated records this epoch
	skip      int
	rng       uint64 // xorshift state of the gaps between samples
	seen      int    // records this epoch, hot and cold
	// Tasks is how many tasks share the epoch's records (at least 1).
	Tasks int
	// Cold counts, per receiver, the cold records the sender sent it
	// this epoch; the sender keeps it.
	Cold []int64
}

const (
	sampleEvery = 16
	hotShare    = 16
	minHot      = 2
	minCount    = 4
	warmup      = 1024
)

// NewHotKeys returns a sender's split, with no hot key yet.
func NewHotKeys[K comparable](receivers int) *HotKeys[K] {
	return &HotKeys[K]{set: state.NewLongTable[K, int32](), next: state.NewLongTable[K, int32](), est: state.NewTable[K, int32](0),
		skip: sampleEvery, rng: 0x9e3779b97f4a7c15, Tasks: 1, Cold: make([]int64, receivers)}
}

// Hot counts a record of key k (hashed h) and says whether k is hot. The
// caller passes a cold record to Sampled.
func (hk *HotKeys[K]) Hot(h uint64, k K) bool {
	hk.seen++
	if hk.set.Len() == 0 {
		return false
	}
	if n := hk.set.Get(h, k); n != nil {
		*n++
		return true
	}
	return false
}

// line is the records of the epoch so far a key needs to be hot.
func (hk *HotKeys[K]) line() int {
	return max(minHot, hk.seen/(max(hk.Tasks, 1)*hotShare))
}

// Sampled counts a cold record of key k (hashed h): every one of the
// epoch's first warmup records, then one in sampleEvery on average,
// weighing sampleEvery. A key whose estimate reaches the line (and at
// least minCount records, or two samples) is hot from its next record on.
func (hk *HotKeys[K]) Sampled(h uint64, k K) {
	if hk.seen <= warmup {
		e := hk.est.Upsert(h, k)
		if *e++; int(*e) >= max(hk.line(), minCount) {
			hk.set.Upsert(h, k)
		}
		return
	}
	if hk.skip--; hk.skip > 0 {
		return
	}
	// The gaps are random, 1 to 2·sampleEvery-1 records, so that input
	// with a period does not hide a key from the sample.
	hk.rng ^= hk.rng << 13
	hk.rng ^= hk.rng >> 7
	hk.rng ^= hk.rng << 17
	hk.skip = 1 + int(hk.rng%(2*sampleEvery-1))
	e := hk.est.Upsert(h, k)
	*e += sampleEvery
	if int(*e) >= max(hk.line(), 2*sampleEvery) {
		hk.set.Upsert(h, k)
	}
}

// Roll ends the epoch.
func (hk *HotKeys[K]) Roll() {
	if hk.seen == 0 {
		return
	}
	line := hk.line()
	hk.set.Range(func(h uint64, k K, n *int32) bool {
		if 2*int(*n) >= line {
			hk.next.Upsert(h, k)
		}
		return true
	})
	hk.est.Range(func(h uint64, k K, n *int32) bool {
		if int(*n) >= line {
			hk.next.Upsert(h, k)
		}
		return true
	})
	hk.est.Clear()
	hk.set, hk.next = hk.next, hk.set
	hk.next.Clear()
	hk.seen = 0
}
