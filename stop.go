package weir

import "github.com/weirstream/weir/internal/engine"

// ErrStopped is what Run returns after a clean stop (Stop, StopOn). With
// checkpoints, the job stopped right after a checkpoint that every
// process completed (Metrics.StoppedAt), and the next run with the same
// checkpoint directory resumes from it: nothing is lost or repeated in
// exactly-once outputs, and windows are not flushed early. Without
// checkpoints, the job stopped where it was: what exactly-once outputs
// hold is partial, and nothing resumes it.
var ErrStopped = engine.ErrStopped

// StopOn makes the job stop cleanly, as Stop does, once c is closed or
// receives.
func StopOn(c <-chan struct{}) JobOption {
	return engine.StopOn(c)
}
