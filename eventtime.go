package weir

import (
	"time"

	"github.com/weirstream/weir/internal/op"
)

// EventTime assigns event times to the records of s and generates
// watermarks with a bounded out-of-orderness: at each epoch end, the
// watermark is the largest event time seen minus maxOutOfOrder (minus one
// millisecond, so that a record exactly maxOutOfOrder late is still on
// time). ts returns a record's event time in milliseconds.
//
// Each instance tracks its own maximum; downstream operators take the
// minimum over their inputs. An instance that has seen no record yet holds
// the watermark back until it sees one or its input ends; there is no
// idleness timeout, so a source split that stays empty (more instances than
// partitions, say) holds back every window until the input ends. Give
// EventTime the parallelism of its source: an instance fed by several
// source splits sees their maximum, and its watermark can run ahead of the
// slower splits.
//
// An event time must be one that every window downstream can hold (see
// WindowSpec.TimeRange; math.MinInt64 and math.MaxInt64 never are): a
// record with another fails the job, with an error that names the record,
// before its time reaches a watermark. Input that may hold such times is
// best checked where it is decoded, where a bad record can go to a
// dead-letter output.
func EventTime[T any](s Stream[T], ts func(T) int64, maxOutOfOrder time.Duration, opts ...Option) Stream[T] {
	return op.EventTime[T](s, ts, maxOutOfOrder, opts...)
}
