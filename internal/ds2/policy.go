package ds2

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Policy says when sizings are acted on.
type Policy struct {
	// WarmUp is the intervals ignored after a change (and at the start):
	// rates measured while state moves and queues drain are not the new
	// configuration's.
	WarmUp int
	// Activation is how many intervals in a row must ask for more
	// instances of an operator before it gets them (at least 1); it gets
	// what the newest of them asked for (an older one may straddle the
	// change of rate that set them asking, and ask for too few: seen, a
	// count growing 1 -> 3 -> 5 where 1 -> 5 was due).
	Activation int
	// DownWindow is how many intervals in a row, none of them catching up
	// on a backlog, must ask for fewer instances (two or more fewer)
	// before an operator gives them up (at least Activation); it keeps the
	// most of those asked for. Jobs that scale down on one low interval
	// scale up again on the next. Decreases of one are never taken, so an
	// operator at two instances stays at two or more.
	DownWindow int
	// OverProvision is the share of instances added to each sizing:
	// ⌈π(1+OverProvision)⌉ (0: none).
	OverProvision float64
	// Utilization is the share of an instance's true processing rate
	// that sizings plan for (DS2's equations at 1), and Boundary the band
	// around it inside which nothing changes: an operator gets more
	// instances only when it needs more to stay at or below
	// Utilization+Boundary (at most 1), and gives some up only when it
	// would stay at or below Utilization-Boundary with two fewer. Rates
	// that wander inside the band change nothing.
	Utilization, Boundary float64
}

// DefaultPolicy is the policy of an autoscaled job unless set: one
// interval of warm-up, two agreeing intervals to scale up, ten to scale
// down, instances planned at 80 % of their true rate and left alone
// between 65 % and 95 %.
var DefaultPolicy = Policy{WarmUp: 1, Activation: 2, DownWindow: 10, Utilization: 0.8, Boundary: 0.15}

// Band is one interval's sizings: at the policy's utilization, and at
// the upper and lower edges of its band.
type Band struct {
	Sizing
	Up, Down []int
}

// Size sizes ops for the policy: at Utilization, and at the band's edges.
func (p Policy) Size(ops []Operator) (Band, error) {
	if err := p.Check(); err != nil {
		return Band{}, err
	}
	s, err := Size(ops, p.Utilization)
	if err != nil {
		return Band{}, err
	}
	up, err := Size(ops, min(1, p.Utilization+p.Boundary))
	if err != nil {
		return Band{}, err
	}
	down, err := Size(ops, p.Utilization-p.Boundary)
	if err != nil {
		return Band{}, err
	}
	return Band{Sizing: s, Up: up.Parallelism, Down: down.Parallelism}, nil
}

// Check refuses a policy that makes no sense.
func (p Policy) Check() error {
	switch {
	case p.WarmUp < 0:
		return fmt.Errorf("ds2: warm-up %d intervals: want 0 or more", p.WarmUp)
	case p.Activation < 1:
		return fmt.Errorf("ds2: activation %d: want at least 1 interval", p.Activation)
	case p.DownWindow < p.Activation:
		return fmt.Errorf("ds2: scale-down window %d: want at least the activation, %d", p.DownWindow, p.Activation)
	case !(p.OverProvision >= 0 && p.OverProvision <= 10):
		return fmt.Errorf("ds2: over-provisioning %v: want 0 to 10", p.OverProvision)
	case !(p.Utilization > 0 && p.Utilization <= 1):
		return fmt.Errorf("ds2: target utilization %v: want more than 0 and at most 1", p.Utilization)
	case !(p.Boundary >= 0 && p.Boundary < p.Utilization):
		return fmt.Errorf("ds2: utilization boundary %v: want 0 or more, below the target utilization %v", p.Boundary, p.Utilization)
	}
	return nil
}

// Decider applies a Policy to the sizings of successive intervals. It
// holds no clock: Step is one interval, and equal steps from equal
// deciders give equal decisions.
type Decider struct {
	p    Policy
	cur  []int
	warm int
	asks []ask // the latest intervals', oldest first
}

// NewDecider starts a decider for operators running current instances;
// the first WarmUp intervals are ignored.
func NewDecider(p Policy, current []int) (*Decider, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	for i, c := range current {
		if c < 1 {
			return nil, fmt.Errorf("ds2: operator %d runs %d instances; want at least 1", i, c)
		}
	}
	return &Decider{p: p, cur: slices.Clone(current), warm: p.WarmUp}, nil
}

// Current is the parallelism in force.
func (d *Decider) Current() []int { return slices.Clone(d.cur) }

// State is the decider's state, encoded: two deciders of one policy
// whose states are equal decide alike on equal bands.
func (d *Decider) State() []byte {
	b := binary.AppendUvarint(nil, uint64(d.warm))
	ints := func(xs []int) {
		b = binary.AppendUvarint(b, uint64(len(xs)))
		for _, x := range xs {
			b = binary.AppendVarint(b, int64(x))
		}
	}
	ints(d.cur)
	b = binary.AppendUvarint(b, uint64(len(d.asks)))
	for _, a := range d.asks {
		ints(a.at)
		ints(a.up)
		ints(a.down)
		if a.catchingUp {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	return b
}

// Step takes one interval's band (catchingUp: a source works through a
// backlog) and returns the parallelism in force after it, and whether it
// changed. An operator the band did not measure keeps its instances.
func (d *Decider) Step(b Band, catchingUp bool) ([]int, bool) {
	n := len(d.cur)
	if len(b.Parallelism) != n || len(b.Up) != n || len(b.Down) != n || b.Max != nil && len(b.Max) != n || b.Measured != nil && len(b.Measured) != n {
		panic(fmt.Sprintf("ds2: a band of %d operators for a decider of %d", len(b.Parallelism), n))
	}
	if d.warm > 0 {
		d.warm--
		return d.Current(), false
	}
	d.asks = append(d.asks, ask{d.provisioned(b.Parallelism, b.Max), d.provisioned(b.Up, b.Max), d.provisioned(b.Down, b.Max), catchingUp})
	if keep := max(d.p.Activation, d.p.DownWindow); len(d.asks) > keep {
		d.asks = d.asks[len(d.asks)-keep:]
	}
	next, changed := slices.Clone(d.cur), false
	for i, c := range d.cur {
		if b.Measured != nil && !b.Measured[i] {
			continue
		}
		if up, ok := d.agreed(i, d.p.Activation, func(a ask) bool { return a.up[i] > c }, newest); ok && up > c {
			next[i], changed = up, true
		} else if down, ok := d.agreed(i, d.p.DownWindow, func(a ask) bool { return a.down[i] <= c-2 && !a.catchingUp }, most); ok && down <= c-2 {
			next[i], changed = down, true
		}
	}
	if changed {
		d.cur, d.warm, d.asks = next, d.p.WarmUp, nil
	}
	return d.Current(), changed
}

// ask is one interval's parallelisms, over-provisioned and within Max: at
// the target utilization, and at the band's upper and lower edges.
type ask struct {
	at, up, down []int
	catchingUp   bool
}

// provisioned is par over-provisioned, within the operators' Max.
func (d *Decider) provisioned(par, most []int) []int {
	out := make([]int, len(par))
	for i, p := range par {
		out[i] = max(1, int(math.Ceil(min(float64(p)*(1+d.p.OverProvision), maxInstances)-1e-9)))
		if most != nil && most[i] > 0 {
			out[i] = min(out[i], most[i])
		}
	}
	return out
}

// agreed says whether the last n intervals all pass ok for operator i,
// and which of their parallelisms at the target utilization pick chooses.
func (d *Decider) agreed(i, n int, ok func(ask) bool, pick func(int, int) int) (int, bool) {
	if len(d.asks) < n {
		return 0, false
	}
	out := d.asks[len(d.asks)-n].at[i]
	for _, a := range d.asks[len(d.asks)-n:] {
		if !ok(a) {
			return 0, false
		}
		out = pick(out, a.at[i])
	}
	return out, true
}

func newest(_, b int) int { return b }
func most(a, b int) int   { return max(a, b) }
