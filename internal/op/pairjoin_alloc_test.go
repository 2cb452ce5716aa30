//go:build !race

package op

import (
	"math"
	"sync"
	"testing"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
)

// An interval join in a steady state (each epoch's records expire the
// next epoch) allocates nothing per record or batch: the kept records'
// slices keep their capacity, and the results go out in a reused batch.
// Each round is an epoch of eight batches and a marker; the marker's
// expiry scan allocates its closure.
func TestAllocsIntervalJoin(t *testing.T) {
	out := &countPusher[int64]{}
	table := newKeyedTable[string, sides[allocRec, allocRec]]()
	j := &pairTask[string, allocRec, allocRec, int64]{outBuf: outBuf[int64]{size: 1024, out: out},
		rule: pairRule{interval: true, lower: -5, upper: 5}, f: func(_ string, l, r allocRec) int64 { return l.Val + r.Val },
		table: table, wm: progress.NoWatermark, next: math.MaxInt64}
	h, _ := partition.Hasher[string]()
	pool := &sync.Pool{}
	pool.New = func() any {
		return &dataflow.Kbatch[string, allocRec]{Recs: make([]dataflow.Krec[string, allocRec], 0, 1024), Pool: pool}
	}
	recs := allocBatch()
	var base int64
	feed := func(port int) {
		kb := pool.Get().(*dataflow.Kbatch[string, allocRec])
		kb.Recs = kb.Recs[:0]
		for _, r := range recs {
			kb.Recs = append(kb.Recs, dataflow.Krec[string, allocRec]{H: h(r.Ad), Ts: base + r.TS, K: r.Ad, V: r})
		}
		if err := j.Batch(port, kb); err != nil {
			t.Fatal(err)
		}
	}
	checkAllocs(t, "interval join", func() {
		base += 10_000
		for range 4 {
			feed(0)
			feed(1)
		}
		// The previous epoch's records expire; this epoch's stay.
		if err := j.Mark(progress.Marker{Watermark: base - 1}); err != nil {
			t.Fatal(err)
		}
	})
	if n := table.Len(); n != 64 || out.n == 0 {
		t.Fatalf("%d keys kept and %d pairs; want 64 and some", n, out.n)
	}
}
