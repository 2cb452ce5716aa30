package op

import "github.com/weirstream/weir/internal/dataflow"

// outBuf gathers the results of a keyed operator (a window, a join, a
// ranking) with their event times and pushes them a batch at a time.
type outBuf[O any] struct {
	size int
	out  dataflow.Pusher[O]
	outB dataflow.Batch[O]
}

// emit adds a result with event time ts, pushing the results once there
// is a batch of them.
func (w *outBuf[O]) emit(v O, ts int64) error {
	w.outB.V = append(w.outB.V, v)
	w.outB.Ts = append(w.outB.Ts, ts)
	if len(w.outB.V) >= w.size {
		return w.Flush()
	}
	return nil
}

// Flush pushes the results gathered so far.
func (w *outBuf[O]) Flush() error { return pushOut(w.out, &w.outB) }

// pushOut pushes the records gathered in b, if any, and empties b for
// more (its records are cleared: they may point into input buffers).
func pushOut[T any](out dataflow.Pusher[T], b *dataflow.Batch[T]) error {
	if len(b.V) == 0 {
		return nil
	}
	err := out.Push(b)
	clear(b.V)
	b.V, b.Ts = b.V[:0], b.Ts[:0]
	return err
}
