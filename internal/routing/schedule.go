package routing

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/weirstream/weir/internal/partition"
)

// ErrTooLate is wrapped by the error of Add for a table whose first
// epoch a sender of this process has already entered.
var ErrTooLate = errors.New("routing: the table takes force at an epoch already entered")

// Schedule is the routing tables of a group of keyed operators, each in
// force from its From epoch until the next one's. It is safe for
// concurrent use.
type Schedule struct {
	mu      sync.Mutex
	tables  atomic.Pointer[[]*partition.Table] // by From, the first From 0
	reached uint64                             // the highest epoch a sender entered
	// shares: the tables assign a source's shares, whose number may
	// change (the instances may not).
	shares bool
	// id orders the schedules' locks in AddAll.
	id uint64
}

// ids numbers the schedules.
var ids atomic.Uint64

// New returns the schedule that routes by first from epoch 0.
func New(first *partition.Table) *Schedule {
	s := &Schedule{id: ids.Add(1)}
	t := *first
	t.From = 0
	s.tables.Store(&[]*partition.Table{&t})
	return s
}

// NewShares returns the schedule of a source's shares that starts with
// first from epoch 0: each table's "key groups" are the shares the
// source's input is split into, and the owner of share i is the instance
// that reads it. Unlike a routing schedule's, its tables may have other
// numbers of shares; they all assign the same instances.
func NewShares(first *partition.Table) *Schedule {
	s := New(first)
	s.shares = true
	return s
}

// At returns the table in force at epoch e.
func (s *Schedule) At(e uint64) *partition.Table {
	ts := *s.tables.Load()
	i, _ := slices.BinarySearchFunc(ts, e, func(t *partition.Table, e uint64) int {
		if t.From <= e {
			return -1
		}
		return 1
	})
	return ts[max(i-1, 0)]
}

// Enter says that a sender starts sending the records of epoch e, and
// returns the table to route them by. From then on no table may take
// force at e or before. A sender enters e before it sends the marker
// that ends e-1 (AddAllJoining counts on it).
func (s *Schedule) Enter(e uint64) *partition.Table {
	s.mu.Lock()
	s.reached = max(s.reached, e)
	s.mu.Unlock()
	return s.At(e)
}

// Reached is the highest epoch a sender has entered.
func (s *Schedule) Reached() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reached
}

// Add puts t in force from t.From: it replaces any table from that epoch
// or later (a newer plan supersedes the rest of an older one). It refuses
// a table whose epoch a sender already entered, or one of another shape
// (over other instances or, but in a schedule of shares, of other key
// groups).
// Adding a table equal to the one already in force from t.From is a
// no-op, so that announcements may repeat.
func (s *Schedule) Add(t *partition.Table) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(t, 0); err != nil {
		return err
	}
	s.add(t)
	return nil
}

// check returns why Add would refuse t; s.mu is held. A table is too
// late if a sender entered its epoch, or one of the ahead epochs before.
func (s *Schedule) check(t *partition.Table, ahead uint64) error {
	ts := *s.tables.Load()
	if cur := ts[0]; (t.Groups() != cur.Groups() && !s.shares) || t.Instances() != cur.Instances() {
		return fmt.Errorf("routing: a table of %d key groups over %d instances, the schedule's have %d over %d",
			t.Groups(), t.Instances(), cur.Groups(), cur.Instances())
	}
	for _, o := range ts {
		if o.From == t.From && o.Equal(t) {
			return nil
		}
	}
	if t.From <= s.reached+ahead {
		return fmt.Errorf("%w: epoch %d, and epoch %d was entered", ErrTooLate, t.From-min(ahead, t.From), s.reached)
	}
	return nil
}

// add puts t, which check took, in force; s.mu is held.
func (s *Schedule) add(t *partition.Table) {
	ts := *s.tables.Load()
	for _, o := range ts {
		if o.From == t.From && o.Equal(t) {
			return
		}
	}
	next := make([]*partition.Table, 0, len(ts)+1)
	for _, o := range ts {
		if o.From < t.From {
			next = append(next, o)
		}
	}
	next = append(next, t)
	s.tables.Store(&next)
}

// Addition is tables to add to one schedule, in order.
type Addition struct {
	S      *Schedule
	Tables []*partition.Table
}

// AddAll adds the tables of every addition to its schedule, all or none:
// with the locks of all the schedules held, it checks every table as Add
// would and adds them only if none is refused; otherwise it adds nothing
// and returns the first refusal (wrapping ErrTooLate if a sender had
// entered the table's epoch). A reconfiguration of several schedules
// that comes too late can so be planned again from a later epoch.
func AddAll(adds []Addition) error { return addAll(adds, 0, nil) }

// AddAllJoining is AddAll for tables that instances join at: an instance
// that first owns key groups in a table from epoch e joins at e-1, and
// its senders must know it before any of them ends e-1 (they drop the
// markers of the epochs before an instance's join). With the locks held,
// it refuses, wrapping ErrTooLate, a table from an epoch at most one
// after the last a sender entered, and otherwise calls join (which sets
// the joins) before it adds the tables. A sender enters each epoch before
// it ends the one before (Enter), so none can end e-1 meanwhile.
func AddAllJoining(adds []Addition, join func()) error { return addAll(adds, 1, join) }

func addAll(adds []Addition, ahead uint64, then func()) error {
	scheds := make([]*Schedule, 0, len(adds))
	for _, a := range adds {
		if !slices.Contains(scheds, a.S) {
			scheds = append(scheds, a.S)
		}
	}
	// One order for the locks, whoever takes several.
	slices.SortFunc(scheds, func(a, b *Schedule) int { return cmp.Compare(a.id, b.id) })
	for _, s := range scheds {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	for _, a := range adds {
		for _, t := range a.Tables {
			if err := a.S.check(t, ahead); err != nil {
				return err
			}
		}
	}
	if then != nil {
		then()
	}
	for _, a := range adds {
		for _, t := range a.Tables {
			a.S.add(t)
		}
	}
	return nil
}

// Tables returns the tables from the one in force at epoch e on, in
// order: what a checkpoint taken at the end of epoch e−1 records.
func (s *Schedule) Tables(e uint64) []*partition.Table {
	ts := *s.tables.Load()
	var out []*partition.Table
	for i, t := range ts {
		if i+1 < len(ts) && ts[i+1].From <= e {
			continue
		}
		out = append(out, t)
	}
	return out
}

// Last returns the last table of the schedule, in force from its From on.
func (s *Schedule) Last() *partition.Table {
	ts := *s.tables.Load()
	return ts[len(ts)-1]
}

// Restore returns the schedule of a job that resumes with tables (as
// Tables returned them when the checkpoint was taken): the first is in
// force from epoch 0, the others from their own From.
func Restore(tables []*partition.Table) (*Schedule, error) {
	return restore(tables, New)
}

// RestoreShares is Restore for a schedule of a source's shares.
func RestoreShares(tables []*partition.Table) (*Schedule, error) {
	return restore(tables, NewShares)
}

// JoinShares is RestoreShares for a process that joins a running job
// from an epoch on: the first table keeps its From, by which the share
// notes of the other processes name it (At returns it for the epochs
// before too).
func JoinShares(tables []*partition.Table) (*Schedule, error) {
	s, err := RestoreShares(tables)
	if err != nil {
		return nil, err
	}
	ts := *s.tables.Load()
	first := *ts[0]
	first.From = tables[0].From
	ts[0] = &first
	return s, nil
}

func restore(tables []*partition.Table, mk func(*partition.Table) *Schedule) (*Schedule, error) {
	if len(tables) == 0 {
		return nil, fmt.Errorf("routing: a schedule of no tables")
	}
	s := mk(tables[0])
	for _, t := range tables[1:] {
		if err := s.Add(t); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// View is the table one receiving instance routes its current epoch by,
// which its ownership checks read; the instance sets it at each epoch
// boundary where the table changes, once the key groups it gains have
// arrived.
type View struct {
	t atomic.Pointer[partition.Table]
}

// NewView returns a view of t.
func NewView(t *partition.Table) *View {
	v := &View{}
	v.t.Store(t)
	return v
}

// Table returns the table in force.
func (v *View) Table() *partition.Table { return v.t.Load() }

// Set puts t in force.
func (v *View) Set(t *partition.Table) { v.t.Store(t) }
