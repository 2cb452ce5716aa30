package weir

import (
	"time"

	"github.com/weirstream/weir/internal/dataflow"
)

// IdleAfterClock is IdleAfter with the clock now instead of time.Now.
func IdleAfterClock(d time.Duration, now func() time.Time) Option {
	return dataflow.IdleAfterClock(d, now)
}
