package partition

import "time"

// Elastic decides how many map and reduce tasks an epoch gets, from the
// processing time of the epochs before it and the epoch interval (Spark
// Streaming's rule, as Prompt uses it): one task more when an epoch took
// more than Up of the interval, one fewer after Patience epochs in a row
// under Down, never outside [1, Max]. It is pure: the caller measures the
// time.
type Elastic struct {
	Max      int
	Up       float64 // default 0.9
	Down     float64 // default 0.3
	Patience int     // default 3

	tasks   int // 0 until the first call: then Max
	low     int // epochs in a row under Down
	changes int
}

// NewElastic starts with max tasks.
func NewElastic(max int) *Elastic {
	return &Elastic{Max: max, Up: 0.9, Down: 0.3, Patience: 3, tasks: max}
}

// Tasks is the number of tasks for the next epoch.
func (e *Elastic) Tasks() int {
	hi := max(e.Max, 1)
	if e.tasks <= 0 {
		return hi
	}
	return min(e.tasks, hi)
}

// Resize sets the most tasks to max, the instances the tasks run on
// now, and starts the count there again, as NewElastic does (the work
// was given more instances because it needs them, or fewer because it
// does not); it returns the count and whether it changed.
func (e *Elastic) Resize(max int) (tasks int, changed bool) {
	old := e.Tasks()
	e.Max, e.tasks, e.low = max, max, 0
	if n := e.Tasks(); n != old {
		e.changes++
		return n, true
	}
	return old, false
}

// Changes is how many times Tasks has changed.
func (e *Elastic) Changes() int { return e.changes }

// Observe records an epoch's processing time against the interval and
// returns the number of tasks for the next epoch and whether it changed.
// A non-positive interval leaves the count as it is.
func (e *Elastic) Observe(processing, interval time.Duration) (tasks int, changed bool) {
	old := e.Tasks()
	e.tasks = old
	if interval <= 0 {
		return old, false
	}
	up, down, patience := e.Up, e.Down, e.Patience
	if up == 0 {
		up = 0.9
	}
	if down == 0 {
		down = 0.3
	}
	if patience <= 0 {
		patience = 3
	}
	p, i := float64(processing), float64(interval)
	switch {
	case p > up*i:
		e.low = 0
		e.tasks = min(old+1, max(e.Max, 1))
	case p < down*i:
		e.low++
		if e.low >= patience {
			e.low = 0
			e.tasks = max(old-1, 1)
		}
	default:
		e.low = 0
	}
	if e.tasks != old {
		e.changes++
		return e.tasks, true
	}
	return old, false
}
