package op

import (
	"fmt"

	"github.com/weirstream/weir/internal/dataflow"
)

// InnerJoin joins two keyed streams without windows: every record of
// either side is kept and paired with every record of the other side with
// the same key, whenever that arrived; f is called for each pair as soon
// as its second record arrives. With event time on both inputs, an
// output's event time is the later of the two records' (it may be behind
// the watermark, and so late for a window downstream, when the later
// record was itself behind it).
//
// Without StateTTL the state grows with the input and lives as long as
// the job. StateTTL(d, domain) bounds it: a record expires d after it
// arrived, in event time (once the watermark reaches its event time plus
// d; both inputs then need event time) or processing time (once the wall
// clock passes its arrival plus d); expired records are dropped at epoch
// ends and match nothing after that. State is kept by key group and saved
// in checkpoints; with KeyedStateIn it lives in the backend.
func InnerJoin[K comparable, L, R, O any](l KeyedStream[K, L], r KeyedStream[K, R], f func(key K, l L, r R) O, opts ...dataflow.Option) Stream[O] {
	return pairJoin(l, r, "innerJoin", f, opts, func(c dataflow.OpConfig, timed bool) (pairRule, error) {
		if err := c.TTL.Check(); err != nil {
			return pairRule{}, err
		}
		if !c.TTL.Set() {
			return pairRule{}, nil
		}
		proc := c.TTL.Domain == dataflow.ProcessingTime
		if !proc && !timed {
			return pairRule{}, fmt.Errorf("StateTTL(%v, %v) needs event time on both inputs; assign it with EventTime", c.TTL.After, c.TTL.Domain)
		}
		return pairRule{ttl: ms(c.TTL.After), proc: proc}, nil
	})
}
