package main

import (
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/ui"
)

// scripted is one instance of scriptedJob: what it does per second.
type scripted struct {
	op, inst, proc   int
	useful, idle, bp float64 // seconds per second
	rate             int64   // records in per second
	kgLo             int
	loads            []int64 // records per second per key group
	waiting          bool    // not running: it owns no key group now
}

var (
	scriptOps = []string{"src", "win", "collect"}
	script    = []scripted{
		{op: 0, inst: 0, proc: 0, useful: .2, idle: .7, bp: .1, rate: 1000},
		{op: 0, inst: 1, proc: 1, useful: .3, idle: .5, bp: .2, rate: 1000},
		{op: 1, inst: 0, proc: 0, useful: .9, idle: .1, rate: 800, kgLo: 0, loads: []int64{100, 100, 100, 100, 100, 100, 100, 100}},
		{op: 1, inst: 1, proc: 1, useful: .5, idle: .5, rate: 800, kgLo: 8, loads: []int64{10, 10, 10, 10, 10, 10, 40, 700}},
		{op: 1, inst: 2, proc: 0, waiting: true},
		{op: 2, inst: 0, proc: 0, useful: .05, idle: .95, rate: 10},
	}
)

// scriptedJob is a 2-process job whose figures follow script: each call
// of Stats is one second later in the summaries' time, whatever the
// clock says, so every rate and share the page derives is known exactly.
type scriptedJob struct {
	mu     sync.Mutex
	calls  int64
	t0     time.Time
	traced time.Duration
}

func (j *scriptedJob) Topology() (weir.Topology, error) {
	return weir.Topology{Job: "scripted", Processes: 2, Workers: 1, KeyGroups: 16, Tasks: []weir.TopologyTask{
		{ID: 0, Name: "src", Parallelism: 2, Kind: "source", Operators: []weir.TopologyOperator{{Name: "src", Op: "source"}}},
		{ID: 1, Name: "win", Parallelism: 2, Kind: "inboxed", Keyed: true, Layer: 1, Operators: []weir.TopologyOperator{{Name: "win", Op: "window"}}},
		{ID: 2, Name: "collect", Parallelism: 1, Kind: "sink", Layer: 2, Operators: []weir.TopologyOperator{{Name: "collect", Op: "sink"}}},
	}, Edges: []weir.TopologyEdge{{From: 0, To: 1, Exchange: "keygroup shuffle"}, {From: 1, To: 2, Exchange: "gather"}}}, nil
}

func (j *scriptedJob) Stats() weir.JobStats {
	j.mu.Lock()
	j.calls++
	n := j.calls
	j.mu.Unlock()
	now := j.t0.Add(time.Duration(n) * time.Second)
	secs := func(f float64) time.Duration { return time.Duration(f * float64(n) * float64(time.Second)) }
	st := weir.JobStats{Job: "scripted", Self: 0}
	for p := range 2 {
		ps := metrics.ProcessStats{Process: p, Time: now.UnixNano(), Epoch: uint64(n), Watermark: now.UnixMilli() - 1500,
			Latency: metrics.LatencyStats{Count: n, P50: 2 * time.Millisecond, P90: 4 * time.Millisecond, P99: 8 * time.Millisecond, Max: 12 * time.Millisecond}}
		for _, s := range script {
			if s.proc != p {
				continue
			}
			is := metrics.InstanceStats{Operator: scriptOps[s.op], Instance: s.inst, Process: p, Source: s.op == 0,
				RecordsIn: s.rate * n, RecordsOut: s.rate * n, Useful: secs(s.useful), Idle: secs(s.idle), Backpressure: secs(s.bp), KeyGroupLo: s.kgLo,
				Running: !s.waiting}
			for _, l := range s.loads {
				is.KeyGroups = append(is.KeyGroups, l*n)
			}
			if s.op == 0 {
				ps.Records += is.RecordsIn
			}
			ps.Instances = append(ps.Instances, is)
		}
		for id := range 3 {
			ps.Checkpoints = append(ps.Checkpoints, metrics.CheckpointStats{ID: uint64(id + 1), Epoch: uint64(2 * id), Start: j.t0.Add(time.Duration(2*id) * time.Second).UnixNano(),
				Duration: 300 * time.Millisecond, Alignment: 20 * time.Millisecond, Bytes: 1 << 20, Complete: true})
		}
		st.Processes = append(st.Processes, ps)
	}
	st.Critical = []metrics.Participation{
		{Group: "operator", Name: "win", CP: .62, Busy: .35}, {Group: "operator", Name: "src", CP: .30, Busy: .55},
		{Group: "operator", Name: "collect", CP: .08, Busy: .10}, {Group: "worker", Name: "1", CP: .55, Busy: .5},
		{Group: "worker", Name: "0", CP: .45, Busy: .6}, {Group: "type", Name: "processing", CP: .7, Busy: .6},
		{Group: "type", Name: "send", CP: .3, Busy: .1},
	}
	return st
}

func (j *scriptedJob) TraceFor(d time.Duration) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.traced = d
	return nil
}

func (j *scriptedJob) Tracing() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.traced > 0
}

// panelFigures is what the page shows of every panel.
type panelFigures struct {
	Samples         int
	Throughput, Lag float64
	Busy, BP, Rate  map[string]float64
	Heat            map[string]float64
	Checkpoints     int
	CheckpointRows  int
	CP              int
	Bottleneck      string
	Tracing         string
	Running         []string // the instance table's rows of running instances, "operator#instance"
	Rows            int
}

const readAll = `(() => {
  if (!document.getElementById("updated")) return {Samples: 0};
  const num = (s) => (s === "" || s == null ? -1 : Number(s));
  const f = {Samples: Number(document.getElementById("updated").dataset.samples) || 0,
    Throughput: num(document.getElementById("throughput").dataset.value), Lag: num(document.getElementById("watermark-lag").dataset.value),
    Busy: {}, BP: {}, Rate: {}, Heat: {}, Running: [], Rows: 0,
    Checkpoints: document.querySelectorAll("#checkpoints .ckpt").length,
    CheckpointRows: document.querySelectorAll("#checkpoint-table tr").length - 1,
    CP: document.querySelectorAll("#cp .cp-row").length,
    Bottleneck: document.getElementById("bottleneck").textContent,
    Tracing: document.getElementById("trace-btn").dataset.tracing || ""};
  for (const n of document.querySelectorAll("#graph .node")) {
    f.Busy[n.dataset.task] = num(n.dataset.busy); f.BP[n.dataset.task] = num(n.dataset.backpressure); f.Rate[n.dataset.task] = num(n.dataset.rate);
  }
  for (const r of document.querySelectorAll("#heatmap .heat-row")) f.Heat[r.dataset.instance] = num(r.dataset.total);
  for (const r of document.querySelectorAll("#instances tr")) {
    if (r.dataset.running === undefined) continue;
    f.Rows++;
    if (r.dataset.running === "1") f.Running.push(r.dataset.operator + "#" + r.dataset.instance);
  }
  return f;
})()`

// Every panel of the page draws what a job's figures say: the busy and
// backpressured shares and rates per operator summed over its instances
// across processes, the throughput, the watermark lag, a heat-map row per
// keyed instance with its records per second, the checkpoints, the
// critical-participation rows and the sentence naming the bottleneck;
// the trace button switches tracing on for 10 s. The figures come from
// a scripted job, so the page's arithmetic is checked against sums made
// here by hand.
func TestDashboardFigures(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("this test needs Debian's chromium at %s (%v): install it with `apt-get install -y chromium` (.ci/run does)", chromium, err)
	}
	job := &scriptedJob{t0: time.Now()}
	srv := httptest.NewServer(ui.Handler(job))
	defer srv.Close()
	b := startBrowser(t, srv.URL+"/", 1400, 1000)
	var f panelFigures
	for deadline := time.Now().Add(time.Minute); f.Samples < 6; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the page drew %d samples in a minute", f.Samples)
		}
		f = panelFigures{}
		b.eval(t, readAll, &f)
	}
	for op, name := range scriptOps {
		var useful, total, bp float64
		var rate int64
		for _, s := range script {
			if s.op == op {
				useful, total, bp, rate = useful+s.useful, total+s.useful+s.idle+s.bp, bp+s.bp, rate+s.rate
			}
		}
		near(t, name+" busy", f.Busy[name], useful/total, .001)
		near(t, name+" backpressure", f.BP[name], bp/total, .001)
		near(t, name+" records/s", f.Rate[name], float64(rate), .1)
	}
	near(t, "throughput", f.Throughput, 2000, .001)
	near(t, "watermark lag (ms)", f.Lag, 1500, 1) // watermarks are whole milliseconds
	for _, s := range script {
		if s.loads == nil {
			continue
		}
		var sum int64
		for _, l := range s.loads {
			sum += l
		}
		label := fmt.Sprintf("%s #%d · p%d", scriptOps[s.op], s.inst, s.proc)
		near(t, "heat map row "+label, f.Heat[label], float64(sum), .05)
	}
	var running []string
	for _, s := range script {
		if !s.waiting {
			running = append(running, fmt.Sprintf("%s#%d", scriptOps[s.op], s.inst))
		}
	}
	slices.Sort(running)
	slices.Sort(f.Running)
	if f.Rows != len(script) || !slices.Equal(f.Running, running) {
		t.Errorf("the instance table has %d rows (want %d), running %v (want %v)", f.Rows, len(script), f.Running, running)
	}
	if len(f.Heat) != 2 || f.Checkpoints != 6 || f.CheckpointRows != 3 || f.CP != 7 {
		t.Errorf("heat map rows %v (want 2), checkpoint bars %d (want 6), table rows %d (want 3), CP rows %d (want 7)", f.Heat, f.Checkpoints, f.CheckpointRows, f.CP)
	}
	for _, want := range []string{"The bottleneck is win", "62 %", "Busy time alone would point at src", "Worker 1"} {
		if !strings.Contains(f.Bottleneck, want) {
			t.Errorf("bottleneck sentence %q does not say %q", f.Bottleneck, want)
		}
	}
	shot := filepath.Join(os.TempDir(), "weir-dashboard-figures.png")
	b.screenshot(t, 1400, shot)
	t.Logf("screenshot of every panel: %s", shot)
	var clicked bool
	b.eval(t, `(() => { document.getElementById("trace-btn").click(); return true; })()`, &clicked)
	for deadline := time.Now().Add(time.Minute); !job.Tracing(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the trace button did not switch tracing on")
		}
	}
	if job.traced != 10*time.Second {
		t.Errorf("the trace button asked for %s, want 10s", job.traced)
	}
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s: the page shows %g, want %g", what, got, want)
	}
}
