package weir

import (
	"time"

	"github.com/weirstream/weir/internal/dataflow"
)

// IdleAfter is an option of EventTime (as Flink's
// WatermarkStrategy.withIdleness): an instance of the EventTime that has
// had no record for d of processing time is idle, and the operators
// downstream leave its watermark out of the minimum they take over their
// inputs, so that a source split with nothing to read (an empty
// partition, more instances than splits) stops holding back every window.
//
//   - Idleness is measured in processing time also with EpochRecords, and
//     checked at epoch ends: an instance goes idle between d and d plus an
//     epoch after its last record.
//   - An instance that sees a record again is active again from the end
//     of that epoch. The watermark downstream never goes back: records of
//     a split that was idle and resumes behind the watermark the others
//     advanced are late, counted and sent to Late() as any late record.
//   - When every input of an operator is idle, its watermark is the
//     highest of theirs (Flink's rule): it holds while the whole input is
//     quiet, and it is idle in turn for the operators after it.
//   - A window fed by such an EventTime is not pre-aggregated by its
//     senders (Partitioning's roundrobin becomes hash there), since a
//     sender's own watermark may be behind the window's.
//   - Checkpoints do not save idleness: a restored instance is active
//     until d passes again; windows and joins keep their own watermark,
//     so a restore moves no watermark back.
//
// d must be positive; other operators refuse the option.
func IdleAfter(d time.Duration) Option {
	return dataflow.IdleAfter(d)
}
