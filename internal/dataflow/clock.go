package dataflow

import "time"

// ProcessingClock returns the job's processing-time clock in Unix
// milliseconds: the configured Clock, else the wall clock.
func (j *Graph) ProcessingClock() func() int64 {
	if c := j.Cfg.Clock; c != nil {
		return func() int64 { return c().UnixMilli() }
	}
	return func() int64 { return time.Now().UnixMilli() }
}
