package window

import (
	"fmt"
	"math"
	"time"
)

// Kind is a kind of window.
type Kind int

const (
	Tumbling Kind = iota
	Sliding
	Session
	// Global is one window per key over all time; it fires at the end of
	// the input.
	Global
)

// Spec describes how records are grouped into windows.
type Spec struct {
	Kind     Kind
	Size     int64 // Tumbling, Sliding
	Slide    int64 // Sliding
	Gap      int64 // Session
	Lateness int64
}

// GlobalStart and GlobalEnd bound the global window.
const (
	GlobalStart int64 = math.MinInt64
	GlobalEnd   int64 = math.MaxInt64
)

// Validate reports a spec that cannot work.
func (s Spec) Validate() error {
	switch s.Kind {
	case Tumbling:
		if s.Size <= 0 {
			return fmt.Errorf("window: tumbling size %dms must be at least 1ms", s.Size)
		}
	case Sliding:
		if s.Size <= 0 || s.Slide <= 0 {
			return fmt.Errorf("window: sliding size %dms and slide %dms must be at least 1ms", s.Size, s.Slide)
		}
		if s.Slide > s.Size {
			return fmt.Errorf("window: sliding slide %dms is longer than size %dms, which leaves records in no window", s.Slide, s.Size)
		}
	case Session:
		if s.Gap <= 0 {
			return fmt.Errorf("window: session gap %dms must be at least 1ms", s.Gap)
		}
	case Global:
	default:
		return fmt.Errorf("window: unknown kind %d", s.Kind)
	}
	if s.Lateness < 0 {
		return fmt.Errorf("window: allowed lateness %dms is negative", s.Lateness)
	}
	return nil
}

// NeedsTime reports whether the spec groups by event time.
func (s Spec) NeedsTime() bool { return s.Kind != Global }

func (s Spec) String() string {
	d := func(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }
	switch s.Kind {
	case Tumbling:
		return "tumbling " + d(s.Size)
	case Sliding:
		return "sliding " + d(s.Size) + " every " + d(s.Slide)
	case Session:
		return "session gap " + d(s.Gap)
	}
	return "global"
}

// floorDiv rounds toward minus infinity, so negative times work.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// Assign calls f with the bounds of every window a record at ts belongs to,
// latest start first. Sessions are not assigned here: see Set.AddSession.
// Only windows whose bounds are exact int64s are passed to f, so for a ts
// outside Range some of its windows are missing: callers check ValidTime.
func (s Spec) Assign(ts int64, f func(start, end int64)) {
	switch s.Kind {
	case Tumbling:
		if start, ok := floorTo(ts, s.Size); ok && start <= math.MaxInt64-s.Size {
			f(start, start+s.Size)
		}
	case Sliding:
		// Windows start at ts-off for off = ts mod slide, +slide, ...,
		// while off < size. Offsets, unlike starts, cannot overflow.
		for off := mod(ts, s.Slide); ; off += s.Slide {
			if ts >= math.MinInt64+off {
				if start := ts - off; start <= math.MaxInt64-s.Size {
					f(start, start+s.Size)
				}
			}
			if off >= s.Size-s.Slide {
				break
			}
		}
	case Global:
		f(GlobalStart, GlobalEnd)
	}
}

// Spanned bounds the number of windows that records with times in
// [lo, hi] can fall in: exact for tumbling windows, at most size/slide
// more for sliding ones, 1 for the global window, and 0 for sessions
// (their windows depend on the records). It saturates at math.MaxInt64.
func (s Spec) Spanned(lo, hi int64) int64 {
	switch s.Kind {
	case Tumbling:
		return AddSat(SubSat(floorDiv(hi, s.Size), floorDiv(lo, s.Size)), 1)
	case Sliding:
		return AddSat(SubSat(floorDiv(hi, s.Slide), floorDiv(lo, s.Slide)), (s.Size-1)/s.Slide+1)
	case Global:
		return 1
	}
	return 0
}

// Late reports whether a window ending at end accepts no more records at
// watermark wm.
func (s Spec) Late(end, wm int64) bool {
	return cleanup(end, s.Lateness) <= wm
}

// fireTime is when a window is due: the watermark it needs.
func fireTime(end int64) int64 { return SubSat(end, 1) }

// cleanup is when a window's state is dropped, saturating at
// math.MaxInt64 (+inf: at the end of the input).
func cleanup(end, lateness int64) int64 { return AddSat(fireTime(end), lateness) }

// TumblingCache remembers the last tumbling window found, so that records
// in time order skip the division that finds their window.
type TumblingCache struct {
	start, end int64
	ok         bool
}

// Window returns the bounds of the tumbling window of ts for size; ok is
// false if they are not exact int64s (ts is outside the spec's Range).
func (c *TumblingCache) Window(ts, size int64) (start, end int64, ok bool) {
	if c.ok && ts >= c.start && ts < c.end {
		return c.start, c.end, true
	}
	start, ok = floorTo(ts, size)
	if !ok || start > math.MaxInt64-size {
		return 0, 0, false
	}
	c.start, c.end, c.ok = start, start+size, true
	return start, start + size, true
}
