package ysb_test

import (
	"math"
	"strings"
	"testing"

	"github.com/weirstream/weir/jobs/ysb"
)

// TestDecoderEventTimeRange: the file job's decoder takes event times up to
// 2^53 ms either side of 0 and rejects the rest as bad lines.
func TestDecoderEventTimeRange(t *testing.T) {
	evs, camp := spreadEvents(1, 5, 1)
	dec := ysb.Decoder(camp)
	for _, ts := range []int64{0, -1, 1 << 53, -1 << 53, 1<<53 + 1, -1<<53 - 1, math.MaxInt64, math.MinInt64, math.MaxInt64 - 3} {
		e := evs[0]
		e.EventTime = ts
		got, err := dec(string(e.AppendJSON(nil)))
		if ok := -1<<53 <= ts && ts <= 1<<53; ok {
			if err != nil || got.EventTime != ts {
				t.Errorf("event_time %d: decoded %d, %v; want it accepted", ts, got.EventTime, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), "is outside ±2^53 ms") {
			t.Errorf("event_time %d: error %v; want it rejected as outside ±2^53 ms", ts, err)
		}
	}
}
