package dataflow

import (
	"sync"

	"github.com/weirstream/weir/internal/progress"
)

// Batch is the unit that crosses every boundary inside a job: records with
// their event times (ts is nil on a stream without event time, else
// parallel to v). If sel is not nil, only the records at the positions it
// lists, in that order, are in the batch: a filter selects records without
// copying them. A batch pushed into a fused operator is borrowed for the
// call; a batch sent through an inbox is dense (sel is nil) and owned by the
// receiver, which releases it to its pool.
//
// In an ordered job, a batch that crosses an ordered exchange is a frame:
// unit numbers the source batch it comes from, and inside keyed regions
// seq (parallel to v, like ts) orders the records of one unit (see
// internal/exchange/ordered.go).
type Batch[T any] struct {
	V    []T
	Ts   []int64
	Sel  []int32
	Seq  []uint64
	Unit int64
	Pool *sync.Pool
}

// Len is the number of records in the batch.
func (b *Batch[T]) Len() int {
	if b.Sel != nil {
		return len(b.Sel)
	}
	return len(b.V)
}

// Dense returns the records (and times) of b as contiguous slices, copying
// selected records into the scratch batch d if b has a selection.
func (b *Batch[T]) Dense(d *Batch[T]) ([]T, []int64) {
	if b.Sel == nil {
		return b.V, b.Ts
	}
	d.V = d.V[:0]
	for _, i := range b.Sel {
		d.V = append(d.V, b.V[i])
	}
	if b.Ts == nil {
		return d.V, nil
	}
	d.Ts = d.Ts[:0]
	for _, i := range b.Sel {
		d.Ts = append(d.Ts, b.Ts[i])
	}
	return d.V, d.Ts
}

func (b *Batch[T]) Release() {
	if b.Pool == nil {
		return
	}
	clear(b.V) // drop references so pooled batches do not pin records
	b.V = b.V[:0]
	b.Ts = b.Ts[:0]
	b.Seq = b.Seq[:0]
	b.Pool.Put(b)
}

// Krec is a record on its way to a keyed operator: the exchange computes
// the key and its hash once, and the receiver reuses both.
type Krec[K comparable, T any] struct {
	H  uint64
	Ts int64
	K  K
	V  T
}

type Kbatch[K comparable, T any] struct {
	Recs []Krec[K, T]
	Pool *sync.Pool
}

func (b *Kbatch[K, T]) Release() {
	clear(b.Recs)
	b.Recs = b.Recs[:0]
	b.Pool.Put(b)
}

// Pusher is a fused operator's input: it processes a borrowed batch
// synchronously and forwards markers.
type Pusher[T any] interface {
	Push(b *Batch[T]) error
	Mark(m progress.Marker) error
}

// tee pushes to several consumers of one output.
type tee[T any] []Pusher[T]

func (t tee[T]) Push(b *Batch[T]) error {
	for _, p := range t {
		if err := p.Push(b); err != nil {
			return err
		}
	}
	return nil
}

func (t tee[T]) Mark(m progress.Marker) error {
	for _, p := range t {
		if err := p.Mark(m); err != nil {
			return err
		}
	}
	return nil
}

// Combine makes one pusher of an output's consumers.
func Combine[T any](outs []any) Pusher[T] {
	switch len(outs) {
	case 0:
		return tee[T](nil)
	case 1:
		return outs[0].(Pusher[T])
	}
	t := make(tee[T], len(outs))
	for i, o := range outs {
		t[i] = o.(Pusher[T])
	}
	return t
}
