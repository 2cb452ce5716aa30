package weir

import (
	"sync"

	"github.com/weirstream/weir/internal/progress"
)

// batch is the unit that crosses every boundary inside a job: records with
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
// ordered.go).
type batch[T any] struct {
	v    []T
	ts   []int64
	sel  []int32
	seq  []uint64
	unit int64
	pool *sync.Pool
}

// len is the number of records in the batch.
func (b *batch[T]) len() int {
	if b.sel != nil {
		return len(b.sel)
	}
	return len(b.v)
}

// dense returns the records (and times) of b as contiguous slices, copying
// selected records into the scratch batch d if b has a selection.
func (b *batch[T]) dense(d *batch[T]) ([]T, []int64) {
	if b.sel == nil {
		return b.v, b.ts
	}
	d.v = d.v[:0]
	for _, i := range b.sel {
		d.v = append(d.v, b.v[i])
	}
	if b.ts == nil {
		return d.v, nil
	}
	d.ts = d.ts[:0]
	for _, i := range b.sel {
		d.ts = append(d.ts, b.ts[i])
	}
	return d.v, d.ts
}

func (b *batch[T]) release() {
	if b.pool == nil {
		return
	}
	clear(b.v) // drop references so pooled batches do not pin records
	b.v = b.v[:0]
	b.ts = b.ts[:0]
	b.seq = b.seq[:0]
	b.pool.Put(b)
}

// krec is a record on its way to a keyed operator: the exchange computes
// the key and its hash once, and the receiver reuses both.
type krec[K comparable, T any] struct {
	h  uint64
	ts int64
	k  K
	v  T
}

type kbatch[K comparable, T any] struct {
	recs []krec[K, T]
	pool *sync.Pool
}

func (b *kbatch[K, T]) release() {
	clear(b.recs)
	b.recs = b.recs[:0]
	b.pool.Put(b)
}

// pusher is a fused operator's input: it processes a borrowed batch
// synchronously and forwards markers.
type pusher[T any] interface {
	push(b *batch[T]) error
	mark(m progress.Marker) error
}

// tee pushes to several consumers of one output.
type tee[T any] []pusher[T]

func (t tee[T]) push(b *batch[T]) error {
	for _, p := range t {
		if err := p.push(b); err != nil {
			return err
		}
	}
	return nil
}

func (t tee[T]) mark(m progress.Marker) error {
	for _, p := range t {
		if err := p.mark(m); err != nil {
			return err
		}
	}
	return nil
}

// combine makes one pusher of an output's consumers.
func combine[T any](outs []any) pusher[T] {
	switch len(outs) {
	case 0:
		return tee[T](nil)
	case 1:
		return outs[0].(pusher[T])
	}
	t := make(tee[T], len(outs))
	for i, o := range outs {
		t[i] = o.(pusher[T])
	}
	return t
}
