package weir

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/weirstream/weir/internal/codec"
	"github.com/weirstream/weir/internal/progress"
)

const (
	tagMarker byte = iota
	tagBatch
	tagKeyed
	tagPartial
)

var errWire = errors.New("weir: malformed message from another process")

func appendMarker(buf []byte, m progress.Marker) []byte {
	buf = append(buf, tagMarker)
	buf = binary.AppendUvarint(buf, uint64(m.Epoch))
	buf = binary.AppendVarint(buf, m.Watermark)
	buf = binary.AppendVarint(buf, m.Cut)
	if m.Final {
		return append(buf, 1)
	}
	return append(buf, 0)
}

func decodeMarker(r *reader) (progress.Marker, error) {
	m := progress.Marker{Epoch: progress.Epoch(r.uvarint()), Watermark: r.varint(), Cut: r.varint()}
	switch r.byte() {
	case 0:
	case 1:
		m.Final = true
	default:
		r.fail()
	}
	return m, r.done()
}

// reader reads a message; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errWire
	}
	r.b = nil
}

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// section returns the next length-prefixed section.
func (r *reader) section() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d bytes left over", errWire, len(r.b))
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

func decodeNumbers[N int64 | uint64](r *reader, xs []N) []N {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return xs
	}
	var zero N
	_, signed := any(zero).(int64)
	for range n {
		if signed {
			xs = append(xs, N(r.varint()))
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

func newBatchWire[T any](size int, timed bool) (*batchWire[T], error) {
	c, err := codec.For[T]()
	if err != nil {
		return nil, err
	}
	return &batchWire[T]{c: c, pool: framePool[T](size, timed), timed: timed}, nil
}

func (w *batchWire[T]) encode(buf []byte, msg any) ([]byte, error) {
	b := msg.(*batch[T])
	v, ts := b.dense(&batch[T]{})
	buf = append(buf, tagBatch)
	buf = binary.AppendVarint(buf, b.unit)
	buf = appendSection(buf, func(buf []byte) []byte { return w.c.Append(buf, v) })
	buf = appendNumbers(buf, ts)
	return appendNumbers(buf, b.seq), nil
}

func (w *batchWire[T]) decode(buf []byte) (any, error) {
	b := w.pool.Get().(*batch[T])
	r := &reader{b: buf[1:]}
	b.unit = r.varint()
	var err error
	if b.v, err = w.c.Decode(r.section(), b.v[:0]); err != nil {
		return nil, err
	}
	b.ts = decodeNumbers(r, b.ts[:0])
	b.seq = decodeNumbers(r, b.seq[:0])
	if w.timed && len(b.ts) != len(b.v) || !w.timed && len(b.ts) != 0 || len(b.seq) != 0 && len(b.seq) != len(b.v) {
		return nil, fmt.Errorf("%w: %d records with %d times and %d sequence numbers", errWire, len(b.v), len(b.ts), len(b.seq))
	}
	return b, r.done()
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

func newKeyedWire[K comparable, T, A any](partials bool) (*keyedWire[K, T, A], error) {
	w := &keyedWire[K, T, A]{}
	var err error
	if w.k, err = codec.For[K](); err != nil {
		return nil, err
	}
	if w.v, err = codec.For[T](); err != nil {
		return nil, err
	}
	w.kpool = &sync.Pool{}
	w.kpool.New = func() any { return &kbatch[K, T]{pool: w.kpool} }
	if partials {
		if w.a, err = codec.For[A](); err != nil {
			return nil, err
		}
		w.ppool = &sync.Pool{}
		w.ppool.New = func() any { return &pbatch[K, A]{pool: w.ppool} }
	}
	return w, nil
}

func (w *keyedWire[K, T, A]) encode(buf []byte, msg any) ([]byte, error) {
	switch b := msg.(type) {
	case *kbatch[K, T]:
		buf = append(buf, tagKeyed)
		buf = binary.AppendUvarint(buf, uint64(len(b.recs)))
		ks, vs := make([]K, len(b.recs)), make([]T, len(b.recs))
		for i := range b.recs {
			r := &b.recs[i]
			buf = binary.LittleEndian.AppendUint64(buf, r.h)
			buf = binary.AppendVarint(buf, r.ts)
			ks[i], vs[i] = r.k, r.v
		}
		buf = appendSection(buf, func(buf []byte) []byte { return w.k.Append(buf, ks) })
		return appendSection(buf, func(buf []byte) []byte { return w.v.Append(buf, vs) }), nil
	case *pbatch[K, A]:
		buf = append(buf, tagPartial)
		buf = binary.AppendUvarint(buf, uint64(len(b.recs)))
		ks, as := make([]K, len(b.recs)), make([]A, len(b.recs))
		for i := range b.recs {
			p := &b.recs[i]
			buf = binary.LittleEndian.AppendUint64(buf, p.h)
			buf = binary.AppendVarint(buf, p.start)
			buf = binary.AppendVarint(buf, p.end)
			ks[i], as[i] = p.k, p.acc
		}
		buf = appendSection(buf, func(buf []byte) []byte { return w.k.Append(buf, ks) })
		return appendSection(buf, func(buf []byte) []byte { return w.a.Append(buf, as) }), nil
	}
	return buf, fmt.Errorf("weir: cannot send %T to another process", msg)
}

func (w *keyedWire[K, T, A]) decode(buf []byte) (any, error) {
	r := &reader{b: buf[1:]}
	n := r.uvarint()
	if n > uint64(len(r.b)/9) { // a record takes at least 9 bytes
		return nil, errWire
	}
	fixed := func() uint64 {
		if len(r.b) < 8 {
			r.fail()
			return 0
		}
		h := binary.LittleEndian.Uint64(r.b)
		r.b = r.b[8:]
		return h
	}
	switch buf[0] {
	case tagKeyed:
		b := w.kpool.Get().(*kbatch[K, T])
		b.recs = b.recs[:0]
		for range n {
			b.recs = append(b.recs, krec[K, T]{h: fixed(), ts: r.varint()})
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
		for i := range b.recs {
			b.recs[i].k, b.recs[i].v = ks[i], vs[i]
		}
		return b, r.done()
	case tagPartial:
		if w.a == nil {
			return nil, fmt.Errorf("%w: partials on an edge that carries none", errWire)
		}
		b := w.ppool.Get().(*pbatch[K, A])
		b.recs = b.recs[:0]
		for range n {
			b.recs = append(b.recs, partial[K, A]{h: fixed(), start: r.varint(), end: r.varint()})
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
		for i := range b.recs {
			b.recs[i].k, b.recs[i].acc = ks[i], as[i]
		}
		return b, r.done()
	}
	return nil, fmt.Errorf("%w: tag %d", errWire, buf[0])
}
