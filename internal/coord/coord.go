package coord

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/progress"
)

// Config is what a process's coordinator knows of the job.
type Config struct {
	Self, Processes int    // this process, and how many the job has
	Every           uint64 // a checkpoint every Every epochs, at least 1
	Keep            int    // complete checkpoints kept, at least 1
	KeyGroups       int    // recorded in each part's meta as key_groups
	From            uint64 // the checkpoint the run restored (0: none)
}

// Coordinator gathers one process's part of each checkpoint from its
// tasks and tells its caller what to write, ask and commit. It is a plain
// value owned by one goroutine: it reads no clock, takes no lock and does
// no I/O.
type Coordinator struct {
	cfg  Config
	meta string            // key_groups, rendered once
	live map[TaskID]uint64 // a live task -> the first checkpoint it reports to
	// parts are the checkpoints some task has reported to and that are
	// not ready; queue the ready ones not yet asked to be written.
	parts map[uint64]*pending
	queue []checkpoint.Part
	// taken is the newest checkpoint whose part was taken to be written,
	// written the newest whose part the store took, highest the newest a
	// task reported, complete the newest the store found complete (From
	// at first).
	taken, written, highest, complete uint64
	// finals are the final state of the tasks that have ended (the last
	// time, for one that ended, joined again and ended again), part of
	// every later part.
	finals map[TaskID]final
	// waiting are the checkpoints whose part was written, not yet known
	// complete, in increasing order.
	waiting []uint64
	lane    lane
	peers   peers
	out     []Action
	handed  int   // how many of out Ready handed over
	err     error // the failure that ended the run
}

// New returns the coordinator of process cfg.Self.
func New(cfg Config) (*Coordinator, error) {
	switch {
	case cfg.Processes < 1 || cfg.Self < 0 || cfg.Self >= cfg.Processes:
		return nil, fmt.Errorf("coord: process %d of %d", cfg.Self, cfg.Processes)
	case cfg.Every < 1:
		return nil, errors.New("coord: a checkpoint every 0 epochs")
	case cfg.Keep < 1:
		return nil, fmt.Errorf("coord: keep is %d, want at least 1", cfg.Keep)
	}
	return &Coordinator{cfg: cfg, meta: fmt.Sprint(cfg.KeyGroups), live: map[TaskID]uint64{}, finals: map[TaskID]final{},
		parts: map[uint64]*pending{}, complete: cfg.From}, nil
}

// ErrProtocol is what Step returns, wrapped, for an answer to a request
// that is not outstanding. The event is ignored.
var ErrProtocol = errors.New("coord: answer to no outstanding request")

// Step takes one event. It returns the error that ends the run (a part
// that could not be written and was not superseded, a store check that
// failed), and returns it again for every later event; or an error
// wrapping ErrProtocol for an answer it did not ask for, which leaves it
// as it was.
func (c *Coordinator) Step(e Event) error {
	if c.err != nil {
		return c.err
	}
	switch e := e.(type) {
	case Join:
		c.live[e.Task] = e.From
	case Report:
		c.report(e)
	case Finish:
		c.finish(e)
	case Passed:
		c.passed(e.N)
	case Withdraw:
		delete(c.live, e.Task)
		c.takeReady()
	case PeerWrote:
		c.peers.note(e.Process, e.N)
	case PartWritten:
		return c.partWritten(e)
	case CompleteChecked:
		return c.completeChecked(e)
	case PartChecked:
		return c.partChecked(e)
	default:
		return fmt.Errorf("coord: unknown event %T", e)
	}
	return nil
}

// HasReady reports whether there are actions Ready has not handed over.
func (c *Coordinator) HasReady() bool { return len(c.out) > c.handed }

// Ready returns the actions to carry out, in order: those since the last
// Advance. It returns the same ones until Advance.
func (c *Coordinator) Ready() []Action {
	c.handed = len(c.out)
	return c.out[:c.handed:c.handed]
}

// Advance says that the caller has taken the actions the last Ready
// returned; those added since stay for the next Ready.
func (c *Coordinator) Advance() {
	// The rest move to a new slice: the handed ones (a WritePart holds a
	// part's blobs) are the caller's alone.
	c.out, c.handed = slices.Clone(c.out[c.handed:]), 0
	if len(c.out) == 0 {
		c.out = nil
	}
}

func (c *Coordinator) emit(a Action) { c.out = append(c.out, a) }

// fail ends the run with err.
func (c *Coordinator) fail(err error) error {
	c.err = err
	return err
}

// Progress returns the newest checkpoint a task reported and the newest
// known complete, both at least the checkpoint restored from.
func (c *Coordinator) Progress() (highest, complete uint64) {
	return max(c.highest, c.cfg.From), max(c.complete, c.cfg.From)
}

// NewestWritten returns the newest checkpoint whose part this process
// wrote (what its summaries claim): a part is counted once its write is
// answered, not when it is taken to be written, since the write no
// longer happens on the task that made it ready.
func (c *Coordinator) NewestWritten() uint64 { return c.written }

// FirstLive returns the first checkpoint a live task reports to, or
// MaxUint64 if no task is live: a checkpoint before it has passed for
// this process once the clock has (Passed).
func (c *Coordinator) FirstLive() uint64 {
	first := uint64(math.MaxUint64)
	for _, from := range c.live {
		first = min(first, from)
	}
	return first
}

// Pending returns how many checkpoints have reports but are not ready.
func (c *Coordinator) Pending() int { return len(c.parts) }

// Idle reports whether the coordinator waits for nothing from the store:
// no part is queued to be written, no request is outstanding and no
// action is left to hand over. A caller that stops once its tasks have
// ended drains the coordinator until then.
func (c *Coordinator) Idle() bool {
	return len(c.queue) == 0 && c.lane.state == laneIdle && len(c.out) == 0
}

// Due returns the checkpoint a task whose last checkpoint was last takes
// at marker m, if any: the highest multiple of every that m reaches and
// last does not. Every task takes checkpoint n at its first marker at or
// after epoch n, which makes the checkpoints consistent: an aligned
// marker holds back every sender past its own first such marker. The
// caller sets last to the n returned. Due is a function of its arguments
// only: tasks call it on their own goroutines.
func Due(every, last uint64, m progress.Marker) (uint64, bool) {
	if every == 0 || m.Final {
		return 0, false
	}
	n := uint64(m.Epoch) / every * every
	if n <= last {
		return 0, false
	}
	return n, true
}
