// Package window is the pure logic of event-time windows: which windows a
// timestamp belongs to, the windows of one key (merging sessions), and when
// a window fires and when its state is dropped. It has no clocks and no
// goroutines; the window operator (internal/op) drives it with the
// watermark of each completed epoch.
//
// Times are milliseconds. A window [Start, End) fires once the watermark
// reaches End-1 (no record at or below the watermark is expected any more).
// With allowed lateness L it is kept until the watermark reaches End-1+L;
// a record for it that arrives in between updates it and makes it fire again
// at the next epoch end. A record whose windows are all past End-1+L is late.
//
// math.MinInt64 and math.MaxInt64 are -inf and +inf. A spec holds the times
// in its Range, where window bounds are exact; the caller rejects any other
// time before it reaches a watermark or a window. Fire and cleanup times
// and watermarks saturate at the infinities instead of wrapping (see
// AddSat, Watermark).
//
//	s := window.Spec{Kind: window.Tumbling, Size: 10_000}
//	s.Assign(12_345, func(start, end int64) { /* [10000, 20000) */ })
//
// Invariants: a key's Set never holds two windows with the same bounds, nor
// (for sessions) two overlapping windows; Fire emits each window at most
// once per update and drops it only after End-1+L <= watermark; for a ts in
// Range, Assign gives exactly the windows with Start <= ts < End.
package window
