package op

import (
	"testing"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/progress"
)

// idleLog is a terminal pusher that keeps the markers it is given.
type idleLog struct{ ms []progress.Marker }

func (l *idleLog) Push(*dataflow.Batch[int64]) error { return nil }
func (l *idleLog) Mark(m progress.Marker) error {
	l.ms = append(l.ms, m)
	return nil
}

// An instance is idle once After has passed since the last epoch end that
// followed a record (or since it started), active again from the end of an
// epoch with a record, never idle at its final marker, and never idle
// without the option; its watermark is its own either way.
func TestEventTimeOpIdle(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	type step struct {
		advance time.Duration
		recs    []int64 // pushed before the marker (an empty batch if empty but not nil)
		final   bool
		idle    bool  // want
		wm      int64 // want
	}
	no := progress.NoWatermark
	for _, tc := range []struct {
		name  string
		after time.Duration // 0: no option
		steps []step
	}{
		{"never a record", 100 * time.Millisecond, []step{
			{50 * time.Millisecond, nil, false, false, no},
			{49 * time.Millisecond, nil, false, false, no},
			{1 * time.Millisecond, nil, false, true, no},
			{time.Hour, nil, true, false, progress.MaxWatermark},
		}},
		{"quiet, back, quiet", 100 * time.Millisecond, []step{
			{10 * time.Millisecond, []int64{500}, false, false, 499},
			{99 * time.Millisecond, nil, false, false, 499},
			{1 * time.Millisecond, nil, false, true, 499},
			{time.Minute, []int64{}, false, true, 499}, // an empty batch is no record
			{time.Minute, []int64{200}, false, false, 499},
			{100 * time.Millisecond, nil, false, true, 499},
			{0, []int64{900}, false, false, 899},
		}},
		{"without the option", 0, []step{
			{time.Hour, nil, false, false, no},
			{time.Hour, []int64{7}, false, false, 6},
			{time.Hour, nil, false, false, 6},
		}},
	} {
		var idle dataflow.Idleness
		if tc.after > 0 {
			var c dataflow.OpConfig
			dataflow.IdleAfterClock(tc.after, clock)(&c)
			idle = c.Idle
		}
		log := &idleLog{}
		o := newEventTimeOp("ts", func(v int64) int64 { return v }, 0, *dataflow.NewTimeRange(), dataflow.Pusher[int64](log))
		o.idle = newIdleClock(idle)
		for i, st := range tc.steps {
			now = now.Add(st.advance)
			if st.recs != nil {
				if err := o.Push(&dataflow.Batch[int64]{V: st.recs}); err != nil {
					t.Fatal(err)
				}
			}
			m := progress.Marker{Epoch: progress.Epoch(i), Watermark: no, Final: st.final}
			if st.final {
				m.Watermark = progress.MaxWatermark
			}
			if err := o.Mark(m); err != nil {
				t.Fatal(err)
			}
			got := log.ms[len(log.ms)-1]
			if got.Idle != st.idle || got.Watermark != st.wm {
				t.Errorf("%s: step %d: marker %v; want wm %d idle %v", tc.name, i, got, st.wm, st.idle)
			}
		}
	}
}
