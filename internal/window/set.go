package window

import "math"

// Win is one window of one key with its accumulator.
type Win[A any] struct {
	Start, End int64
	Acc        A
	// Fired: emitted at least once. Dirty: updated since it last fired.
	Fired, Dirty bool
}

// Set is the windows of one key. It is small (a handful of windows) and
// scanned linearly.
type Set[A any] struct {
	W []Win[A]
}

// Find returns the window [start, end), or nil.
func (s *Set[A]) Find(start, end int64) *Win[A] {
	for i := range s.W {
		if s.W[i].Start == start && s.W[i].End == end {
			return &s.W[i]
		}
	}
	return nil
}

// Get returns the window [start, end), creating it with acc init if absent.
func (s *Set[A]) Get(start, end int64, init func() A) *Win[A] {
	for i := range s.W {
		if s.W[i].Start == start && s.W[i].End == end {
			return &s.W[i]
		}
	}
	var a A
	if init != nil {
		a = init()
	}
	s.W = append(s.W, Win[A]{Start: start, End: end, Acc: a})
	return &s.W[len(s.W)-1]
}

// Touch notes that w was updated: a window that already fired must fire
// again.
func (w *Win[A]) Touch() {
	if w.Fired {
		w.Dirty = true
	}
}

// AddSession finds the session window for a record at ts with the given
// gap, merging every window that overlaps [ts, ts+gap) into one (their
// accumulators combined with merge). It returns the window to update, or nil
// if the record is late: its new session would be past cleanup at wm and it
// overlaps no window still kept. ts must be in the spec's Range, where
// ts+gap is exact; outside it the end saturates.
func (s *Set[A]) AddSession(ts, gap, lateness, wm int64, init func() A, merge func(a, b A) A) *Win[A] {
	start, end := ts, AddSat(ts, gap)
	first := -1
	for i := 0; i < len(s.W); i++ {
		w := &s.W[i]
		if w.Start < end && start < w.End {
			if first < 0 {
				first = i
				w.Start = min(w.Start, start)
				w.End = max(w.End, end)
				start, end = w.Start, w.End
				continue
			}
			f := &s.W[first]
			f.Acc = merge(f.Acc, w.Acc)
			f.Start = min(f.Start, w.Start)
			f.End = max(f.End, w.End)
			f.Fired = f.Fired || w.Fired
			start, end = f.Start, f.End
			s.W = append(s.W[:i], s.W[i+1:]...)
			i = first // the grown window may now overlap earlier ones
		}
	}
	if first >= 0 {
		w := &s.W[first]
		if w.Fired {
			w.Dirty = true
		}
		return w
	}
	if cleanup(end, lateness) <= wm {
		return nil
	}
	var a A
	if init != nil {
		a = init()
	}
	s.W = append(s.W, Win[A]{Start: start, End: end, Acc: a})
	return &s.W[len(s.W)-1]
}

// Fire emits every window due at watermark wm (not fired yet, or updated
// since it fired), drops every window past cleanup, and returns the
// watermark at which this set next needs attention (math.MaxInt64 if never).
func (s *Set[A]) Fire(wm, lateness int64, emit func(w *Win[A])) int64 {
	next := int64(math.MaxInt64)
	keep := s.W[:0]
	for i := range s.W {
		w := s.W[i]
		if fireTime(w.End) <= wm && (!w.Fired || w.Dirty) {
			emit(&w)
			w.Fired, w.Dirty = true, false
		}
		if cleanup(w.End, lateness) <= wm {
			continue
		}
		if w.Fired {
			next = min(next, cleanup(w.End, lateness))
		} else {
			next = min(next, fireTime(w.End))
		}
		keep = append(keep, w)
	}
	clear(s.W[len(keep):])
	s.W = keep
	return next
}

// Due is the watermark at which w needs attention next.
func Due[A any](w *Win[A], lateness int64) int64 {
	if w.Fired && !w.Dirty {
		return cleanup(w.End, lateness)
	}
	return fireTime(w.End)
}
