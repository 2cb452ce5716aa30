//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation
// counts are only meaningful without it.

package op

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/state"
	"github.com/weirstream/weir/internal/window"
)

type allocRec struct {
	User, Ad string
	TS, Val  int64
}

// allocBatch is 1024 records over 64 keys, all in the event-time window
// [0, 1000).
func allocBatch() []allocRec {
	v := make([]allocRec, 1024)
	for i := range v {
		v[i] = allocRec{User: fmt.Sprintf("u%d", i%97), Ad: fmt.Sprintf("ad%d", i%64), TS: int64(i % 1000), Val: int64(i)}
	}
	return v
}

// repeatReader returns the same batch on every Read.
type repeatReader struct{ v []allocRec }

func (r *repeatReader) Read() ([]allocRec, error) { return r.v, nil }
func (r *repeatReader) Close() error              { return nil }

// countPusher is a terminal pusher that only counts.
type countPusher[T any] struct{ n int }

func (c *countPusher[T]) Push(b *dataflow.Batch[T]) error { c.n += b.Len(); return nil }
func (c *countPusher[T]) Mark(progress.Marker) error      { return nil }

const maxAllocsPerBatch = 2

// chain builds source -> map -> filter (a selection) -> event time -> map
// (the selection path, copying times) -> filterRef -> out, as
// Job.instantiate fuses them.
func chain(out dataflow.Pusher[allocRec]) *sourceTask[allocRec] {
	var p dataflow.Pusher[allocRec] = out
	p = &filterRefOp[allocRec]{f: func(r *allocRec) bool { return r.Val%5 != 0 }, selected: selected[allocRec]{out: p}}
	p = &mapOp[allocRec, allocRec]{f: func(r allocRec) allocRec { r.Val++; return r }, mapped: mapped[allocRec]{out: p}}
	p = newEventTimeOp("eventtime", func(r allocRec) int64 { return r.TS }, 10, *dataflow.NewTimeRange(), p)
	p = &filterOp[allocRec]{f: func(r allocRec) bool { return r.Val%2 == 0 }, selected: selected[allocRec]{out: p}}
	p = &mapRefOp[allocRec, allocRec]{f: func(r *allocRec) allocRec { c := *r; c.Val *= 3; return c }, mapped: mapped[allocRec]{out: p}}
	return &sourceTask[allocRec]{r: &repeatReader{allocBatch()}, out: p}
}

func checkAllocs(t *testing.T, what string, f func()) {
	t.Helper()
	for range 100 { // warm up buffers, pools and state
		f()
	}
	a := testing.AllocsPerRun(200, f)
	t.Logf("%s: %.2f allocations per 1024-record batch", what, a)
	if a > maxAllocsPerBatch {
		t.Errorf("%s: %.2f allocations per 1024-record batch, want at most %d", what, a, maxAllocsPerBatch)
	}
}

func TestAllocsFusedChain(t *testing.T) {
	out := &countPusher[allocRec]{}
	src := chain(out)
	checkAllocs(t, "map/filter chain", func() {
		if _, err := src.Poll(0); err != nil {
			t.Fatal(err)
		}
	})
	if out.n == 0 {
		t.Fatal("nothing reached the end of the chain")
	}
}

// drainTask counts and releases the keyed batches it receives.
type drainTask[K comparable, T any] struct{ n *atomic.Int64 }

func (d drainTask[K, T]) Batch(port int, b any) error {
	kb := b.(*dataflow.Kbatch[K, T])
	d.n.Add(int64(len(kb.Recs)))
	kb.Release()
	return nil
}

func (d drainTask[K, T]) Mark(progress.Marker) error { return nil }

func TestAllocsKeyedExchange(t *testing.T) {
	const receivers = 4
	rt := runtime.New(runtime.Config{})
	var got atomic.Int64
	var outlets []runtime.Outlet
	for i := range receivers {
		in := rt.NewInbox("window", i, 16)
		outlets = append(outlets, in.Sender(0))
		rt.AddTask("window", i, in, drainTask[string, allocRec]{&got}, true)
	}
	ex := exchange.NewKeyEx[string, allocRec](func(r allocRec) string { return r.Ad }, partition.Contiguous(partition.DefaultKeyGroups, len(outlets)), outlets, 256, false)
	src := chain(ex)
	done := make(chan error, 1)
	go func() { done <- rt.Run(context.Background()) }()

	checkAllocs(t, "map/filter/keyed exchange", func() {
		if _, err := src.Poll(0); err != nil {
			t.Fatal(err)
		}
	})
	if err := src.Mark(progress.Marker{Watermark: progress.MaxWatermark, Final: true}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got.Load() == 0 {
		t.Fatal("no records reached the receivers")
	}
}

// windowBatches returns a function that feeds the same 1024 keyed records
// to w's Batch, in a pooled kbatch as an inbox delivers them.
func windowBatches[A any](w *windowTask[string, allocRec, A, int64]) func() error {
	return allocKbatches(w.Batch)
}

// allocKbatches returns a function that feeds the same 1024 keyed records
// (keyed by Ad) to batch, in a pooled kbatch as an inbox delivers them.
func allocKbatches(batch func(port int, b any) error) func() error {
	h, _ := partition.Hasher[string]()
	tmpl := make([]dataflow.Krec[string, allocRec], 0, 1024)
	for _, r := range allocBatch() {
		tmpl = append(tmpl, dataflow.Krec[string, allocRec]{H: h(r.Ad), Ts: r.TS, K: r.Ad, V: r})
	}
	pool := &sync.Pool{}
	pool.New = func() any {
		return &dataflow.Kbatch[string, allocRec]{Recs: make([]dataflow.Krec[string, allocRec], 0, 1024), Pool: pool}
	}
	return func() error {
		kb := pool.Get().(*dataflow.Kbatch[string, allocRec])
		kb.Recs = append(kb.Recs[:0], tmpl...)
		return batch(0, kb)
	}
}

func TestAllocsWindowBatch(t *testing.T) {
	count := Aggregator[allocRec, int64, int64]{
		Add:    func(a int64, _ allocRec) int64 { return a + 1 },
		Merge:  func(a, b int64) int64 { return a + b },
		Result: func(a int64) int64 { return a },
	}
	for _, spec := range []window.Spec{
		{Kind: window.Tumbling, Size: 1000},
		{Kind: window.Sliding, Size: 1000, Slide: 250},
		{Kind: window.Session, Gap: 5000},
		{Kind: window.Global},
	} {
		t.Run(spec.String(), func(t *testing.T) {
			out, late := &countPusher[WindowResult[string, int64]]{}, &countPusher[allocRec]{}
			w := &windowTask[string, allocRec, int64, int64]{agg: count, late: late, lateCount: &atomic.Int64{},
				windowed: newWindowed[string, int64](spec.String(), spec, *dataflow.NewTimeRange(), 1024, dataflow.Pusher[WindowResult[string, int64]](out),
					keyedStore[string, window.Set[int64]](newKeyedTable[string, window.Set[int64]]())),
			}
			w.lo, w.hi = spec.Range()
			feed := windowBatches(w)
			checkAllocs(t, "window "+spec.String(), func() {
				if err := feed(); err != nil {
					t.Fatal(err)
				}
			})
			if n := w.table.(*state.Table[string, window.Set[int64]]).Len(); n != 64 || late.n != 0 {
				t.Fatalf("%d keys, %d late records; want 64 and 0", n, late.n)
			}
		})
	}
}
