package dataflow

import (
	"sync"

	"github.com/weirstream/weir/internal/codec"
)

// Output is a connector that consumes the records of a stream (the Sink
// function attaches one to a stream). Write receives batches of records
// that it may read only during the call (copy what must be kept). By default
// a sink runs as one instance, so Write is never called concurrently; with
// the Parallelism option it runs as several instances that share the Sink
// value, and then the Output must be safe for concurrent use.
//
// If an Output also implements EpochSink, EndEpoch is called after the last
// record of each epoch has been written to the instance. Close is called
// once per instance after the final epoch, or not at all if the job fails;
// a sink fused after keyed operators whose instances run only while they
// own key groups (a job that rescales) is closed at the end of each of an
// instance's runs, and not at all for an instance that never runs.
type Output[T any] interface {
	Write(batch []T) error
	Close() error
}

// EpochSink is an Output that wants to know where epochs end, for example to
// commit output per epoch.
type EpochSink interface {
	EndEpoch(epoch uint64) error
}

// SinkFunc adapts a function to an Output with a no-op Close.
type SinkFunc[T any] func(batch []T) error

// Write implements Output.
func (f SinkFunc[T]) Write(batch []T) error { return f(batch) }

// Close implements Output.
func (f SinkFunc[T]) Close() error { return nil }

// Collect is an Output that keeps every record it receives, for tests and
// for results small enough to hold in memory. It is safe for concurrent
// use, so it may back a sink with several instances.
type Collect[T any] struct {
	mu   sync.Mutex
	recs []T
}

// Write implements Output.
func (c *Collect[T]) Write(batch []T) error {
	c.mu.Lock()
	c.recs = append(c.recs, batch...)
	c.mu.Unlock()
	return nil
}

// Close implements Output.
func (c *Collect[T]) Close() error { return nil }

// Records returns a copy of the records received so far.
func (c *Collect[T]) Records() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]T(nil), c.recs...)
}

// Snapshot implements Checkpointed: the records received so far.
func (c *Collect[T]) Snapshot() ([]byte, error) {
	cd, err := codec.For[T]()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return cd.Append(nil, c.recs), nil
}

// Restore implements Checkpointed: it replaces the records with those of
// a snapshot.
func (c *Collect[T]) Restore(data []byte) error {
	cd, err := codec.For[T]()
	if err != nil {
		return err
	}
	recs, err := cd.Decode(data, nil)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.recs = recs
	c.mu.Unlock()
	return nil
}
