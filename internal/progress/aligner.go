package progress

// Aligner aligns the markers of several senders. It is not safe for
// concurrent use; it belongs to the goroutine of one operator instance.
type Aligner struct {
	next    []Epoch     // per sender: the epoch its next records belong to
	final   []bool      // per sender: sent its final marker
	idle    []bool      // per sender: its last marker was idle
	wm      []Watermark // per sender: watermark of its last marker
	cut     []int64     // per sender: cut time of its marker for the current epoch
	current Epoch       // the epoch being aligned
	live    int         // senders not final
	lastWm  Watermark
	done    bool
	// back holds, per sender, the epoch it takes part again from after
	// its final marker (JoinAfter), or 0.
	back []Epoch
}

// NewAligner returns an aligner for n senders, all starting in epoch 0.
func NewAligner(n int) *Aligner {
	a := &Aligner{
		next:   make([]Epoch, n),
		final:  make([]bool, n),
		idle:   make([]bool, n),
		wm:     make([]Watermark, n),
		cut:    make([]int64, n),
		live:   n,
		lastWm: NoWatermark,
	}
	for i := range a.wm {
		a.wm[i] = NoWatermark
	}
	return a
}

// Current is the epoch being aligned.
func (a *Aligner) Current() Epoch { return a.current }

// Done reports whether the final marker has been produced.
func (a *Aligner) Done() bool { return a.done }

// Ahead reports whether sender s has already ended the current epoch, so that
// what it sends now belongs to a later epoch and must be held back.
func (a *Aligner) Ahead(s int) bool {
	return a.final[s] || a.next[s] > a.current
}

// Mark records sender s's marker m. The caller must not pass a marker of a
// sender that is Ahead; hold it back with its records instead. A marker may
// end several epochs at once (a source that fell behind the clock ends all
// the epochs it missed with one marker): m.Epoch is then the last of them.
// If m completes the current epoch, Mark returns the aligned marker and
// true: it ends every epoch that all senders have ended, its watermark is
// the minimum over the senders (never below the previous one), its cut the
// earliest, and it is Final once every sender is final.
//
// A sender's watermark is its last marker's, which may be lower than its
// one before (a source instance that took over another's shares resumes
// at their watermark); the aligned one still never goes back.
//
// A sender whose last marker was Idle is left out of the minimum. When
// every sender that has not ended is idle, the watermark is the highest
// of theirs (as Flink's, which flushes the maximum once the last input
// goes idle; it is never below the previous one either) and the aligned
// marker is Idle itself, so that receivers further on leave it out in
// turn. Idleness changes no epoch: an idle sender still ends each one.
func (a *Aligner) Mark(s int, m Marker) (Marker, bool) {
	if a.Ahead(s) {
		panic("progress: marker from a sender that is ahead of the current epoch")
	}
	if m.Epoch < a.current {
		panic("progress: marker for an epoch that has already ended")
	}
	a.next[s] = m.Epoch + 1
	a.cut[s] = m.Cut
	a.idle[s] = m.Idle && !m.Final
	a.wm[s] = m.Watermark
	switch {
	case m.Final && a.back != nil && a.back[s] > m.Epoch:
		// It ends here and takes part again from back[s]: it counts as
		// having ended the epochs before, idle until its next marker.
		a.next[s], a.idle[s], a.wm[s], a.back[s] = a.back[s], true, NoWatermark, 0
	case m.Final:
		if a.back != nil {
			a.back[s] = 0
		}
		a.final[s] = true
		a.wm[s] = MaxWatermark
		a.live--
	}
	for s, n := range a.next {
		if !a.final[s] && n <= a.current {
			return Marker{}, false
		}
	}
	return a.complete(), true
}

// Absent makes sender s take no part until it joins (Join): it counts as
// a final sender. It is for senders that are absent from the start.
func (a *Aligner) Absent(s int) {
	if !a.final[s] {
		a.final[s], a.wm[s], a.idle[s] = true, MaxWatermark, false
		a.live--
	}
}

// Final says whether sender s is final: it sent its final marker, or is
// absent.
func (a *Aligner) Final(s int) bool { return a.final[s] }

// Join makes absent (or final) sender s take part from epoch e: the aligner waits
// for its marker that ends epoch e (it may end earlier ones too), and it
// is idle until its first marker, so it holds back no watermark before.
// It reports false, changing nothing, if e has begun here already
// (e < Current) or s is not absent.
func (a *Aligner) Join(s int, e Epoch) bool {
	if e < a.current || !a.final[s] || a.done {
		return false
	}
	a.final[s], a.idle[s], a.wm[s], a.next[s] = false, true, NoWatermark, e
	a.live++
	return true
}

// JoinAfter makes live sender s, whose final marker is still to come,
// take part again from epoch e after it: the aligner then counts it as
// having ended the epochs before e and waits for its marker that ends e
// (as Join does for a final one). It reports false, changing nothing,
// if s is final (use Join) or e is not after the current epoch.
func (a *Aligner) JoinAfter(s int, e Epoch) bool {
	if a.final[s] || e <= a.current || a.done {
		return false
	}
	if a.back == nil {
		a.back = make([]Epoch, len(a.next))
	}
	a.back[s] = e
	return true
}

func (a *Aligner) complete() Marker {
	last := lastEnded(a)
	out := Marker{Epoch: last, Final: a.live == 0}
	out.Watermark, out.Idle = a.watermark()
	for s := range a.wm {
		if a.cut[s] != 0 && (out.Cut == 0 || a.cut[s] < out.Cut) {
			out.Cut = a.cut[s]
		}
		if a.next[s] <= last+1 {
			a.cut[s] = 0 // a sender still ahead keeps its cut for later epochs
		}
	}
	if out.Watermark < a.lastWm {
		out.Watermark = a.lastWm
	}
	a.lastWm = out.Watermark
	a.current = last + 1
	a.done = out.Final
	return out
}

// watermark is the minimum over the senders that are not idle (final
// senders count with +inf) or, if every sender that has not ended is
// idle, the highest of theirs and true.
func (a *Aligner) watermark() (Watermark, bool) {
	low, high, active := MaxWatermark, NoWatermark, a.live == 0
	for s, w := range a.wm {
		if a.idle[s] {
			high = max(high, w)
			continue
		}
		active = active || !a.final[s]
		low = min(low, w)
	}
	if !active {
		return high, true
	}
	return low, false
}

// lastEnded is the last epoch every sender has ended: the lowest over the
// live senders, or the highest of all once every sender is final.
func lastEnded(a *Aligner) Epoch {
	low, high, live := Epoch(0), a.current, false
	for s, n := range a.next {
		if n == 0 {
			continue
		}
		high = max(high, n-1)
		if !a.final[s] && (!live || n-1 < low) {
			low, live = n-1, true
		}
	}
	if !live {
		return high
	}
	return low
}
