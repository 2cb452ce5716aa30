package trace

import (
	"fmt"
	"math"
	"slices"
)

// Merge joins the traces of several processes into one: workers are
// numbered one process after another (so their ids are unique), the
// operator tables are joined by name, and the events are renumbered
// accordingly. Message edges keep their channels, which name a channel
// the same way on both of its ends. Two traces of the same process are
// refused.
func Merge(ts ...*Trace) (*Trace, error) {
	if len(ts) == 1 {
		return ts[0], nil
	}
	out := &Trace{Base: math.MaxInt64}
	seen := map[int]bool{}
	opIndex := map[string]uint16{}
	for _, t := range ts {
		if seen[t.Process] {
			return nil, fmt.Errorf("two traces of process %d", t.Process)
		}
		seen[t.Process] = true
		out.Processes = max(out.Processes, t.Processes)
		out.Base = min(out.Base, t.Base)
		opMap := make([]uint16, len(t.Ops))
		for i, name := range t.Ops {
			k, ok := opIndex[name]
			if !ok {
				if len(out.Ops) > math.MaxUint16 {
					return nil, fmt.Errorf("more than %d operators", math.MaxUint16+1)
				}
				k = uint16(len(out.Ops))
				out.Ops = append(out.Ops, name)
				opIndex[name] = k
			}
			opMap[i] = k
		}
		first := uint32(len(out.Workers))
		for _, w := range t.Workers {
			w.Op = opMap[w.Op]
			out.Workers = append(out.Workers, w)
		}
		out.Events = slices.Grow(out.Events, len(t.Events))
		for _, e := range t.Events {
			e.Worker += first
			e.Op = opMap[e.Op]
			out.Events = append(out.Events, e)
		}
	}
	if len(ts) > 0 {
		out.Process = ts[0].Process
	}
	return out, nil
}
