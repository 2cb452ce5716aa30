package engine

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/transport"
)

// splits moves the shares of a running job's sources between their
// instances: each movable source reads its input in shares, share i of n
// by the instance a table of its schedule names, and where the table
// changes the instances that read hand their positions to those that
// read next (positions to the instances of this process through a
// mailbox, to other processes over the splits channel).
type splits struct {
	box     *shareBox
	net     transport.Network
	pl      placement
	done    <-chan struct{}
	sources map[string]*shareSource // the movable sources, by name
	// kept says, by source name, why a source's shares cannot move.
	kept   map[string]string
	sendMu []sync.Mutex // per peer: one goroutine sends at a time
	live   atomic.Int64 // instances of movable sources here not yet ended
	slots  *presence    // the processes present (nil: all)
	// gone marks, under sendMu, the processes told that this one sends
	// them no more notes because they leave.
	gone map[int]bool
}

// shareSource is one movable source.
type shareSource struct {
	name  string
	par   int
	sched *routing.Schedule
	// rescalable is false once an instance here found that its readers
	// cannot resume other readers' records.
	mu         sync.Mutex
	rescalable bool
	probed     bool
}

// canMove reports whether the source's readers can resume what others
// left, as far as the instances of this process know.
func (s *shareSource) canMove() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.probed && s.rescalable
}

func (s *shareSource) probe(ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rescalable = ok && (s.rescalable || !s.probed)
	s.probed = true
}

// shareName names a source's shares in a Reconfig; it cannot be a keyed
// group's ("keyed/<par>").
func shareName(source string) string { return "source/" + source }

// movableSource says why the source of task t cannot have its shares
// moved, or "" if it can: an instance without a share must end epochs by
// the clock (count-based epochs would stall it), an ordered job numbers
// its input by instance, and every process must run an instance, so that
// each can ask for a move and follow one.
func (j *Job) movableSource(t plan.Task, procs int) string {
	switch {
	case j.Cfg.EpochRecords > 0:
		return "count-based epochs: an instance that reads nothing would end no epoch"
	case j.Cfg.Ordered:
		return "an ordered job numbers its input by source instance"
	case t.Parallelism < procs:
		return fmt.Sprintf("its %d instances do not run on each of the %d processes", t.Parallelism, procs)
	}
	return ""
}

// newSplits makes the job's shares: a schedule per movable source of p,
// restored from the checkpoint if it recorded one for as many instances,
// else its first Cfg.Active instances (all by default) reading one share
// each.
func (j *Job) newSplits(p *plan.Physical, rt *runtime.Runtime, net transport.Network, pl placement) (*splits, error) {
	s := &splits{box: newShareBox(), net: net, pl: pl, done: rt.Done(), sources: map[string]*shareSource{},
		kept: map[string]string{}, sendMu: make([]sync.Mutex, pl.procs), slots: j.slots, gone: map[int]bool{}}
	named := map[string]int{}
	for _, t := range p.Tasks {
		if n := j.Nodes[t.Head]; n.Kind == plan.Source {
			named[n.Name]++
		}
	}
	restored, err := j.restoredShares()
	if err != nil {
		return nil, err
	}
	for _, t := range p.Tasks {
		n := j.Nodes[t.Head]
		if n.Kind != plan.Source {
			continue
		}
		why := j.movableSource(t, pl.procs)
		if why == "" && named[n.Name] > 1 {
			why = "another source has the same name"
		}
		if why != "" {
			s.kept[n.Name] = why
			continue
		}
		sched := restored[n.Name]
		if sched == nil || sched.At(0).Instances() != t.Parallelism || j.routesToAbsent(sched, pl) {
			active := t.Parallelism
			if a := j.Cfg.Active; a > 0 && a < active {
				active = a
			}
			sched = routing.NewShares(firstReaders(t.Parallelism, active))
		}
		s.sources[n.Name] = &shareSource{name: n.Name, par: t.Parallelism, sched: sched}
	}
	if len(s.sources) > 0 && net != nil {
		s.listen(rt)
	}
	return s, nil
}

// firstReaders is the table of n shares over the first n of par
// instances.
func firstReaders(par, n int) *partition.Table {
	owner := make([]int, n)
	for i := range owner {
		owner[i] = i
	}
	t, err := sharesTable(0, par, owner)
	if err != nil {
		panic(err) // n is within par
	}
	return t
}

// sharesTable is the table in force from epoch from in which instance
// readers[i] of par reads share i of len(readers).
func sharesTable(from uint64, par int, readers []int) (*partition.Table, error) {
	if len(readers) == 0 {
		return nil, fmt.Errorf("no instance to read the source")
	}
	seen := map[int]bool{}
	for _, r := range readers {
		if seen[r] {
			return nil, fmt.Errorf("instance %d is given two shares", r)
		}
		seen[r] = true
	}
	return partition.NewTable(from, par, readers)
}

// shareOf returns the share instance inst reads by t, or -1.
func shareOf(t *partition.Table, inst int) int {
	for i := range t.Groups() {
		if t.Owner(partition.KeyGroup(i)) == inst {
			return i
		}
	}
	return -1
}

// checkShares refuses a table that gives an instance two shares.
func checkShares(t *partition.Table) error {
	readers := make([]int, t.Groups())
	for i := range readers {
		readers[i] = t.Owner(partition.KeyGroup(i))
	}
	slices.Sort(readers)
	for i := 1; i < len(readers); i++ {
		if readers[i] == readers[i-1] {
			return fmt.Errorf("instance %d is given two shares", readers[i])
		}
	}
	return nil
}

// noteKey names what the reader of one share of a source left: share
// Share of the table in force from epoch From.
type noteKey struct {
	source string
	from   uint64
	share  int
}

// shareNote is where the reader of a share stood when it handed the share
// over or reached its end: its position, the watermarks of the EventTime
// operators fused into its task by name, and whether it had read all.
type shareNote struct {
	shares int // of the table
	pos    []byte
	wms    []opWatermark
	ended  bool
}

type opWatermark struct {
	op string
	wm int64
}

// shareBox holds the notes of this process's and the peers' readers.
// A source is done once every share of one of its tables has ended: no
// record is left to read then, whatever table comes later.
type shareBox struct {
	mu      sync.Mutex
	notes   map[noteKey]shareNote
	ended   map[noteKey]int // by source and table (share 0): shares ended
	done    map[string]bool
	arrived chan struct{} // closed and replaced at each note
}

func newShareBox() *shareBox {
	return &shareBox{notes: map[noteKey]shareNote{}, ended: map[noteKey]int{}, done: map[string]bool{},
		arrived: make(chan struct{})}
}

// put files a note; the first for a key counts, so repeats do nothing.
func (b *shareBox) put(k noteKey, n shareNote) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.notes[k]; ok {
		return
	}
	b.notes[k] = n
	if n.ended {
		t := noteKey{source: k.source, from: k.from}
		b.ended[t]++
		if b.ended[t] == n.shares {
			b.done[k.source] = true
		}
	}
	close(b.arrived)
	b.arrived = make(chan struct{})
}

// isDone reports whether every record of source has been read.
func (b *shareBox) isDone(source string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done[source]
}

// take waits for the notes of the n shares of source's table from epoch
// from and returns them in share order; it returns nil once the source is
// done (nothing is left to read), and an error once stop closes.
func (b *shareBox) take(source string, from uint64, n int, stop <-chan struct{}) ([]shareNote, error) {
	for {
		b.mu.Lock()
		out := make([]shareNote, 0, n)
		for i := range n {
			nt, ok := b.notes[noteKey{source: source, from: from, share: i}]
			if !ok {
				break
			}
			out = append(out, nt)
		}
		done, wait := b.done[source], b.arrived
		b.mu.Unlock()
		switch {
		case len(out) == n:
			return out, nil
		case done:
			return nil, nil
		}
		select {
		case <-wait:
		case <-stop:
			return nil, fmt.Errorf("weir: source %s: stopped while waiting for the positions of its shares", source)
		}
	}
}
