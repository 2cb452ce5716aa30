package agree

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"
	"time"

	"github.com/weirstream/weir/internal/ds2"
	"github.com/weirstream/weir/internal/metrics"
)

// Config is what a Sizer sizes: the job's tasks in topological order
// (a keyed task's Max is its planned instances), the keyed ones (sized
// together: one rescale moves them all), the sources' names, and the
// policy.
type Config struct {
	Tasks   []ds2.Task
	Keyed   []int
	Sources []string
	Policy  ds2.Policy
	// Patience is the epochs a decision may take to take force (the
	// lead of a rescale) before the decider starts afresh from the
	// instances in force; at least pendingRounds rounds are waited.
	Patience uint64
	// MinInterval is the shortest stretch between two rounds' figures
	// that is sized: a round frozen sooner after the one before (one
	// marker may end several policy epochs of an overloaded job, which
	// its processes then freeze moments apart) is passed over, and the
	// next is measured from the one before it. Rates over moments are
	// noise. 0: any.
	MinInterval time.Duration
	// Processes is the processes (slots) the keyed operators' planned
	// instances are spread over, in equal blocks: what an Outcome's
	// Need counts in (0: Need is not given).
	Processes int
}

// Frozen is one process's figures at a round's epoch, as it sent them.
type Frozen struct {
	Process int
	Figures []byte
}

// Round is the figures of every process taking part at a policy epoch,
// in process order, with the keyed operators' active instances in the
// table in force at Epoch, whether the table changed within the
// interval ending there, and Capacity: the keyed operators' instances
// on the processes taking part (0: every planned instance), the most a
// decision gives them.
type Round struct {
	Epoch    uint64
	Frozen   []Frozen
	Active   int
	Moved    bool
	Capacity int
}

// Digest is what a round decided from.
type Digest [sha256.Size]byte

// Outcome is what a round decided: the keyed operators go From -> To
// when Changed; Hot names key groups no instance can serve; Wanted, when
// the sizing asks for more instances than the processes taking part run
// (the round's Capacity), is how many it asks for (over-provisioned; 0
// otherwise); Need is the processes the sizing needs: for Wanted once
// To is all the Capacity, else for To, and no fewer than take part
// until the decider has decided a change among them (0: not sized, or
// no Config.Processes); Skipped
// says why the round was not sized ("" if it was).
type Outcome struct {
	Epoch    uint64
	Digest   Digest
	Changed  bool
	From, To int
	Hot      []ds2.Hot
	Wanted   int
	Need     int
	Skipped  string
	// Loads are, by keyed task, the records its key groups received
	// since the job started (where counted; an interval's few records a
	// key group are noise): what a decision places by.
	Loads map[string][]float64
}

// pendingRounds is how many rounds a decision may wait to take force
// before the deciders start afresh from the instances in force.
const pendingRounds = 3

// Sizer steps through a job's rounds. Two Sizers of one Config that
// started alike and took equal rounds are in equal states.
type Sizer struct {
	cfg     Config
	planned int
	decider *ds2.Decider
	prev    *Round
	stats   metrics.JobStats // prev's figures
	restart bool             // the decider starts afresh once nothing moves
	pending int              // rounds a decision has not taken force
	resetAt uint64           // the decider starts afresh at the first round from it (0: none)
	decided uint64           // the epoch of the last change decided
	// awaiting is set from a change decided until the table runs it (or
	// the decider starts afresh): an instance count that differs from
	// the decider's with none awaited came from elsewhere (a process
	// that joined or left, a rescale by hand) and is taken as it is.
	awaiting bool
	// hot is the key groups the intervals sized since the last change
	// named too hot (the newest maxHot): a change names them all, also
	// those an interval it was decided in did not (a hot key that moves
	// to another key group, as Nexmark's hot auction does, is split over
	// two in the interval it moves in).
	hot []ds2.Hot
}

// maxHot bounds the hot key groups a Sizer keeps between changes.
const maxHot = 16

// New returns a Sizer for cfg whose keyed operators run active instances.
func New(cfg Config, active int) (*Sizer, error) {
	s := &Sizer{cfg: cfg}
	if len(cfg.Keyed) == 0 {
		return nil, errors.New("agree: no keyed task to size")
	}
	for _, k := range cfg.Keyed {
		if k < 0 || k >= len(cfg.Tasks) {
			return nil, fmt.Errorf("agree: keyed task %d of %d", k, len(cfg.Tasks))
		}
		s.planned = max(s.planned, cfg.Tasks[k].Max)
	}
	var err error
	s.decider, err = ds2.NewDecider(cfg.Policy, []int{min(max(active, 1), max(s.planned, 1))})
	return s, err
}

// Current is the keyed operators' instances the decider holds in force.
func (s *Sizer) Current() int { return s.decider.Current()[0] }

// ResetAt makes the decider start afresh at the first round from epoch e
// on (the earliest such request wins).
func (s *Sizer) ResetAt(e uint64) {
	if s.resetAt == 0 || e < s.resetAt {
		s.resetAt = e
	}
}

// Step takes the next round, of a later epoch than the last.
func (s *Sizer) Step(r Round) (Outcome, error) {
	if s.prev != nil && r.Epoch <= s.prev.Epoch {
		return Outcome{}, fmt.Errorf("agree: round of epoch %d after %d", r.Epoch, s.prev.Epoch)
	}
	if !slices.IsSortedFunc(r.Frozen, func(a, b Frozen) int { return a.Process - b.Process }) || len(r.Frozen) == 0 {
		return Outcome{}, fmt.Errorf("agree: round of epoch %d: figures of no process, or out of process order", r.Epoch)
	}
	if s.prev == nil || !sameProcesses(s.prev.Frozen, r.Frozen) {
		return s.begin(r)
	}
	if s.resetAt > 0 && r.Epoch >= s.resetAt {
		if err := s.fresh(r.Active); err != nil {
			return Outcome{}, err
		}
		// Everything a round whose figures differed may have set apart
		// goes: the processes' states are equal again from here.
		s.resetAt, s.restart, s.decided = 0, false, 0
	}
	out := Outcome{Epoch: r.Epoch, From: s.Current(), To: s.Current()}
	pre := s.digestInputs(r)
	cur, err := decode(r)
	if err != nil {
		return Outcome{}, err
	}
	prev, pstats := s.prev, s.stats
	s.prev, s.stats = &r, cur
	switch {
	case r.Moved:
		out.Skipped, s.restart = "key groups moved within the interval", true
	case r.Active != s.Current() && !s.awaiting:
		out.Skipped = "the instances changed without a decision (a process joined or left, a rescale by hand); the decider starts afresh"
		s.restart = false
		err = s.fresh(r.Active)
	case r.Active != s.Current():
		out.Skipped, s.restart = "a decision has not taken force", true
		if s.pending++; s.pending > pendingRounds && r.Epoch > s.decided+s.cfg.Patience {
			out.Skipped += "; the decider starts afresh"
			err = s.fresh(r.Active)
		}
	case s.restart:
		out.Skipped, s.restart = "the decider starts afresh after a migration", false
		err = s.fresh(r.Active)
	case s.short(pstats, cur):
		out.Skipped = fmt.Sprintf("the interval lasted less than %v", s.cfg.MinInterval)
		s.prev, s.stats = prev, pstats
	default:
		s.pending, s.awaiting = 0, false
		err = s.size(&out, pstats, cur, r)
	}
	out.Digest = digestOf(pre, out)
	return out, err
}

// begin takes the first round of the processes taking part: the job's
// first, or the first after a process joined or left. Every process
// taking part, one that just joined too, starts afresh from it in the
// same state, so its digest covers the round alone (with the config):
// a joiner's decider, which saw none of the rounds before, agrees with
// the others' from here.
func (s *Sizer) begin(r Round) (Outcome, error) {
	cur, err := decode(r)
	if err != nil {
		return Outcome{}, err
	}
	if err := s.fresh(r.Active); err != nil {
		return Outcome{}, err
	}
	s.prev, s.stats = &r, cur
	s.restart, s.resetAt, s.decided = r.Moved, 0, 0
	out := Outcome{Epoch: r.Epoch, From: s.Current(), To: s.Current(), Skipped: "the first round of the processes taking part"}
	h := sha256.New()
	h.Write(fmt.Appendf(nil, "weir-agree-4 begin|%+v|%d|", s.cfg, s.planned))
	writeRound(h, r)
	out.Digest = digestOf(h, out)
	return out, nil
}

// keepHot adds an interval's hot key groups to those kept since the last
// change: a key group named again takes its newest figures and place.
func (s *Sizer) keepHot(hot []ds2.Hot) {
	for _, h := range hot {
		s.hot = slices.DeleteFunc(s.hot, func(o ds2.Hot) bool { return o.Operator == h.Operator && o.KeyGroup == h.KeyGroup })
		s.hot = append(s.hot, h)
	}
	if len(s.hot) > maxHot {
		s.hot = slices.Delete(s.hot, 0, len(s.hot)-maxHot)
	}
}

// short says whether the figures of cur were frozen less than
// MinInterval after prev's, by the clock of the lowest process taking
// part (in both).
func (s *Sizer) short(prev, cur metrics.JobStats) bool {
	if s.cfg.MinInterval <= 0 || prev.Self != cur.Self || cur.Self >= len(prev.Processes) {
		return false
	}
	return time.Duration(cur.Processes[cur.Self].Time-prev.Processes[prev.Self].Time) < s.cfg.MinInterval
}

// fresh starts the decider again from active instances.
func (s *Sizer) fresh(active int) error {
	d, err := ds2.NewDecider(s.cfg.Policy, []int{min(max(active, 1), max(s.planned, 1))})
	if err == nil {
		s.decider, s.pending, s.hot, s.awaiting = d, 0, nil, false
	}
	return err
}

// size sizes the interval from prev to cur, within the round's
// capacity, and steps the decider.
func (s *Sizer) size(out *Outcome, prev, cur metrics.JobStats, r Round) error {
	most := s.planned
	if r.Capacity > 0 {
		most = min(most, r.Capacity)
	}
	tasks := slices.Clone(s.cfg.Tasks)
	for _, k := range s.cfg.Keyed {
		tasks[k].Instances = min(r.Active, tasks[k].Max)
		tasks[k].Max = min(tasks[k].Max, most)
	}
	ops, err := ds2.FromStats(tasks, prev, cur, nil)
	if err == nil {
		var b ds2.Band
		if b, err = s.cfg.Policy.Size(ops); err == nil {
			group := ds2.Band{Sizing: ds2.Sizing{Parallelism: []int{0}, Max: []int{most}, Measured: []bool{false}}, Up: []int{0}, Down: []int{0}}
			for _, k := range s.cfg.Keyed {
				group.Parallelism[0] = max(group.Parallelism[0], b.Parallelism[k])
				group.Up[0], group.Down[0] = max(group.Up[0], b.Up[k]), max(group.Down[0], b.Down[k])
				group.Measured[0] = group.Measured[0] || b.Measured[k]
			}
			next, changed := s.decider.Step(group, ds2.HeldBack(prev, cur, s.cfg.Sources))
			out.Changed, out.To, out.Hot = changed, next[0], b.Hot
			s.keepHot(b.Hot)
			if changed {
				s.decided, s.awaiting = out.Epoch, true
				out.Hot, s.hot = s.hot, nil
			}
			out.Wanted = s.wanted(ops, b.Capped)
			// More processes are needed once the decider holds every
			// instance of those taking part, and still too few. Fewer
			// would do only once a scale-down the decider decided among
			// them has taken force (a process that left before would
			// take key groups with it that the rescale moves anyway).
			n := out.To
			if changed {
				n = max(out.From, out.To)
			}
			if out.Wanted > 0 && out.To >= most {
				n = out.Wanted
			}
			out.Need = s.need(n)
			if s.decided == 0 {
				out.Need = max(out.Need, len(r.Frozen))
			}
			out.Loads = s.loads(cur)
			return nil
		}
	}
	// An interval that cannot be sized (nothing processed, say) is
	// passed over.
	out.Skipped = "not sized: " + err.Error()
	return nil
}

// need is the processes that run n instances of the keyed operators, the
// planned ones being spread over Config.Processes in equal blocks (0
// without Config.Processes); more than Config.Processes when n is more
// than the planned.
func (s *Sizer) need(n int) int {
	if s.cfg.Processes < 1 || s.planned < 1 {
		return 0
	}
	if n <= s.planned {
		// The process of the n-th instance, as instances are placed
		// (instance i on process i*Processes/planned).
		return (max(n, 1)-1)*s.cfg.Processes/s.planned + 1
	}
	return (n*s.cfg.Processes + s.planned - 1) / s.planned
}

// loads are the keyed tasks' key-group loads since the job started.
func (s *Sizer) loads(cur metrics.JobStats) map[string][]float64 {
	out := map[string][]float64{}
	for _, l := range cur.Loads() {
		if !slices.ContainsFunc(s.cfg.Keyed, func(k int) bool { return s.cfg.Tasks[k].Name == l.Operator }) {
			continue
		}
		f := make([]float64, len(l.Counts))
		for k, n := range l.Counts {
			f[k] = float64(max(n, 0))
		}
		out[l.Operator] = f
	}
	return out
}

// wanted is, when a keyed operator is among the capped, the instances
// the keyed operators would need with no bound, over-provisioned.
func (s *Sizer) wanted(ops []ds2.Operator, capped []int) int {
	if !slices.ContainsFunc(capped, func(i int) bool { return slices.Contains(s.cfg.Keyed, i) }) {
		return 0
	}
	free := slices.Clone(ops)
	for _, k := range s.cfg.Keyed {
		free[k].Max = 0
	}
	sz, err := ds2.Size(free, s.cfg.Policy.Utilization)
	if err != nil {
		return 0
	}
	n := 0
	for _, k := range s.cfg.Keyed {
		n = max(n, sz.Parallelism[k])
	}
	return int(math.Ceil(float64(n)*(1+s.cfg.Policy.OverProvision) - 1e-9))
}

// digestInputs hashes what a round decides from: the config, the
// decider's state before it and both rounds.
func (s *Sizer) digestInputs(r Round) hash.Hash {
	h := sha256.New()
	var b []byte
	b = append(b, "weir-agree-4"...)
	b = fmt.Appendf(b, "%+v|%d|", s.cfg, s.planned)
	b = binary.AppendUvarint(b, uint64(s.pending))
	b = binary.AppendUvarint(b, s.decided)
	b = binary.AppendUvarint(b, s.resetAt)
	b = fmt.Appendf(b, "%+v|", s.hot)
	b = append(b, flag(s.restart), flag(s.awaiting))
	st := s.decider.State()
	b = binary.AppendUvarint(b, uint64(len(st)))
	b = append(b, st...)
	h.Write(b)
	if s.prev != nil {
		writeRound(h, *s.prev)
	} else {
		h.Write([]byte{0})
	}
	writeRound(h, r)
	return h
}

// digestOf completes the inputs' hash with what the round decided.
func digestOf(h hash.Hash, out Outcome) Digest {
	h.Write(fmt.Appendf(nil, "|%d|%v|%d|%d|%d|%d|%q|%+v", out.Epoch, out.Changed, out.From, out.To, out.Wanted, out.Need, out.Skipped, out.Hot))
	var d Digest
	h.Sum(d[:0])
	return d
}

// writeRound adds a round to h.
func writeRound(h hash.Hash, r Round) {
	b := []byte{1}
	b = binary.AppendUvarint(b, r.Epoch)
	b = binary.AppendUvarint(b, uint64(r.Active))
	b = append(b, flag(r.Moved))
	b = binary.AppendUvarint(b, uint64(r.Capacity))
	b = binary.AppendUvarint(b, uint64(len(r.Frozen)))
	for _, f := range r.Frozen {
		b = binary.AppendUvarint(b, uint64(f.Process))
		b = binary.AppendUvarint(b, uint64(len(f.Figures)))
		h.Write(b)
		h.Write(f.Figures)
		b = b[:0]
	}
	h.Write(b)
}

// decode builds the job's figures from a round's: the first process's
// clock measures the interval.
func decode(r Round) (metrics.JobStats, error) {
	last := r.Frozen[len(r.Frozen)-1].Process
	st := metrics.JobStats{Self: r.Frozen[0].Process, Processes: make([]metrics.ProcessStats, last+1)}
	for p := range st.Processes {
		st.Processes[p].Process = p
	}
	for _, f := range r.Frozen {
		ps, err := metrics.Decode(f.Figures)
		if err != nil {
			return st, fmt.Errorf("agree: round of epoch %d, process %d: %w", r.Epoch, f.Process, err)
		}
		if ps.Process != f.Process {
			return st, fmt.Errorf("agree: round of epoch %d: process %d sent the figures of %d", r.Epoch, f.Process, ps.Process)
		}
		st.Processes[f.Process] = ps
	}
	return st, nil
}

func sameProcesses(a, b []Frozen) bool {
	return slices.EqualFunc(a, b, func(x, y Frozen) bool { return x.Process == y.Process })
}

func flag(b bool) byte {
	if b {
		return 1
	}
	return 0
}
