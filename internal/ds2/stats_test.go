package ds2

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/metrics"
)

func inst(op string, i int, in, out int64, useful, life time.Duration) metrics.InstanceStats {
	return metrics.InstanceStats{Operator: op, Instance: i, RecordsIn: in, RecordsOut: out, Useful: useful, Lifetime: life}
}

// Two snapshots a second apart: a source of two instances reading
// 2000/s, a parse halving it at 2000/s an instance, a keyed window over
// four key groups (one idle) at 2000/s an instance though its instances
// did 800 and 200, a sink. The sizing reads the interval, not the
// totals, by the snapshots' clock (a source instance's lifetime grew by
// half a second only: one that read nothing, or started late, does not
// measure the interval), and the source keeps its instances.
func TestFromStats(t *testing.T) {
	tasks := []Task{
		{Name: "src", Source: true, Instances: 2},
		{Name: "parse", Upstream: []int{0}, Instances: 2},
		{Name: "win", Upstream: []int{1}, Keyed: true, Instances: 2},
		{Name: "sink", Upstream: []int{2}, Instances: 1},
	}
	ms := time.Millisecond
	prev := metrics.JobStats{Processes: []metrics.ProcessStats{{Time: 1e9,
		Instances: []metrics.InstanceStats{inst("src", 0, 50, 50, 5*ms, time.Second), inst("src", 1, 50, 50, 5*ms, 1500*ms),
			inst("parse", 0, 50, 25, 25*ms, time.Second), inst("parse", 1, 50, 25, 25*ms, time.Second),
			inst("win", 0, 40, 0, 20*ms, time.Second), inst("win", 1, 10, 0, 5*ms, time.Second),
			inst("sink", 0, 0, 0, 0, time.Second)},
		Loads: []metrics.KeyGroupLoad{{Operator: "win", Counts: []int64{100, 0, 100, 0}}},
	}}}
	cur := metrics.JobStats{Processes: []metrics.ProcessStats{{Time: 2e9,
		Instances: []metrics.InstanceStats{inst("src", 0, 1050, 1050, 105*ms, 2*time.Second), inst("src", 1, 1050, 1050, 105*ms, 2*time.Second),
			inst("parse", 0, 1050, 525, 525*ms, 2*time.Second), inst("parse", 1, 1050, 525, 525*ms, 2*time.Second),
			inst("win", 0, 840, 8, 420*ms, 2*time.Second), inst("win", 1, 210, 2, 105*ms, 2*time.Second),
			inst("sink", 0, 10, 0, 10*ms, 2*time.Second)},
		Loads: []metrics.KeyGroupLoad{{Operator: "win", Counts: []int64{300, 200, 500, 0}}},
	}}}
	ops, err := FromStats(tasks, prev, cur, nil)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return a > b*0.999 && a < b*1.001 }
	if o := ops[0]; !o.Source || !o.Keep || !near(o.Target, 2000) || !near(o.Processing, 20000) {
		t.Errorf("source %+v: want kept, target 2000/s, true rate 20000/s", o)
	}
	if o := ops[1]; !near(o.Processing, 4000) || !near(o.Output, 2000) || o.KeyGroups != nil {
		t.Errorf("parse %+v: want 4000/s in and 2000/s out over its two instances", o)
	}
	if o := ops[2]; !near(o.Processing, 4000) || !near(o.Output, 40) || !reflect.DeepEqual(o.KeyGroups, []float64{200, 200, 400, 0}) {
		t.Errorf("window %+v: want 4000/s, 40/s out, key groups [200 200 400 0] over the interval", o)
	}
	s, err := Size(ops, 1)
	if err != nil {
		t.Fatal(err)
	}
	// 2000/s read; parse: one instance of 2000/s; window: 1000/s on one;
	// sink: 10/s on one.
	if !reflect.DeepEqual(s.Parallelism, []int{2, 1, 1, 1}) || !near(s.Input[2], 1000) || !near(s.Input[3], 10) {
		t.Errorf("sizing %v, inputs %v; want [2 1 1 1], the window at 1000/s, the sink at 10/s", s.Parallelism, s.Input)
	}
	if _, err := FromStats(append(tasks, Task{Name: "gone", Upstream: []int{3}, Instances: 1}), prev, cur, nil); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("a task without figures: %v", err)
	}
	ops, _ = FromStats(tasks, prev, cur, map[string]float64{"src": 8000})
	if s, _ := Size(ops, 1); s.Parallelism[1] != 4 {
		t.Errorf("a source target of 8000/s: %v; want the parse at 4", s.Parallelism)
	}
	if HeldBack(prev, cur, []string{"src"}) {
		t.Error("a source never blocked is held back")
	}
	// Blocked on output for three quarters of the second, the source
	// would have read four times as much.
	cur.Processes[0].Instances[0].Backpressure = 750 * ms
	cur.Processes[0].Instances[1].Backpressure = 750 * ms
	ops, _ = FromStats(tasks, prev, cur, nil)
	if !near(ops[0].Target, 8000) || !HeldBack(prev, cur, []string{"src"}) {
		t.Errorf("a source blocked three quarters of the time: target %v, held back %v; want 8000, true", ops[0].Target, HeldBack(prev, cur, []string{"src"}))
	}
	// Readers that know their backlog: what arrived is what they read
	// plus the backlog's growth (300 and 200 more waiting; instance 1 did
	// not say before), whatever the time blocked.
	prev.Processes[0].Instances[0].Backlog, prev.Processes[0].Instances[0].KnowsBacklog = 100, true
	cur.Processes[0].Instances[0].Backlog, cur.Processes[0].Instances[0].KnowsBacklog = 400, true
	cur.Processes[0].Instances[1].Backlog, cur.Processes[0].Instances[1].KnowsBacklog = 200, true
	ops, _ = FromStats(tasks, prev, cur, nil)
	if !near(ops[0].Target, 2500) {
		t.Errorf("sources with backlogs growing by 300 and 200 after reading 2000 in a second: target %v; want 2500", ops[0].Target)
	}
	// One that reads and does not say: the estimate from blocked time.
	cur.Processes[0].Instances[1].KnowsBacklog = false
	if ops, _ = FromStats(tasks, prev, cur, nil); !near(ops[0].Target, 8000) {
		t.Errorf("a source instance that does not know its backlog: target %v; want the estimate, 8000", ops[0].Target)
	}
}
