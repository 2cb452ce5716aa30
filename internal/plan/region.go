package plan

// Region is a maximal group of operators connected by forward edges: they
// run at one parallelism, and records stay on their instance from the
// region's entry to its exit. A region is serial (one instance), stateless
// (split round-robin) or keyed (split by the key group of Key).
type Region struct {
	ID          int
	Nodes       []int
	Parallelism int
	// Keyed is set on a parallel region partitioned by a key: Key, or an
	// unnamed key if Key is "".
	Keyed bool
	Key   string
	// Order is how an ordered job restores the input order where records
	// leave the region.
	Order Order
	// drops is set when some operator may make other than one output per
	// input.
	drops bool
}

// Order is how a region's exit restores the input order.
type Order int

const (
	// NoOrder: the job is not ordered, the region is serial, or its input
	// has no order to keep (it comes from a window, a join or a union).
	NoOrder Order = iota
	// RoundRobinMerge: the region's entry dealt whole units round-robin,
	// and the exit takes them back in the same turn. Every operator makes
	// one output per input.
	RoundRobinMerge
	// RoundRobinPulses: as RoundRobinMerge, and an instance whose unit came
	// out empty (every record dropped) sends an empty unit, a pulse, so
	// the exit never waits for records that will not come.
	RoundRobinPulses
	// SequenceMerge: the entry split each unit by key group and numbered
	// its records; the exit merges the instances' parts by number.
	SequenceMerge
	// SequencePulses: as SequenceMerge, with pulses for parts that came out
	// empty.
	SequencePulses
)

func (o Order) String() string {
	switch o {
	case RoundRobinMerge:
		return "round-robin merge"
	case RoundRobinPulses:
		return "round-robin merge with pulses"
	case SequenceMerge:
		return "sequence numbers"
	case SequencePulses:
		return "sequence numbers with pulses"
	}
	return "none"
}

// orderStrategies names, for each parallel region of an ordered job, how
// its exit restores order: round-robin when its instances see whole units,
// sequence numbers when they see key-group parts, with pulses when an
// operator may drop records.
func (p *Physical) orderStrategies() {
	exits := map[int]bool{} // regions with an ordered exit
	for _, e := range p.Edges {
		if e.Ordered && e.Exchange != Forward {
			exits[p.RegionOf[e.From]] = true
		}
	}
	for i := range p.Regions {
		r := &p.Regions[i]
		head := r.Nodes[0]
		if !exits[r.ID] || r.Parallelism == 1 {
			continue
		}
		switch {
		case p.Whole[head] && r.drops:
			r.Order = RoundRobinPulses
		case p.Whole[head]:
			r.Order = RoundRobinMerge
		case r.drops:
			r.Order = SequencePulses
		default:
			r.Order = SequenceMerge
		}
	}
}

// Kind describes the region for people.
func (r Region) Kind() string {
	switch {
	case r.Parallelism == 1:
		return "serial"
	case r.Keyed && r.Key != "":
		return "keyed by " + r.Key
	case r.Keyed:
		return "keyed"
	}
	return "stateless"
}
