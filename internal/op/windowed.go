package op

import (
	"fmt"
	"math"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/window"
)

// windowed is the skeleton of a keyed window operator's instance, which
// Aggregate's windows and Join share: the table of window sets by key,
// the watermark and the watermark at which some window is due, the
// results with their event times, and firing, flushing, the watermark's
// checkpoint and the table's snapshot and restore. The operator adds its
// records to the table and says, per fired window, what its results are.
type windowed[K comparable, S, O any] struct {
	name string
	spec window.Spec
	held dataflow.TimeRange // the times results may have
	outBuf[O]
	table keyedStore[K, window.Set[S]]
	next  int64 // the watermark at which some window needs attention
	wm    int64
}

func newWindowed[K comparable, S, O any](name string, spec window.Spec, held dataflow.TimeRange, size int,
	out dataflow.Pusher[O], table keyedStore[K, window.Set[S]]) windowed[K, S, O] {
	return windowed[K, S, O]{name: name, spec: spec, held: held, outBuf: outBuf[O]{size: size, out: out}, table: table,
		next: math.MaxInt64, wm: progress.NoWatermark}
}

// due notes that window win needs attention once the watermark reaches
// its end plus the lateness.
func (w *windowed[K, S, O]) due(win *window.Win[S]) {
	w.next = min(w.next, window.Due(win, w.spec.Lateness))
}

// advance takes m's watermark and fires the windows it makes due:
// results emits each fired window's results (and returns the first
// error, after which no more are emitted); the results are flushed.
func (w *windowed[K, S, O]) advance(m progress.Marker, results func(k K, win *window.Win[S]) error) error {
	w.wm = max(w.wm, m.Watermark)
	if w.wm < w.next {
		return nil
	}
	next := int64(math.MaxInt64)
	var err error
	w.table.DeleteFunc(func(k K, set *window.Set[S]) bool {
		next = min(next, set.Fire(w.wm, w.spec.Lateness, func(win *window.Win[S]) {
			if err == nil {
				err = results(k, win)
			}
		}))
		return len(set.W) == 0
	})
	w.next = next
	if err != nil {
		return err
	}
	return w.Flush()
}

// checkHeld fails the results of window win of key k if the windows
// downstream cannot hold their event time.
func (w *windowed[K, S, O]) checkHeld(k K, win *window.Win[S], what, has string) error {
	if w.held.Holds(win.End - 1) {
		return nil
	}
	return fmt.Errorf("weir: %s: the %s of window [%d, %d) of key %s %s event time %d, outside the range the windows downstream can hold [%d, %d]",
		w.name, what, win.Start, win.End, dataflow.ShowRecord(k), has, win.End-1, w.held.Lo, w.held.Hi)
}

func (w *windowed[K, S, O]) Watermark() int64          { return w.wm }
func (w *windowed[K, S, O]) RestoreWatermark(wm int64) { w.wm = max(w.wm, wm) }

func (w *windowed[K, S, O]) SnapshotKeyed(op string, groups int, out []checkpoint.StateBlob) ([]checkpoint.StateBlob, error) {
	return snapshotTable(w.table, w.wm, op, groups, out)
}

func (w *windowed[K, S, O]) RestoreKeyed(blobs [][]byte) error {
	wm, err := restoreTable(w.table, blobs, func(set *window.Set[S]) {
		for i := range set.W {
			w.due(&set.W[i])
		}
	})
	if len(blobs) > 0 {
		w.wm = max(w.wm, wm)
	}
	return err
}
