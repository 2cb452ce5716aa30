package runtime

import (
	"errors"
	"fmt"
	"math"
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

// Retirement is when one task instance retires: never (the default) or
// from an epoch on. It is shared by the instance and its senders' outlets.
type Retirement struct{ from atomic.Uint64 }

// never is the From of an instance that does not retire.
const never = math.MaxUint64

func newRetirement() *Retirement {
	r := &Retirement{}
	r.from.Store(never)
	return r
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
		x = newRetirement()
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

// dropMark says whether marker m goes to a receiver that no longer takes
// part: one whose retirement the previous marker already reached.
func (l *link) dropMark(m progress.Marker) bool {
	if l == nil || l.gone == nil {
		return false
	}
	if l.marked >= 0 && l.gone.ends(progress.Epoch(l.marked)) {
		return true
	}
	l.marked = int64(m.Epoch)
	return false
}

// checkSend fails a record for a receiver that has retired.
func (l *link) checkSend() error {
	if !(Outlet{link: l}).Retired() {
		return nil
	}
	return fmt.Errorf("runtime: a record for an instance that retired from epoch %d (the routing still sends it records)", l.gone.From())
}

// Ends says whether the receiver retires after marker m: its last.
func (o Outlet) Ends(m progress.Marker) bool {
	return o.link != nil && o.link.gone != nil && o.link.gone.ends(m.Epoch)
}

// Retired says whether the receiver has retired: the last marker sent
// to it ended its last epoch, and records sent now would fail.
func (o Outlet) Retired() bool {
	l := o.link
	return l != nil && l.gone != nil && l.marked >= 0 && l.gone.ends(progress.Epoch(l.marked))
}
