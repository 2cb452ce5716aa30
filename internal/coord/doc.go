// Package coord is a process's checkpoint coordinator as a pure state
// machine, in the manner of etcd raft's RawNode: events go in with Step,
// actions come out of Ready, and Advance says they were taken. It reads
// no clock, starts no goroutines, opens no files or sockets and takes no
// locks; its caller does the store's I/O and feeds back the answers.
//
// A process's tasks (TaskID, chosen by the caller) report their blobs for
// checkpoint n when they pass their first marker at or after epoch n (Due
// says which n), or finish: an ended task's final state goes into every
// later part instead. A task may join while the run goes on, from a
// given checkpoint (a task instance that starts at an epoch), and one
// that finished may join again. A part is ready once every live task
// that joined by its checkpoint has reported to it, or, if no live task
// reports to it (they all wait to join, or have ended), once the caller
// says the checkpoint has passed (Passed): a process whose tasks all
// wait still writes its part. The coordinator then asks for it to be written, for every
// checkpoint it wrote and does not know complete to be checked, and, for
// each that is complete, announces it, commits the two-phase outputs up
// to it and prunes. While no checkpoint completes, it compares what its
// peers say they wrote with what the store holds, and warns once that the
// directory is not shared, trimming the checkpoints that cannot complete.
//
// Pace (pace.go), pure as well, is the stride of the checkpoints a job of
// several processes takes, which the leader (the lowest process taking
// part: process 0 until it leaves) decides from how far the slowest
// process's writes lag and the others follow, whichever leader's steps
// they hear first.
//
// # Invariants
//
//   - At most one store request (WritePart, CheckComplete, CheckPart) is
//     outstanding: nothing more is asked of the store until its answer
//     has been stepped. Other events may be stepped meanwhile.
//   - Parts are written in increasing checkpoint order, each at most once,
//     never one at or before a checkpoint known complete (From counts as
//     complete). A part older than one that is ready is dropped.
//   - A part written holds what each task reported to it and, for each
//     task that ended without reporting to it, that task's final state;
//     a final blob whose (operator, key group) or (operator, instance) the
//     part holds already is left out. Its blobs are sorted by operator,
//     then key group or instance; its Epoch is its Checkpoint; its meta
//     records key_groups.
//   - Completed(n) follows only the store's word that n is complete, and
//     is followed at once by Commit(n); both come in increasing n, at
//     most once each, and only for n after From. A round that completes
//     any checkpoint ends with Prune(Keep), and older waiting checkpoints
//     are forgotten.
//   - WarnUnshared comes at most once, and only while no checkpoint has
//     completed since From; TrimIncomplete(Keep+1) follows it and every
//     later round that completes nothing. NewestWritten, which the
//     process's summaries claim, counts a part once its write has been
//     answered, so a claim names a part that is in the store.
//   - A write that failed and was not superseded, and a store check that
//     failed, end the run: Step returns the error, then and ever after.
//
// # Use
//
// The coordinator belongs to one goroutine, such as a runtime service
// that receives the tasks' reports on a channel; only Due may be called
// elsewhere. The caller carries out the actions in order:
//
//	c, err := coord.New(coord.Config{Self: 0, Processes: 2, Every: 2, Keep: 3, KeyGroups: 128})
//	c.Step(coord.Join{Task: 0})
//	c.Step(coord.Report{Task: 0, N: 4, State: blobs})
//	for c.HasReady() {
//		for _, a := range c.Ready() {
//			switch a := a.(type) {
//			case coord.WritePart:
//				err := store.WritePart(a.Part)
//				later, lerr := false, error(nil)
//				if err != nil {
//					later, lerr = store.CompletedAfter(a.Part.Checkpoint)
//				}
//				ev := coord.PartWritten{N: a.Part.Checkpoint, Err: err, Superseded: later && lerr == nil}
//				if err := c.Step(ev); err != nil {
//					return err
//				}
//			case coord.CheckComplete:
//				ok, err := store.Complete(a.N, a.Processes)
//				c.Step(coord.CompleteChecked{N: a.N, Complete: ok, Err: err})
//			case coord.Commit:
//				// commit the two-phase outputs up to a.N
//			case coord.Prune:
//				err = store.Prune(a.Keep)
//			// ... CheckPart, Completed, TrimIncomplete, WarnUnshared
//			}
//		}
//		c.Advance()
//	}
package coord
