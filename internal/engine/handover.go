package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/transport"
)

// handovers moves the state of key groups between the keyed instances
// of a running job when their routing table changes: instances of this
// process deliver to each other through the post office, and to other
// processes over the handover channel.
type handovers struct {
	po    *postOffice
	net   transport.Network
	pl    placement
	done  <-chan struct{}
	mu    []sync.Mutex // per peer: one goroutine sends at a time
	moved atomic.Int64 // bytes of state this process handed over
	keys  atomic.Int64 // key groups this process handed over
	live  atomic.Int64 // keyed instances of this process not yet ended
	// held is 1 while live counts a hold (holdLives) besides them.
	held  atomic.Int64
	reuse reuse     // checkpoint reuse (reuse.go)
	slots *presence // the processes present (nil: all)
	// gone marks, under mu, the peers told that this process hands them
	// nothing more: nothing is sent to them after (a peer that left an
	// elastic mesh would leave a send waiting for its slot's next
	// process).
	gone []bool
	// closes holds, per process that leaves, the epoch after which this
	// process hands it nothing more (its retirement); closing counts them.
	closeMu sync.Mutex
	closes  map[int]uint64
	closing atomic.Int64
}

// closeAfter tells process p that this one hands it nothing more once
// every keyed instance here has completed epoch at: steps planned before
// p's leave may still give it key groups until then.
func (h *handovers) closeAfter(p int, at uint64) {
	if h.net == nil || p == h.pl.self {
		return
	}
	h.closeMu.Lock()
	if h.closes == nil {
		h.closes = map[int]uint64{}
	}
	h.closes[p] = at
	h.closeMu.Unlock()
	h.closing.Add(1)
}

// flushCloses sends the closes due once this process has completed
// epoch done (every keyed instance here, the ended ones aside).
func (h *handovers) flushCloses(done uint64) {
	h.closeMu.Lock()
	var due []int
	for p, at := range h.closes {
		if done >= at {
			due = append(due, p)
			delete(h.closes, p)
		}
	}
	h.closeMu.Unlock()
	for _, p := range due {
		h.closing.Add(-1)
		h.closeTo(p)
	}
}

// newHandovers makes the handovers of a run; leaving says whether this
// process leaves the job.
func newHandovers(rt *runtime.Runtime, net transport.Network, pl placement, slots *presence, leaving func() bool) *handovers {
	h := &handovers{po: newPostOffice(), net: net, pl: pl, done: rt.Done(), mu: make([]sync.Mutex, pl.procs), slots: slots, gone: make([]bool, pl.procs)}
	if net == nil {
		return h
	}
	h.po.proc = pl.proc
	for p := range pl.procs {
		if p == pl.self {
			continue
		}
		// Not waited for once this process's tasks have all ended with
		// the job's input (or a stop): its instances take no parcel
		// then, its peers' instances of the same keyed group ended at
		// the same final marker and ship nothing after it, and a peer
		// that joined meanwhile may never close towards it. A process
		// that leaves waits for every peer's close: steps planned before
		// its leave may still ship it parcels until they have completed
		// the epoch it retires from.
		rt.AddListener(fmt.Sprintf("handover-from-%d", p), slots.serve(p, func(done <-chan struct{}) error {
			r := net.Receiver(handoverChannel, p)
			h.po.peerBack(p)
			h.joined(p, false) // (a process that took p's slot again hears it now)
			for {
				msg, err := r.Recv()
				if errors.Is(err, io.EOF) {
					h.po.peerClosed(p) // it closed in order
					return nil
				}
				if err != nil {
					return nil // the network says why, if it failed
				}
				err = h.po.receive(p, msg)
				if errors.Is(err, errClosed) {
					// The peer hands this process nothing more (its keyed
					// instances have ended, or this process leaves): a
					// parcel of it that has not come never will.
					h.po.peerClosed(p)
					return nil
				}
				if err != nil {
					return err
				}
				r.Release()
			}
		}), leaving)
	}
	return h
}

// ended notes that a keyed instance of this process has ended; after the
// last, the peers hear that this process hands nothing more over. A
// process without keyed instances tells them at start (closeIfIdle).
func (h *handovers) ended() error {
	n := h.live.Add(-1)
	if n == 0 {
		return h.close()
	}
	if n == h.held.Load() && h.closing.Load() > 0 {
		// Only the hold is left: every keyed instance here has ended
		// for now. A process that leaves gains no key group after its
		// retirement, so it hears now that this one hands it nothing
		// more.
		h.flushCloses(math.MaxUint64)
	}
	return nil
}

func (h *handovers) closeIfIdle() error {
	if h.live.Load() == 0 {
		return h.close()
	}
	return nil
}

func (h *handovers) close() error {
	if h.net == nil {
		return nil
	}
	for p := range h.pl.procs {
		if p != h.pl.self && h.slots.present(p) {
			h.closeTo(p)
		}
	}
	return nil
}

// joined tells process p, which joined the job, that this process hands
// it nothing, if its keyed instances have all ended (or it has none).
// For a process that took p's slot again, it forgets what it told the
// one before; the handover service tells it once the network reaches
// it.
func (h *handovers) joined(p int, again bool) {
	if h.net == nil || p == h.pl.self {
		return
	}
	if again {
		h.closeMu.Lock()
		if _, ok := h.closes[p]; ok {
			delete(h.closes, p)
			h.closing.Add(-1)
		}
		h.closeMu.Unlock()
		h.mu[p].Lock()
		h.gone[p] = false
		h.mu[p].Unlock()
		return
	}
	if h.live.Load() == 0 {
		h.closeTo(p)
	}
}

// reach waits until the network reaches the newest process of slot p
// known here (it may have taken the slot again).
func (h *handovers) reach(p int) error {
	select {
	case <-h.slots.current(p):
		return nil // (also once the runtime is done)
	default:
	}
	select {
	case <-h.slots.current(p):
		return nil
	case <-h.done:
		return errors.New("weir: stopped")
	}
}

// closeTo tells process p that this one hands it nothing more: at the
// end, or when p leaves the job (it gains no key group then).
func (h *handovers) closeTo(p int) {
	if h.net == nil || p == h.pl.self {
		return
	}
	h.mu[p].Lock()
	defer h.mu[p].Unlock()
	if h.gone[p] {
		return
	}
	if h.reach(p) != nil {
		return
	}
	h.gone[p] = true
	// A process that closed its end of the mesh in order (its part of
	// the job ended) is told nothing: a Sender asked for once the mesh
	// knows it left would wait for the slot's next process. The Sender
	// asked for while it is connected fails once it leaves.
	el, elastic := h.net.(transport.Elastic)
	if elastic && !slices.Contains(el.Members(), p) {
		return
	}
	s := h.net.Sender(handoverChannel, p)
	if elastic && !slices.Contains(el.Members(), p) {
		return
	}
	// An error means the network failed or closed, and says why.
	_ = s.Send(append(s.Buffer(), msgClose))
}

// send delivers a parcel to instance k.to, here or on its process.
func (h *handovers) send(k parcelKey, blobs []parcelBlob) error {
	var n int64
	for _, b := range blobs {
		n += int64(len(b.Data))
	}
	h.moved.Add(n)
	p := h.pl.proc(k.to, k.par)
	if p == h.pl.self {
		h.po.deliver(k, blobs)
		return nil
	}
	h.mu[p].Lock()
	defer h.mu[p].Unlock()
	if err := h.reach(p); err != nil {
		return err
	}
	if _, err := ship(h.net.Sender(handoverChannel, p), k, blobs); err != nil {
		return fmt.Errorf("weir: %s#%d: handing key groups to instance %d on process %d: %w", k.task, k.from, k.to, p, err)
	}
	return nil
}

// handover is one keyed task instance's part: at each aligned marker it
// compares the table it routed the ended epoch by with the one of the
// next epoch, hands over the state of the key groups it loses and takes
// that of the key groups it gains.
type handover struct {
	h      *handovers
	task   string
	inst   int
	groups int
	par    int
	sched  *routing.Schedule
	// cur is the table the last epoch was routed by: the one in force at
	// first, read at the first marker (a later life of an instance is
	// made before every table of the rescale that starts it is added).
	first  uint64
	cur    *partition.Table
	view   *routing.View
	movers []dataflow.SnapEntry
	epoch  uint64 // the last aligned marker's epoch
}

func (x *handover) after(m progress.Marker) error {
	prev := x.epoch
	x.epoch = uint64(m.Epoch)
	if err := x.move(m, prev); err != nil || !m.Final {
		return err
	}
	if m.Watermark == progress.MaxWatermark {
		x.h.po.ended(instKey{x.task, x.par, x.inst}, uint64(m.Epoch))
	}
	return x.h.ended()
}

// move hands over and takes the key groups whose owner changes after
// marker m (prev is the epoch of the marker before, which bounds the
// checkpoints a delta's base may be). A final marker moves them too: an
// instance that retires (its process leaves) may end the epoch of its
// last handover with it.
func (x *handover) move(m progress.Marker, prev uint64) error {
	// Entering the next epoch here too makes a table announced too late
	// for this instance refused, also on a process without senders.
	next := x.sched.Enter(uint64(m.Epoch) + 1)
	if x.cur == nil {
		x.cur = x.sched.At(x.first)
	}
	if next == x.cur {
		return nil
	}
	old := x.cur
	x.cur = next
	par := old.Instances()
	lose := map[int]bool{} // destinations, each sent a parcel (maybe empty)
	gain := map[int]bool{} // sources, each owing a parcel
	lost := 0
	for _, mv := range migrate.Moves(old, next) {
		switch x.inst {
		case mv.From:
			lose[mv.To] = true
			lost++
		case mv.To:
			gain[mv.From] = true
		}
	}
	if len(lose) > 0 {
		take := func(kg uint32) bool {
			g := partition.KeyGroup(kg)
			return old.Owner(g) == x.inst && next.Owner(g) != x.inst
		}
		var blobs []checkpoint.StateBlob
		for _, s := range x.movers {
			var err error
			if blobs, err = s.S.(dataflow.KeyedMover).ExtractKeyed(s.Op, x.groups, take, blobs); err != nil {
				return err
			}
		}
		parcels, err := x.deltas(blobs, prev, par, next)
		if err != nil {
			return err
		}
		by := map[int][]parcelBlob{}
		for _, b := range parcels {
			to := next.Owner(partition.KeyGroup(b.KeyGroup))
			by[to] = append(by[to], b)
		}
		for to := range lose {
			k := parcelKey{task: x.task, par: par, epoch: uint64(m.Epoch), from: x.inst, to: to}
			if err := x.h.send(k, by[to]); err != nil {
				return err
			}
		}
		x.h.keys.Add(int64(lost))
	}
	x.view.Set(next)
	for from := range gain {
		k := parcelKey{task: x.task, par: par, epoch: uint64(m.Epoch), from: from, to: x.inst}
		blobs, ok := x.h.po.take(k, x.h.done)
		if !ok {
			// The job stops: end here, without the key groups' state.
			return fmt.Errorf("weir: %s#%d: stopped while taking key groups from instance %d", x.task, x.inst, from)
		}
		whole, err := x.merged(from, blobs)
		if err != nil {
			return err
		}
		byOp := map[string][][]byte{}
		for _, b := range whole {
			byOp[b.Operator] = append(byOp[b.Operator], b.Data)
		}
		for _, s := range x.movers {
			if err := s.S.(dataflow.KeyedMover).RestoreKeyed(byOp[s.Op]); err != nil {
				return fmt.Errorf("weir: %s#%d: taking key groups from instance %d: %w", s.Op, x.inst, from, err)
			}
		}
	}
	return nil
}

// routingSuffix names the blob, saved by every instance of each keyed
// task (the same tables: any instance, process 0's included, may have
// left by then), that records its routing tables at a checkpoint; a
// restart reads the lowest instance's (lowestInstances).
const routingSuffix = "#routing"

// routingSnap saves the tables in force after the checkpoint's epoch.
type routingSnap struct{ x *handover }

// SnapshotInstance saves the tables as the steps a rescale announces
// (migrate.EncodeSteps: the first whole, the others as the key groups
// that change owner), in as few encodings as migrate.MaxStepOwners
// allows, so that a checkpoint taken during a rescale of many steps
// holds a few bytes a step.
func (r routingSnap) SnapshotInstance() ([]byte, error) {
	ts := r.x.sched.Tables(r.x.epoch + 1)
	per := max(migrate.MaxStepOwners/ts[0].Groups(), 1)
	b := binary.AppendUvarint(nil, uint64((len(ts)+per-1)/per))
	for i := 0; i < len(ts); i += per {
		enc, err := migrate.EncodeSteps(r.x.task, ts[i:min(i+per, len(ts))])
		if err != nil {
			return nil, err
		}
		b = binary.AppendUvarint(b, uint64(len(enc)))
		b = append(b, enc...)
	}
	return b, nil
}

// RestoreInstance does nothing: the tables are read before the job is
// built (restoredSchedules).
func (routingSnap) RestoreInstance([]byte) error { return nil }

// decodeTables reads what routingSnap saved: encodings of steps, or (as
// a source's shares are saved, and the routing of older checkpoints) of
// one table each.
func decodeTables(b []byte) ([]*partition.Table, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > 1<<16 {
		return nil, fmt.Errorf("weir: a corrupt routing record")
	}
	b = b[k:]
	out := make([]*partition.Table, 0, n)
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, fmt.Errorf("weir: a corrupt routing record")
		}
		rs, err := migrate.DecodeSteps(b[k : k+int(l)])
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			out = append(out, r.Table)
		}
		b = b[k+int(l):]
	}
	return out, nil
}

// handover makes the key-group handover of instance inst of keyed task
// name, or returns nil for a task without keyed state.
func (w *wiring) handover(name string, par, inst int, snaps []dataflow.SnapEntry, view *routing.View, first uint64) *handover {
	var movers []dataflow.SnapEntry
	for _, s := range snaps {
		if _, ok := s.S.(dataflow.KeyedMover); ok {
			movers = append(movers, s)
		}
	}
	if len(movers) == 0 {
		return nil
	}
	w.j.handovers.live.Add(1)
	w.j.handovers.po.started(instKey{name, par, inst})
	s := w.j.Schedule(par)
	return &handover{h: w.j.handovers, task: name, par: par, inst: inst, groups: w.j.Cfg.KeyGroups, sched: s, first: first,
		view: view, movers: movers}
}

// restoredSchedules sets the routing schedules the checkpoint the job
// resumes from recorded, before the job is built.
func (j *Job) restoredSchedules() error {
	if j.coord == nil || j.coord.restored == nil {
		return nil
	}
	for op, data := range j.coord.lowestInstances(routingSuffix) {
		ts, err := decodeTables(data)
		if err != nil {
			return fmt.Errorf("weir: checkpoint %d: %s: %w", j.coord.from, op, err)
		}
		s, err := routing.Restore(ts)
		if err != nil {
			return fmt.Errorf("weir: checkpoint %d: %s: %w", j.coord.from, op, err)
		}
		if ts[0].Groups() == j.Cfg.KeyGroups {
			j.SetSchedule(ts[0].Instances(), s)
		}
	}
	return nil
}

// RestoreInstances does nothing either.
func (routingSnap) RestoreInstances([][]byte) error { return nil }

// unmovable notes the keyed operators of task t whose state Weir cannot
// move with their key groups: those declared keyed (KeyedState) that keep
// state of their own, saved by nothing in snaps.
func (w *wiring) unmovable(t plan.Task, snaps []dataflow.SnapEntry) {
	moved := map[string]bool{}
	for _, s := range snaps {
		if _, ok := s.S.(dataflow.KeyedMover); ok {
			moved[s.Op] = true
		}
	}
	for _, id := range t.Nodes {
		for _, pn := range w.p.Nodes {
			if pn.ID == id && pn.State == plan.Keyed && !moved[pn.Name] {
				w.j.rescale.mu.Lock()
				if !slices.Contains(w.j.rescale.unmovable, pn.Name) {
					w.j.rescale.unmovable = append(w.j.rescale.unmovable, pn.Name)
				}
				w.j.rescale.mu.Unlock()
			}
		}
	}
}
