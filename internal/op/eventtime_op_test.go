package op

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/progress"
)

// markLog is a terminal pusher that keeps the watermarks it is given.
type markLog struct{ wms []int64 }

func (m *markLog) Push(*dataflow.Batch[int64]) error { return nil }
func (m *markLog) Mark(mk progress.Marker) error {
	m.wms = append(m.wms, mk.Watermark)
	return nil
}

// opTime draws a time near an end of int64, near 0, or anywhere.
func opTime(r *rand.Rand) int64 {
	switch r.IntN(4) {
	case 0:
		return math.MinInt64 + r.Int64N(1<<20)
	case 1:
		return math.MaxInt64 - r.Int64N(1<<20)
	case 2:
		return r.Int64N(1<<20) - 1<<19
	}
	return int64(r.Uint64())
}

// TestEventTimeOpWatermarkAgainstModel feeds the operator random batches,
// some through a selection, with times near the ends of int64 and a held
// range of its own, and compares each watermark with a model in math/big:
// the maximum over the accepted records minus the bound minus one, below
// int64 meaning -inf. The watermark never decreases and never reaches +inf;
// a selected record outside the range fails the batch, naming it, and
// changes nothing; an unselected one is ignored.
func TestEventTimeOpWatermarkAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	for trial := range 500 {
		held := *dataflow.NewTimeRange()
		if r.IntN(2) == 0 {
			held = dataflow.TimeRange{Lo: math.MinInt64 + r.Int64N(1<<19), Hi: math.MaxInt64 - r.Int64N(1<<19)}
		}
		delay := []int64{0, 1, r.Int64N(1 << 43), math.MaxInt64 / 1_000_000}[r.IntN(4)]
		log := &markLog{}
		o := newEventTimeOp("ts", func(v int64) int64 { return v }, delay, held, dataflow.Pusher[int64](log))
		var maxTs *big.Int // nil: no record accepted yet
		prev := int64(progress.NoWatermark)
		for step := range 30 {
			v := make([]int64, 1+r.IntN(8))
			for i := range v {
				v[i] = opTime(r)
			}
			b := &dataflow.Batch[int64]{V: v}
			if r.IntN(2) == 0 {
				for i := range v {
					if r.IntN(2) == 0 {
						b.Sel = append(b.Sel, int32(i))
					}
				}
			}
			var firstBad *int64
			var bmaxTs *big.Int
			for j := range b.Len() {
				i := j
				if b.Sel != nil {
					i = int(b.Sel[j])
				}
				if !held.Holds(v[i]) && firstBad == nil {
					firstBad = &v[i]
				}
				if bmaxTs == nil || big.NewInt(v[i]).Cmp(bmaxTs) > 0 {
					bmaxTs = big.NewInt(v[i])
				}
			}
			err := o.Push(b)
			switch {
			case firstBad != nil:
				if err == nil || !strings.Contains(err.Error(), `EventTime "ts": event time `+big.NewInt(*firstBad).String()+" ") {
					t.Fatalf("trial %d step %d: push of %v (sel %v, range [%d, %d]) = %v; want the error for %d", trial, step, v, b.Sel, held.Lo, held.Hi, err, *firstBad)
				}
			case err != nil:
				t.Fatalf("trial %d step %d: push of %v (sel %v) = %v", trial, step, v, b.Sel, err)
			case bmaxTs != nil && (maxTs == nil || bmaxTs.Cmp(maxTs) > 0):
				maxTs = bmaxTs
			}
			if err := o.Mark(progress.Marker{Epoch: progress.Epoch(step)}); err != nil {
				t.Fatal(err)
			}
			want := int64(progress.NoWatermark)
			if maxTs != nil {
				exact := new(big.Int).Sub(maxTs, big.NewInt(delay+1))
				if exact.IsInt64() {
					want = max(prev, exact.Int64())
				} else {
					want = prev
				}
			}
			got := log.wms[len(log.wms)-1]
			if got != want || got < prev || got == progress.MaxWatermark {
				t.Fatalf("trial %d step %d: watermark %d after %d (max %v, bound %d); model %d", trial, step, got, prev, maxTs, delay, want)
			}
			prev = got
		}
		if err := o.Mark(progress.Marker{Final: true, Watermark: progress.MaxWatermark}); err != nil || log.wms[len(log.wms)-1] != progress.MaxWatermark {
			t.Fatalf("the final marker's watermark is %d, %v; want +inf", log.wms[len(log.wms)-1], err)
		}
	}
}
