package metrics

import (
	"sort"
	"time"
)

// Rates are an instance's or an operator's rates in records per second
// (DS2): true processing and output rates per second of useful time, and
// the observed rates per second of wall time.
type Rates struct {
	Processing  float64 `json:"processing"`
	Output      float64 `json:"output"`
	ObservedIn  float64 `json:"observed_in"`
	ObservedOut float64 `json:"observed_out"`
}

// Rates returns s's rates, with Lifetime as the wall time: cumulative
// rates for figures since the start, or rates over an interval for the
// difference of two snapshots (Delta).
func (s InstanceStats) Rates() Rates {
	return Rates{Processing: per(s.RecordsIn, s.Useful), Output: per(s.RecordsOut, s.Useful),
		ObservedIn: per(s.RecordsIn, s.Lifetime), ObservedOut: per(s.RecordsOut, s.Lifetime)}
}

func per(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Delta returns what instance cur did since prev, an earlier snapshot of
// the same instance: its counters' differences, Lifetime the wall time
// between the two. Gauges (queue, epoch, watermark) are cur's.
func Delta(prev, cur InstanceStats) InstanceStats {
	d := cur
	d.RecordsIn -= prev.RecordsIn
	d.RecordsOut -= prev.RecordsOut
	d.BytesIn -= prev.BytesIn
	d.BytesOut -= prev.BytesOut
	d.Useful -= prev.Useful
	d.Idle -= prev.Idle
	d.Backpressure -= prev.Backpressure
	d.Lifetime -= prev.Lifetime
	if len(prev.KeyGroups) == len(cur.KeyGroups) && prev.KeyGroupLo == cur.KeyGroupLo {
		d.KeyGroups = make([]int64, len(cur.KeyGroups))
		for k := range d.KeyGroups {
			d.KeyGroups[k] = cur.KeyGroups[k] - prev.KeyGroups[k]
		}
	}
	return d
}

// DeltaJob returns what every instance of cur did since prev (instances
// matched by process, operator and index; one new in cur counts from 0).
func DeltaJob(prev, cur JobStats) JobStats {
	type key struct {
		proc, inst int
		op         string
	}
	old := map[key]InstanceStats{}
	for _, p := range prev.Processes {
		for _, in := range p.Instances {
			old[key{in.Process, in.Instance, in.Operator}] = in
		}
	}
	out := cur
	out.Processes = make([]ProcessStats, len(cur.Processes))
	for i, p := range cur.Processes {
		q := p
		q.Instances = make([]InstanceStats, len(p.Instances))
		for k, in := range p.Instances {
			q.Instances[k] = Delta(old[key{in.Process, in.Instance, in.Operator}], in)
		}
		out.Processes[i] = q
	}
	return out
}

// OperatorStats is one operator chain's figures over all its instances:
// sums of their counters and times, and sums of their rates (so an
// operator's true processing rate is what its instances together manage
// per second of useful time each).
type OperatorStats struct {
	Operator     string        `json:"operator"`
	Instances    int           `json:"instances"`
	Source       bool          `json:"source,omitempty"`
	RecordsIn    int64         `json:"records_in"`
	RecordsOut   int64         `json:"records_out"`
	BytesIn      int64         `json:"bytes_in"`
	BytesOut     int64         `json:"bytes_out"`
	Useful       time.Duration `json:"useful_ns"`
	Idle         time.Duration `json:"idle_ns"`
	Backpressure time.Duration `json:"backpressure_ns"`
	Lifetime     time.Duration `json:"lifetime_ns"`
	Queue        int           `json:"queue"`
	Rates
	// Busy and Backpressured are the shares of the instances' lifetimes
	// spent useful and blocked on output.
	Busy          float64 `json:"busy"`
	Backpressured float64 `json:"backpressured"`
}

// Operators aggregates instances by operator, in name order.
func Operators(insts []InstanceStats) []OperatorStats {
	by := map[string]*OperatorStats{}
	for _, in := range insts {
		o := by[in.Operator]
		if o == nil {
			o = &OperatorStats{Operator: in.Operator, Source: in.Source}
			by[in.Operator] = o
		}
		o.Instances++
		o.RecordsIn += in.RecordsIn
		o.RecordsOut += in.RecordsOut
		o.BytesIn += in.BytesIn
		o.BytesOut += in.BytesOut
		o.Useful += in.Useful
		o.Idle += in.Idle
		o.Backpressure += in.Backpressure
		o.Lifetime += in.Lifetime
		o.Queue += in.Queue
		r := in.Rates()
		o.Processing += r.Processing
		o.Output += r.Output
		o.ObservedIn += r.ObservedIn
		o.ObservedOut += r.ObservedOut
	}
	out := make([]OperatorStats, 0, len(by))
	for _, o := range by {
		if o.Lifetime > 0 {
			o.Busy = o.Useful.Seconds() / o.Lifetime.Seconds()
			o.Backpressured = o.Backpressure.Seconds() / o.Lifetime.Seconds()
		}
		out = append(out, *o)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Operator < out[b].Operator })
	return out
}

// Instances returns every instance of every process.
func (js JobStats) Instances() []InstanceStats {
	var out []InstanceStats
	for _, p := range js.Processes {
		out = append(out, p.Instances...)
	}
	return out
}

// Operators aggregates the job's instances by operator.
func (js JobStats) Operators() []OperatorStats { return Operators(js.Instances()) }

// Loads sums the key-group loads of every process, per operator, in name
// order.
func (js JobStats) Loads() []KeyGroupLoad {
	by := map[string][]int64{}
	for _, p := range js.Processes {
		for _, l := range p.Loads {
			c := by[l.Operator]
			if len(c) < len(l.Counts) {
				c = append(c, make([]int64, len(l.Counts)-len(c))...)
			}
			for k, n := range l.Counts {
				c[k] += n
			}
			by[l.Operator] = c
		}
	}
	out := make([]KeyGroupLoad, 0, len(by))
	for op, c := range by {
		out = append(out, KeyGroupLoad{Operator: op, Counts: c})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Operator < out[b].Operator })
	return out
}

// AssignLoads fills the KeyGroupLo and KeyGroups of every instance of a
// keyed operator from the loads of every process summed (Loads): the
// records sent to the key groups the instance owns, which are the records
// it received. owner returns, for an operator's name, which instance owns
// a key group, or nil for an operator that is not keyed. The range runs
// from the instance's first key group to its last; a key group inside it
// that another instance owns counts 0.
func (js *JobStats) AssignLoads(owner func(op string) func(kg int) int) {
	by := map[string][]int64{}
	for _, l := range js.Loads() {
		by[l.Operator] = l.Counts
	}
	for p := range js.Processes {
		for i := range js.Processes[p].Instances {
			in := &js.Processes[p].Instances[i]
			c, ok := by[in.Operator]
			own := owner(in.Operator)
			if !ok || own == nil {
				continue
			}
			lo, hi := -1, -1
			for kg := range c {
				if own(kg) == in.Instance {
					if lo < 0 {
						lo = kg
					}
					hi = kg + 1
				}
			}
			if lo < 0 {
				continue
			}
			in.KeyGroupLo, in.KeyGroups = lo, make([]int64, hi-lo)
			for kg := lo; kg < hi; kg++ {
				if own(kg) == in.Instance {
					in.KeyGroups[kg-lo] = c[kg]
				}
			}
		}
	}
}
