package exchange

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/weirstream/weir/internal/codec"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/progress"
)

const (
	tagMarker byte = iota
	tagBatch
	tagKeyed
	tagPartial
)

var errWire = errors.New("weir: malformed message from another process")

// A marker's last byte holds its flags. (Before transport protocol
// version 3 it was 0 or 1, Final; a peer of another version is refused at
// the handshake.)
const (
	markerFinal byte = 1 << iota
	markerIdle
)

func appendMarker(buf []byte, m progress.Marker) []byte {
	buf = append(buf, tagMarker)
	buf = binary.AppendUvarint(buf, uint64(m.Epoch))
	buf = binary.AppendVarint(buf, m.Watermark)
	buf = binary.AppendVarint(buf, m.Cut)
	var f byte
	if m.Final {
		f |= markerFinal
	}
	if m.Idle {
		f |= markerIdle
	}
	return append(buf, f)
}

func decodeMarker(r *Reader) (progress.Marker, error) {
	m := progress.Marker{Epoch: progress.Epoch(r.uvarint()), Watermark: r.Varint(), Cut: r.Varint()}
	f := r.byte()
	if f&^(markerFinal|markerIdle) != 0 {
		r.Fail()
	}
	m.Final, m.Idle = f&markerFinal != 0, f&markerIdle != 0
	return m, r.Done()
}

// Reader reads a message; the first error sticks.
type Reader struct {
	B   []byte
	err error
}

func (r *Reader) Fail() {
	if r.err == nil {
		r.err = errWire
	}
	r.B = nil
}

func (r *Reader) byte() byte {
	if len(r.B) < 1 {
		r.Fail()
		return 0
	}
	c := r.B[0]
	r.B = r.B[1:]
	return c
}

func (r *Reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.B)
	if n <= 0 {
		r.Fail()
		return 0
	}
	r.B = r.B[n:]
	return v
}

func (r *Reader) Varint() int64 {
	v, n := binary.Varint(r.B)
	if n <= 0 {
		r.Fail()
		return 0
	}
	r.B = r.B[n:]
	return v
}

// section returns the next length-prefixed section.
func (r *Reader) section() []byte {
	n := r.uvarint()
	if n > uint64(len(r.B)) {
		r.Fail()
		return nil
	}
	s := r.B[:n]
	r.B = r.B[n:]
	return s
}

func (r *Reader) Done() error {
	if r.err == nil && len(r.B) != 0 {
		r.err = fmt.Errorf("%w: %d bytes left over", errWire, len(r.B))
	}
	return r.err
}

// appendSection appends what f appends, prefixed by its length.
func appendSection(buf []byte, f func([]byte) []byte) []byte {
	// Reserve the largest varint, then move the section down if the
	// length is shorter.
	at := len(buf)
	buf = append(buf, make([]byte, binary.MaxVarintLen64)...)
	start := len(buf)
	buf = f(buf)
	n := len(buf) - start
	var hdr [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(hdr[:], uint64(n))
	copy(buf[at:], hdr[:h])
	copy(buf[at+h:], buf[start:])
	return buf[:at+h+n]
}

// appendNumbers appends a count and the numbers of xs as varints (zigzag
// for signed ones); decodeNumbers reads them back, appending to xs.
func appendNumbers[N int64 | uint64](buf []byte, xs []N) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(xs)))
	for _, x := range xs {
		switch x := any(x).(type) {
		case int64:
			buf = binary.AppendVarint(buf, x)
		case uint64:
			buf = binary.AppendUvarint(buf, x)
		}
	}
	return buf
}

func decodeNumbers[N int64 | uint64](r *Reader, xs []N) []N {
	n := r.uvarint()
	if n > uint64(len(r.B)) {
		r.Fail()
		return xs
	}
	var zero N
	_, signed := any(zero).(int64)
	for range n {
		if signed {
			xs = append(xs, N(r.Varint()))
		} else {
			xs = append(xs, N(r.uvarint()))
		}
	}
	return xs
}

// batchWire carries *batch[T]: records, event times, and in an ordered
// job the unit number and sequence numbers.
type batchWire[T any] struct {
	c     codec.Codec[T]
	pool  *sync.Pool
	timed bool
}

func NewBatchWire[T any](size int, timed bool) (*batchWire[T], error) {
	c, err := codec.For[T]()
	if err != nil {
		return nil, err
	}
	return &batchWire[T]{c: c, pool: framePool[T](size, timed), timed: timed}, nil
}

func (w *batchWire[T]) Encode(buf []byte, msg any) ([]byte, error) {
	b := msg.(*dataflow.Batch[T])
	v, ts := b.Dense(&dataflow.Batch[T]{})
	buf = append(buf, tagBatch)
	buf = binary.AppendVarint(buf, b.Unit)
	buf = appendSection(buf, func(buf []byte) []byte { return w.c.Append(buf, v) })
	buf = appendNumbers(buf, ts)
	return appendNumbers(buf, b.Seq), nil
}

func (w *batchWire[T]) Decode(buf []byte) (any, error) {
	b := w.pool.Get().(*dataflow.Batch[T])
	r := &Reader{B: buf[1:]}
	b.Unit = r.Varint()
	var err error
	if b.V, err = w.c.Decode(r.section(), b.V[:0]); err != nil {
		return nil, err
	}
	b.Ts = decodeNumbers(r, b.Ts[:0])
	b.Seq = decodeNumbers(r, b.Seq[:0])
	if w.timed && len(b.Ts) != len(b.V) || !w.timed && len(b.Ts) != 0 || len(b.Seq) != 0 && len(b.Seq) != len(b.V) {
		return nil, fmt.Errorf("%w: %d records with %d times and %d sequence numbers", errWire, len(b.V), len(b.Ts), len(b.Seq))
	}
	return b, r.Done()
}

// keyedWire carries *kbatch[K, T] (records with their key and hash, to a
// window or join) and, into a pre-aggregating window, *pbatch[K, A].
type keyedWire[K comparable, T, A any] struct {
	k     codec.Codec[K]
	v     codec.Codec[T]
	a     codec.Codec[A] // nil: no partials on this edge
	kpool *sync.Pool
	ppool *sync.Pool
}

func NewKeyedWire[K comparable, T, A any](partials bool) (*keyedWire[K, T, A], error) {
	w := &keyedWire[K, T, A]{}
	var err error
	if w.k, err = codec.For[K](); err != nil {
		return nil, err
	}
	if w.v, err = codec.For[T](); err != nil {
		return nil, err
	}
	w.kpool = &sync.Pool{}
	w.kpool.New = func() any { return &dataflow.Kbatch[K, T]{Pool: w.kpool} }
	if partials {
		if w.a, err = codec.For[A](); err != nil {
			return nil, err
		}
		w.ppool = &sync.Pool{}
		w.ppool.New = func() any { return &Pbatch[K, A]{pool: w.ppool} }
	}
	return w, nil
}

func (w *keyedWire[K, T, A]) Encode(buf []byte, msg any) ([]byte, error) {
	switch b := msg.(type) {
	case *dataflow.Kbatch[K, T]:
		buf = append(buf, tagKeyed)
		buf = binary.AppendUvarint(buf, uint64(len(b.Recs)))
		ks, vs := make([]K, len(b.Recs)), make([]T, len(b.Recs))
		for i := range b.Recs {
			r := &b.Recs[i]
			buf = binary.LittleEndian.AppendUint64(buf, r.H)
			buf = binary.AppendVarint(buf, r.Ts)
			ks[i], vs[i] = r.K, r.V
		}
		buf = appendSection(buf, func(buf []byte) []byte { return w.k.Append(buf, ks) })
		return appendSection(buf, func(buf []byte) []byte { return w.v.Append(buf, vs) }), nil
	case *Pbatch[K, A]:
		buf = append(buf, tagPartial)
		buf = binary.AppendUvarint(buf, uint64(len(b.Recs)))
		ks, as := make([]K, len(b.Recs)), make([]A, len(b.Recs))
		for i := range b.Recs {
			p := &b.Recs[i]
			buf = binary.LittleEndian.AppendUint64(buf, p.H)
			buf = binary.AppendVarint(buf, p.Start)
			buf = binary.AppendVarint(buf, p.End)
			ks[i], as[i] = p.K, p.Acc
		}
		buf = appendSection(buf, func(buf []byte) []byte { return w.k.Append(buf, ks) })
		return appendSection(buf, func(buf []byte) []byte { return w.a.Append(buf, as) }), nil
	}
	return buf, fmt.Errorf("weir: cannot send %T to another process", msg)
}

func (w *keyedWire[K, T, A]) Decode(buf []byte) (any, error) {
	r := &Reader{B: buf[1:]}
	n := r.uvarint()
	if n > uint64(len(r.B)/9) { // a record takes at least 9 bytes
		return nil, errWire
	}
	fixed := func() uint64 {
		if len(r.B) < 8 {
			r.Fail()
			return 0
		}
		h := binary.LittleEndian.Uint64(r.B)
		r.B = r.B[8:]
		return h
	}
	switch buf[0] {
	case tagKeyed:
		b := w.kpool.Get().(*dataflow.Kbatch[K, T])
		b.Recs = b.Recs[:0]
		for range n {
			b.Recs = append(b.Recs, dataflow.Krec[K, T]{H: fixed(), Ts: r.Varint()})
		}
		ks, err := w.k.Decode(r.section(), nil)
		if err != nil {
			return nil, err
		}
		vs, err := w.v.Decode(r.section(), nil)
		if err != nil {
			return nil, err
		}
		if uint64(len(ks)) != n || uint64(len(vs)) != n {
			return nil, errWire
		}
		for i := range b.Recs {
			b.Recs[i].K, b.Recs[i].V = ks[i], vs[i]
		}
		return b, r.Done()
	case tagPartial:
		if w.a == nil {
			return nil, fmt.Errorf("%w: partials on an edge that carries none", errWire)
		}
		b := w.ppool.Get().(*Pbatch[K, A])
		b.Recs = b.Recs[:0]
		for range n {
			b.Recs = append(b.Recs, Partial[K, A]{H: fixed(), Start: r.Varint(), End: r.Varint()})
		}
		ks, err := w.k.Decode(r.section(), nil)
		if err != nil {
			return nil, err
		}
		as, err := w.a.Decode(r.section(), nil)
		if err != nil {
			return nil, err
		}
		if uint64(len(ks)) != n || uint64(len(as)) != n {
			return nil, errWire
		}
		for i := range b.Recs {
			b.Recs[i].K, b.Recs[i].Acc = ks[i], as[i]
		}
		return b, r.Done()
	}
	return nil, fmt.Errorf("%w: tag %d", errWire, buf[0])
}
