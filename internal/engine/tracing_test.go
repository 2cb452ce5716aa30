package engine

import (
	"cmp"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/trace"
	"github.com/weirstream/weir/internal/trace/critical"
)

// The tracing service, stepped by hand: it writes every event to the
// file, analyses each window once it is lag behind now, and keeps the
// newest window's summary, which equals the offline analysis of it.
func TestTracingSteps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.trace")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tr := &tracing{t: trace.NewTracer(), procs: 1, lag: 2 * cpWindow, file: f, whole: true}
	base := time.Unix(1000, 0)
	tr.w = trace.NewWriter(f, 0, 1, base.UnixNano())
	tr.t.SetOn(true)
	fast := tr.t.NewRecorder(trace.Worker{Name: "fast"})
	slow := tr.t.NewRecorder(trace.Worker{Name: "slow", Instance: 1})
	ms := int64(time.Millisecond)
	var all []trace.Event
	// Every 100 ms, fast works 30 ms, sends to slow and waits for credit
	// (slow's inbox is full); slow receives and works the rest of the
	// time: slow is the bottleneck.
	for i := range int64(50) {
		at := base.UnixNano() + i*100*ms
		evs := []struct {
			r *trace.Recorder
			e trace.Event
		}{
			{fast, trace.Event{Kind: trace.Processing, Op: fast.Op, Start: at, End: at + 30*ms}},
			{fast, trace.Event{Kind: trace.Send, Start: at + 30*ms, End: at + 31*ms, Channel: 9, Seq: uint64(i)}},
			{fast, trace.Event{Kind: trace.WaitCredit, Start: at + 31*ms, End: at + 100*ms}},
			{slow, trace.Event{Kind: trace.Processing, Op: slow.Op, Start: at, End: at + 32*ms}},
			{slow, trace.Event{Kind: trace.Recv, Start: at + 32*ms, End: at + 33*ms, Channel: 9, Seq: uint64(i)}},
			{slow, trace.Event{Kind: trace.Processing, Op: slow.Op, Start: at + 33*ms, End: at + 100*ms}},
		}
		for _, x := range evs {
			x.r.Add(x.e)
			x.e.Worker = map[*trace.Recorder]uint32{fast: 0, slow: 1}[x.r]
			all = append(all, x.e)
		}
	}
	fast.Flush()
	slow.Flush()
	if err := tr.step(base.Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	// Windows [1000 s, 1001 s) .. [1002 s, 1003 s) are due; the newest
	// summary is the third's.
	if got := tr.next; got != base.Add(3*time.Second).UnixNano() {
		t.Fatalf("next window at %d, want %d", got, base.Add(3*time.Second).UnixNano())
	}
	whole := &trace.Trace{Processes: 1, Workers: tr.t.Workers(), Ops: tr.t.Ops(), Events: all}
	s := critical.NewSummary(whole)
	s.Add(critical.NewIndex(whole).Window(base.Add(2*time.Second).UnixNano(), base.Add(3*time.Second).UnixNano()))
	want := s.Rows()
	if len(tr.critical) == 0 || !reflect.DeepEqual(tr.critical, want) {
		t.Fatalf("online summary %v, want %v", tr.critical, want)
	}
	if b := critical.Bottleneck(tr.critical); !strings.HasPrefix(b, "operator slow ") {
		t.Errorf("bottleneck %q; want the slow operator", b)
	}
	if err := tr.close(); err != nil {
		t.Fatal(err)
	}
	got, err := trace.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Each recorder hands its events on in order, one recorder after the
	// other.
	order := func(ev []trace.Event) {
		slices.SortStableFunc(ev, func(a, b trace.Event) int { return cmp.Compare(a.Worker, b.Worker) })
	}
	order(all)
	if !reflect.DeepEqual(got.Events, all) || len(got.Workers) != 2 {
		t.Errorf("the file holds %d events of %d workers, want %d of 2", len(got.Events), len(got.Workers), len(all))
	}
}

// TraceFor's time up, the next step switches tracing off.
func TestTracingFor(t *testing.T) {
	tr := &tracing{t: trace.NewTracer(), procs: 1, lag: 2 * cpWindow}
	j := &Job{tracer: tr.t, tracing: tr}
	if err := j.TraceFor(0); err == nil {
		t.Error("TraceFor(0) accepted")
	}
	if err := j.TraceFor(time.Minute); err != nil || !j.Tracing() {
		t.Fatalf("TraceFor: %v, tracing %v", err, j.Tracing())
	}
	tr.step(time.Now())
	if !j.Tracing() {
		t.Fatal("tracing off before its time")
	}
	tr.step(time.Now().Add(2 * time.Minute))
	if j.Tracing() {
		t.Fatal("tracing still on after its time")
	}
	tr.close()
	if err := j.TraceFor(time.Second); err == nil {
		t.Error("TraceFor after the run accepted")
	}
}
