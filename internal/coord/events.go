package coord

import "github.com/weirstream/weir/internal/checkpoint"

// TaskID names one task of this process: a small integer the caller
// chooses, such as the task's index in the order the tasks were built.
type TaskID int

// Event is what Step takes: a task's report or end, a peer's claim, or the
// answer to a store request the coordinator asked for.
type Event interface{ event() }

// Join makes Task one of the tasks every part from checkpoint From on
// waits for, until it finishes. The caller joins every task that starts
// with the run (From 0) before any of them reports. A task that starts
// while the run goes on (a task instance that joins at an epoch) joins
// with the first checkpoint it reports to, before any other task can
// report to that one; the parts before it do not wait for it. A task
// that finished may join again: its final state stays in the parts
// before From, and the state it reports from then on replaces it.
type Join struct {
	Task TaskID
	From uint64
}

// Report hands over Task's blobs for checkpoint N (the N that Due
// returned). The coordinator copies the slices but not the blobs' Data,
// which goes into the part as it is: the caller leaves it unchanged.
type Report struct {
	Task    TaskID
	N       uint64
	State   []checkpoint.StateBlob
	Sources []checkpoint.SourceBlob
}

// Finish says that Task has ended: its final state goes into every part
// written from now on that it has not reported to, and no part waits for
// it any more. The blobs are kept as Report's are.
type Finish struct {
	Task    TaskID
	State   []checkpoint.StateBlob
	Sources []checkpoint.SourceBlob
}

// Withdraw takes back a Join whose task never started: it takes no part
// after all (the epoch it was to join at came too late), and no part
// waits for it. Its final state, if it ended before, stays. It is for a
// task that has not reported since the Join.
type Withdraw struct{ Task TaskID }

// Passed says that checkpoint N is taken (the tasks of the job's other
// processes take it) and that no task of this process that has not
// joined will report to it or to one before it. If no live task of this
// process reports to N either (every local task instance waits to take
// part, or has ended), N's part holds the ended tasks' final state alone,
// and it is ready: a process whose instances all wait still writes its
// part of each checkpoint, without which none would complete. Otherwise
// it does nothing: the live tasks report.
type Passed struct{ N uint64 }

// PeerWrote says that peer Process said (in its summary) that the newest
// checkpoint it wrote its part of is N.
type PeerWrote struct {
	Process int
	N       uint64
}

// PartWritten answers WritePart for checkpoint N: Err is nil if the part
// was written. If the write failed, Superseded says whether a checkpoint
// newer than N was complete in the store by then (Store.CompletedAfter
// returned true without an error): then the part is not needed, and the
// failure is not an error.
type PartWritten struct {
	N          uint64
	Err        error
	Superseded bool
}

// CompleteChecked answers CheckComplete for checkpoint N: whether the
// store found (or made) it complete, or the error it returned.
type CompleteChecked struct {
	N        uint64
	Complete bool
	Err      error
}

// PartChecked answers CheckPart: whether the store holds Process's part
// of checkpoint N (Store.Has), or the error it returned.
type PartChecked struct {
	N       uint64
	Process int
	Has     bool
	Err     error
}

func (Join) event()            {}
func (Report) event()          {}
func (Passed) event()          {}
func (Withdraw) event()        {}
func (Finish) event()          {}
func (PeerWrote) event()       {}
func (PartWritten) event()     {}
func (CompleteChecked) event() {}
func (PartChecked) event()     {}
