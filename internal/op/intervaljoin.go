package op

import (
	"errors"
	"fmt"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
)

// IntervalJoin joins two keyed streams by time: f is called for every
// pair of a left record l and a right record r with the same key whose
// event times satisfy l.ts+lower <= r.ts <= l.ts+upper (Flink's interval
// join), as soon as the second of the two arrives. The output's event
// time is the later of the two.
//
// Both inputs need event time, and lower must not be above upper (either
// may be negative). Each side's records are kept only while a record on
// time can still match them: a left record until the watermark reaches
// l.ts+upper, a right one until it reaches r.ts−lower. A record at or
// behind the watermark when it arrives is late: it is counted in
// Metrics().Late and dropped (its partners may be gone). State is kept
// by key group and saved in checkpoints; with KeyedStateIn it lives in
// the backend. StateTTL does not apply (the interval bounds the state)
// and is refused.
func IntervalJoin[K comparable, L, R, O any](l KeyedStream[K, L], r KeyedStream[K, R], lower, upper time.Duration, f func(key K, l L, r R) O, opts ...dataflow.Option) Stream[O] {
	return pairJoin(l, r, "intervalJoin", f, opts, func(c dataflow.OpConfig, timed bool) (pairRule, error) {
		switch {
		case !timed:
			return pairRule{}, errors.New("an interval join needs event time on both inputs; assign it with EventTime")
		case lower > upper:
			return pairRule{}, fmt.Errorf("lower bound %v is above upper bound %v", lower, upper)
		case c.TTL.Set():
			return pairRule{}, errors.New("StateTTL does not apply to an interval join, whose interval and watermark bound its state")
		}
		return pairRule{interval: true, lower: ms(lower), upper: ms(upper)}, nil
	})
}
