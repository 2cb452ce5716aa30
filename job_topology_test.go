package weir_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// Topology lists the tasks a plan fuses, with their parallelism, layers
// and the exchanges between them, for a job whose plan is known by hand:
// a parallel source fused with a stateless filter, a keyed window at the
// workers' parallelism, a second source joined in through a union, and a
// sink gathering everything.
func TestTopologyOfKnownPlan(t *testing.T) {
	j := weir.NewJob("topo", weir.Workers(3), weir.KeyGroups(16))
	a := weir.Filter(weir.Source(j, "a", weir.SliceSource[rec]{}), even, weir.Stateless(), weir.Name("even"))
	b := weir.Source(j, "b", weir.SliceSource[rec]{}, weir.Parallelism(1))
	timed := weir.EventTime(weir.Union(a, b), func(r rec) int64 { return r.TS }, time.Millisecond, weir.Name("ts"))
	counts := weir.Count(weir.Window(weir.KeyBy(timed, recKey), weir.Tumbling(time.Second), weir.WindowOptions(weir.Name("win"))))
	weir.Sink(counts, &weir.Collect[weir.WindowResult[string, int64]]{}, weir.Name("out"))
	got, err := j.Topology()
	if err != nil {
		t.Fatal(err)
	}
	type task struct {
		name       string
		par, layer int
		kind       string
		keyed      bool
	}
	var tasks []task
	for _, tt := range got.Tasks {
		tasks = append(tasks, task{tt.Name, tt.Parallelism, tt.Layer, tt.Kind, tt.Keyed})
	}
	want := []task{
		{"a→even", 3, 0, "source", false},
		{"b", 1, 0, "source", false},
		{"union3→ts", 3, 1, "inboxed", false},
		{"win", 3, 2, "inboxed", true},
		{"out", 1, 3, "sink", false},
	}
	if !reflect.DeepEqual(tasks, want) {
		t.Errorf("tasks\n got %+v\nwant %+v", tasks, want)
	}
	wantEdges := []weir.TopologyEdge{{From: 0, To: 2, Exchange: "forward"}, {From: 1, To: 2, Exchange: "round-robin split"},
		{From: 2, To: 3, Exchange: "keygroup shuffle"}, {From: 3, To: 4, Exchange: "gather"}}
	if !reflect.DeepEqual(got.Edges, wantEdges) {
		t.Errorf("edges\n got %+v\nwant %+v", got.Edges, wantEdges)
	}
	if got.Job != "topo" || got.Processes != 1 || got.Workers != 3 || got.KeyGroups != 16 {
		t.Errorf("job %q, %d processes, %d workers, %d key groups; want topo, 1, 3, 16", got.Job, got.Processes, got.Workers, got.KeyGroups)
	}
}

// A job that cannot be planned has no topology, and says why.
func TestTopologyOfEmptyJob(t *testing.T) {
	if _, err := weir.NewJob("empty").Topology(); err == nil {
		t.Error("an empty job has a topology")
	}
}
