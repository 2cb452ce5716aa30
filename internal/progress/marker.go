package progress

import (
	"fmt"
	"math"
)

// Epoch numbers the micro-batches of a stream, from 0.
type Epoch uint64

// Watermark is an event time in milliseconds: no record with a timestamp at
// or below it is expected any more.
type Watermark = int64

const (
	// NoWatermark is the watermark of a stream without event time.
	NoWatermark Watermark = math.MinInt64
	// MaxWatermark is the watermark after the end of the input.
	MaxWatermark Watermark = math.MaxInt64
)

// Marker ends an epoch on one channel.
type Marker struct {
	Epoch     Epoch
	Watermark Watermark
	// Cut is when a source cut the epoch (Unix nanoseconds). After alignment
	// it is the earliest cut over the senders.
	Cut int64
	// Final marks the end of the sender's stream.
	Final bool
	// Idle says that the sender has had no record for a while (EventTime's
	// IdleAfter): receivers leave its watermark out of their minimum until
	// it sends a marker that is not idle. After alignment it says that
	// every sender that has not ended is idle.
	Idle bool
}

func (m Marker) String() string {
	f := ""
	if m.Final {
		f = " final"
	}
	if m.Idle {
		f += " idle"
	}
	return fmt.Sprintf("epoch %d wm %d%s", m.Epoch, m.Watermark, f)
}
