package runtime

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/weirstream/weir/internal/progress"
)

// A task instance retires while the job goes on: from a given epoch on it
// takes no part (its process leaves the job, say). Its last aligned
// marker, the first that ends the epoch before that one, goes on as a
// Final marker, so receivers stop waiting for it, and the instance ends.
// Senders drop what they would send it for later epochs: the markers, and
// records, which the routing must already keep away (a record sent to a
// retired instance fails the job rather than get lost).

// Retirement is when one task instance takes part in the job: from its
// join epoch (0, the default; later for an instance of a process that
// joins the running job) to its retirement (never, the default, or an
// epoch). It is shared by the instance, its senders' outlets and its
// receivers' inboxes.
type Retirement struct {
	from atomic.Uint64
	join atomic.Uint64
	// life is the join epoch of a restartable instance's last life that
	// ended (never before the first).
	life atomic.Uint64
	// joined is closed once the instance's join epoch is known; joins,
	// shared by a runtime's retirements, counts the joins set.
	joined chan struct{}
	once   sync.Once
	joins  *atomic.Uint64
	// rt, if set, is the runtime the retirement belongs to: it delivers
	// the final markers held for the instance when it joins.
	rt *Runtime
}

// never is the From of an instance that does not retire, and the join
// epoch of one absent until further notice.
const never = math.MaxUint64

func newRetirement(joins *atomic.Uint64) *Retirement {
	r := &Retirement{joined: make(chan struct{}), joins: joins}
	r.from.Store(never)
	r.life.Store(never)
	close(r.joined)
	r.once.Do(func() {})
	return r
}

// Absent makes the instance absent until Join says from when it takes
// part: it runs in a process that has not joined the job. It must be
// called before the runtime runs.
func (r *Retirement) Absent() {
	r.join.Store(never)
	r.joined = make(chan struct{})
	r.once = sync.Once{}
}

// Join makes an absent instance take part from epoch e on. It must be set
// before the instance's senders and receivers pass epoch e-1. An
// instance that retired before e takes part again from e (its process
// left, and a new one took its slot): its retirement is undone.
func (r *Retirement) Join(e uint64) {
	// The join epoch first: an outlet that reads the retirement between
	// the two stores still drops the markers before e.
	r.join.Store(e)
	if f := r.from.Load(); f != never && f <= e {
		r.from.Store(never)
	}
	r.once.Do(func() { close(r.joined) })
	if r.joins != nil {
		r.joins.Add(1)
	}
	if r.rt != nil {
		r.rt.noteJoin()
	}
}

// Ended says whether a restartable instance's life that began at its
// join epoch (Joins) has ended: false while it runs, and while it has
// joined and not started yet.
func (r *Retirement) Ended() bool { return r.life.Load() == r.join.Load() }

// Joins is the first epoch the instance takes part in: 0, a join epoch,
// or MaxUint64 while it is absent.
func (r *Retirement) Joins() uint64 { return r.join.Load() }

// Joined is closed once the instance's first epoch is known.
func (r *Retirement) Joined() <-chan struct{} { return r.joined }

// present says whether the instance takes part in epoch e.
func (r *Retirement) present(e uint64) bool {
	return r.join.Load() <= e && e < r.from.Load()
}

// Set makes the instance retire from epoch e on: it ends after the
// epochs before e. It must be set before the instance aligns epoch e-1.
func (r *Retirement) Set(e uint64) { r.from.Store(e) }

// From is the first epoch the instance takes no part in, or MaxUint64.
func (r *Retirement) From() uint64 { return r.from.Load() }

// Retiring says whether a marker that ends epoch e is the instance's
// last.
func (r *Retirement) Retiring(e progress.Epoch) bool { return r.ends(e) }

// ends says whether a marker that ends epoch e is the instance's last.
func (r *Retirement) ends(e progress.Epoch) bool {
	f := r.from.Load()
	return f != never && uint64(e)+1 >= f
}

// errRetired ends a task loop at its retirement.
var errRetired = errors.New("runtime: retired")

// Retirement returns the retirement of instance inst of task name,
// registered with its source or inbox (NewInbox registers input tasks).
func (r *Runtime) Retirement(name string, inst int) *Retirement {
	r.retireMu.Lock()
	defer r.retireMu.Unlock()
	k := meterKey{name, inst}
	if r.retire == nil {
		r.retire = map[meterKey]*Retirement{}
	}
	x := r.retire[k]
	if x == nil {
		x = newRetirement(&r.joins)
		x.rt = r
		r.retire[k] = x
	}
	return x
}

// Until returns the outlet as one towards an instance that retires by x:
// markers of the epochs from x's on are dropped, and a record sent after
// the marker that ended the epoch before fails.
func (o Outlet) Until(x *Retirement) Outlet {
	l := &link{}
	if o.link != nil {
		*l = *o.link
	}
	l.gone, l.marked = x, -1
	o.link = l
	return o
}

// renews says whether what goes to the receiver in epoch e (a record, or
// a marker that ends e) is the first since a join epoch of it that the
// outlet has not sent to yet: the first to the process that took the
// receiver's slot again.
func (l *link) renews(e uint64) bool {
	if l == nil || l.gone == nil {
		return false
	}
	j := l.gone.Joins()
	if j == l.joinSent || e < j {
		return false
	}
	l.joinSent = j
	return true
}

// dropMark says whether marker m goes to a receiver that takes no part:
// one whose retirement the previous marker already reached, or one that
// has not joined yet (m ends an epoch before its first).
func (l *link) dropMark(m progress.Marker) bool {
	if l == nil || l.gone == nil {
		return false
	}
	if l.marked >= 0 && l.gone.ends(progress.Epoch(l.marked)) {
		return true
	}
	l.marked = int64(m.Epoch)
	return uint64(m.Epoch) < l.gone.Joins()
}

// checkSend fails a record for a receiver that has retired or not
// joined yet.
func (l *link) checkSend() error {
	if !(Outlet{link: l}).Retired() {
		return nil
	}
	if j := l.gone.Joins(); uint64(l.marked+1) < j {
		if j == never {
			return errors.New("runtime: a record for an instance of a process that has not joined the job (the routing still sends it records)")
		}
		return fmt.Errorf("runtime: a record for an instance that joins at epoch %d (the routing sends it records of epoch %d)", j, l.marked+1)
	}
	return fmt.Errorf("runtime: a record for an instance that retired from epoch %d (the routing still sends it records)", l.gone.From())
}

// Ends says whether the receiver retires after marker m: its last.
func (o Outlet) Ends(m progress.Marker) bool {
	return o.link != nil && o.link.gone != nil && o.link.gone.ends(m.Epoch)
}

// Retired says whether the receiver takes no part now: the last marker
// sent to it ended its last epoch, or it joins after the epoch being
// sent; records sent now would fail.
func (o Outlet) Retired() bool {
	l := o.link
	if l == nil || l.gone == nil {
		return false
	}
	return l.marked >= 0 && l.gone.ends(progress.Epoch(l.marked)) || uint64(l.marked+1) < l.gone.Joins()
}

// MarkRemote is Mark for a marker that a sender in another process sent
// (a pump hands it on). The runtime notes its epoch first, before the
// outlet reads whether the receiver has joined: a join set meanwhile at
// an epoch the marker ends or passes is either seen by the outlet or
// sees the epoch (RemoteMarked). A final marker is not noted: it is held
// for the receiver's later joins.
func (o Outlet) MarkRemote(m progress.Marker) error {
	if o.in != nil && o.in.rt != nil && !m.Final {
		r := o.in.rt
		for e := uint64(m.Epoch); ; {
			old := r.remoteMarked.Load()
			if old >= e || r.remoteMarked.CompareAndSwap(old, e) {
				break
			}
		}
	}
	return o.Mark(m)
}

// RemoteMarked is the highest epoch of a marker a sender in another
// process sent here, other than a final one (0 before the first): a join
// at that epoch or before, set after the marker came, may have missed it
// (the outlet dropped it).
func (r *Runtime) RemoteMarked() uint64 { return r.remoteMarked.Load() }
