package migrate

import (
	"fmt"

	"github.com/weirstream/weir/internal/partition"
)

// Strategy is how a reconfiguration's moves are spread over steps.
type Strategy int

const (
	// Batched (the default) makes every step a matching: no instance is
	// the source of two moves of one step, nor the destination of two.
	// It takes as many steps as the most moves any one instance sends or
	// receives (or more, to respect Options.MaxPerStep), which is the
	// fewest any plan of matchings can take. With Options.PerPair above 1
	// a move of the matching carries up to that many key groups between
	// the same two instances, and the count is of such bundles.
	Batched Strategy = iota
	// AllAtOnce moves every key group in one step.
	AllAtOnce
	// Fluid moves one key group per step, in key-group order.
	Fluid
)

var strategyNames = [...]string{Batched: "batched", AllAtOnce: "all-at-once", Fluid: "fluid"}

func (s Strategy) String() string {
	if s < 0 || int(s) >= len(strategyNames) {
		return fmt.Sprintf("strategy(%d)", int(s))
	}
	return strategyNames[s]
}

// ParseStrategy reads "batched", "all-at-once" or "fluid".
func ParseStrategy(name string) (Strategy, error) {
	for s, n := range strategyNames {
		if n == name {
			return Strategy(s), nil
		}
	}
	return 0, fmt.Errorf("migrate: unknown strategy %q; want batched, all-at-once or fluid", name)
}

// Options tune a plan.
type Options struct {
	// MaxPerStep caps the moves of a batched step; 0 leaves them uncapped.
	// With PerPair above 1 it caps the pairs of instances instead.
	MaxPerStep int
	// PerPair is how many key groups one instance may hand one other
	// instance in one batched step (0 or 1: one). Above 1, the matching
	// is of pairs of instances, as in Megaphone, and a range that moves
	// between two instances takes fewer steps.
	PerPair int
	// Sizes, if not nil, gives the bytes of state of every key group
	// (len == key groups). A batched plan then evens out the bytes its
	// steps move, without adding steps or breaking the cap.
	Sizes []int64
	// Gap is the epochs between steps: step i is in force from epoch
	// new.From + i*Gap. 0 means 1.
	Gap uint64
}

// Move hands key group KeyGroup from instance From to instance To.
type Move struct {
	KeyGroup partition.KeyGroup
	From, To int
}

// Step is a set of moves taken at one epoch boundary, and the routing
// table in force once they are done (from epoch Table.From).
type Step struct {
	Moves []Move
	Table *partition.Table
}

// Moves lists, in key-group order, the key groups whose owner differs
// between old and new, which must have as many key groups.
func Moves(old, new *partition.Table) []Move {
	var out []Move
	for kg := 0; kg < old.Groups(); kg++ {
		g := partition.KeyGroup(kg)
		if from, to := old.Owner(g), new.Owner(g); from != to {
			out = append(out, Move{KeyGroup: g, From: from, To: to})
		}
	}
	return out
}

// Plan returns the steps that turn the routing table old into new: every
// key group whose owner differs moves exactly once, from its old owner to
// its new one, and no other moves. Applied in order, the steps' moves turn
// old's ownership into new's, and the last step's table assigns what new
// does. Nothing to move is no steps.
//
// The instance counts may differ. Every step's table but the last counts
// max(old, new) instances: an instance numbered at or above old's count is
// new and owns nothing until a move gives it key groups; one numbered at or
// above new's count is retiring and still owns what has not yet moved off
// it. The last step's table counts exactly new's instances: the retiring
// ones own nothing by then and leave when it takes force.
func Plan(old, new *partition.Table, s Strategy, o Options) ([]Step, error) {
	if old == nil || new == nil {
		return nil, fmt.Errorf("migrate: a plan needs both the old and the new table")
	}
	if old.Groups() != new.Groups() {
		return nil, fmt.Errorf("migrate: the old table has %d key groups and the new one %d; "+
			"state is kept by key group, so a reconfiguration cannot change their number", old.Groups(), new.Groups())
	}
	if err := o.check(s, old.Groups()); err != nil {
		return nil, err
	}
	moves := Moves(old, new)
	if len(moves) == 0 {
		return nil, nil
	}
	var groups [][]Move
	switch s {
	case AllAtOnce:
		groups = [][]Move{moves}
	case Fluid:
		for _, m := range moves {
			groups = append(groups, []Move{m})
		}
	case Batched:
		groups = batch(moves, max(old.Instances(), new.Instances()), o)
	}
	return steps(old, new, groups, o.Gap)
}

func (o Options) check(s Strategy, groups int) error {
	if s < 0 || int(s) >= len(strategyNames) {
		return fmt.Errorf("migrate: unknown %v", s)
	}
	if o.MaxPerStep < 0 {
		return fmt.Errorf("migrate: at most %d moves per step makes no sense; 0 leaves steps uncapped", o.MaxPerStep)
	}
	if o.PerPair < 0 {
		return fmt.Errorf("migrate: %d key groups per pair and step makes no sense; 0 means one", o.PerPair)
	}
	if o.MaxPerStep > 0 && s == AllAtOnce {
		return fmt.Errorf("migrate: all-at-once moves everything in one step and cannot cap it at %d moves; use batched", o.MaxPerStep)
	}
	if o.Sizes != nil && len(o.Sizes) != groups {
		return fmt.Errorf("migrate: sizes for %d key groups, the tables have %d", len(o.Sizes), groups)
	}
	for kg, b := range o.Sizes {
		if b < 0 {
			return fmt.Errorf("migrate: key group %d has %d bytes of state", kg, b)
		}
	}
	return nil
}

// steps applies the groups of moves in turn to old's ownership and builds
// each step's table.
func steps(old, new *partition.Table, groups [][]Move, gap uint64) ([]Step, error) {
	if gap == 0 {
		gap = 1
	}
	owner := make([]int, old.Groups())
	for kg := range owner {
		owner[kg] = old.Owner(partition.KeyGroup(kg))
	}
	out := make([]Step, len(groups))
	for i, ms := range groups {
		for _, m := range ms {
			owner[m.KeyGroup] = m.To
		}
		n := max(old.Instances(), new.Instances())
		if i == len(groups)-1 {
			n = new.Instances()
		}
		t, err := partition.NewTable(new.From+uint64(i)*gap, n, owner)
		if err != nil {
			return nil, fmt.Errorf("migrate: step %d: %w", i, err)
		}
		out[i] = Step{Moves: ms, Table: t}
	}
	return out, nil
}
