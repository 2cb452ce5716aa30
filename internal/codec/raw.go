package codec

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unsafe"
)

// maxSpans bounds the padding and bool ranges of a raw layout; a type
// with more is compiled instead.
const maxSpans = 256

// span is a byte range [off, off+n) of a value.
type span struct{ off, n int }

// rawLayout describes a pointer-free type of fixed layout, encoded as its
// memory image.
type rawLayout struct {
	size  int
	fp    uint64
	pads  []span // padding, zeroed on encode so encodings are deterministic
	bools []span // bools, which must decode as 0 or 1
}

// rawLayoutOf returns the raw layout of t, if t is made only of bools,
// numbers, arrays and structs.
func rawLayoutOf(t reflect.Type) (*rawLayout, bool) {
	l := &rawLayout{size: int(t.Size())}
	var desc strings.Builder
	if !l.walk(t, 0, &desc) {
		return nil, false
	}
	end := "le"
	if !littleEndian {
		end = "be"
	}
	l.fp = fingerprint(fmt.Sprintf("R1/%s/%d/%s", end, l.size, desc.String()))
	return l, true
}

// walk adds the spans of a value of type t at offset off, and its shape
// (kinds, offsets) to desc.
func (l *rawLayout) walk(t reflect.Type, off int, desc *strings.Builder) bool {
	switch t.Kind() {
	case reflect.Bool:
		l.bools = addSpan(l.bools, span{off, 1})
		desc.WriteString("bool")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		fmt.Fprintf(desc, "%s%d", t.Kind(), t.Size())
	case reflect.Array:
		fmt.Fprintf(desc, "[%d]", t.Len())
		if t.Len() == 0 {
			return true
		}
		e := &rawLayout{}
		if !e.walk(t.Elem(), 0, desc) {
			return false
		}
		es := int(t.Elem().Size())
		if len(e.pads) == 0 && len(e.bools) == 1 && e.bools[0] == (span{0, es}) {
			l.bools = addSpan(l.bools, span{off, es * t.Len()})
			break
		}
		for i := range t.Len() {
			if len(e.pads)+len(e.bools) == 0 || len(l.pads)+len(l.bools) > maxSpans {
				break
			}
			for _, s := range e.pads {
				l.pads = addSpan(l.pads, span{off + i*es + s.off, s.n})
			}
			for _, s := range e.bools {
				l.bools = addSpan(l.bools, span{off + i*es + s.off, s.n})
			}
		}
	case reflect.Struct:
		desc.WriteString("{")
		end := 0
		for i := range t.NumField() {
			f := t.Field(i)
			fo := int(f.Offset)
			if fo > end {
				l.pads = addSpan(l.pads, span{off + end, fo - end})
			}
			fmt.Fprintf(desc, "%d:", fo)
			if !l.walk(f.Type, off+fo, desc) {
				return false
			}
			desc.WriteString(";")
			end = max(end, fo+int(f.Type.Size()))
		}
		if sz := int(t.Size()); sz > end {
			l.pads = addSpan(l.pads, span{off + end, sz - end})
		}
		desc.WriteString("}")
	default:
		return false
	}
	return len(l.pads)+len(l.bools) <= maxSpans
}

// addSpan appends s, merging it with the last span if adjacent.
func addSpan(ss []span, s span) []span {
	if k := len(ss) - 1; k >= 0 && ss[k].off+ss[k].n == s.off {
		ss[k].n += s.n
		return ss
	}
	return append(ss, s)
}

// rawCodec encodes a batch as a header (format, fingerprint, element size,
// count) and the memory image of the values, padding zeroed.
type rawCodec[T any] struct {
	name string
	l    *rawLayout
}

func (c *rawCodec[T]) Append(buf []byte, vs []T) []byte {
	buf = appendHeader(buf, formatRaw, c.l.fp)
	buf = appendUvarint(buf, uint64(c.l.size))
	buf = appendUvarint(buf, uint64(len(vs)))
	n := len(vs) * c.l.size
	if n == 0 {
		return buf
	}
	at := len(buf)
	buf = append(buf, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vs))), n)...)
	if len(c.l.pads) > 0 {
		p := unsafe.Pointer(&buf[at])
		for range vs {
			for _, s := range c.l.pads {
				clearSpan(unsafe.Add(p, s.off), s.n)
			}
			p = unsafe.Add(p, c.l.size)
		}
	}
	return buf
}

// clearSpan zeroes n bytes at p.
func clearSpan(p unsafe.Pointer, n int) {
	switch n {
	case 1:
		*(*[1]byte)(p) = [1]byte{}
	case 2:
		*(*[2]byte)(p) = [2]byte{}
	case 4:
		*(*[4]byte)(p) = [4]byte{}
	case 7:
		*(*[7]byte)(p) = [7]byte{}
	default:
		clear(unsafe.Slice((*byte)(p), n))
	}
}

func (c *rawCodec[T]) Decode(buf []byte, vs []T) ([]T, error) {
	start := len(vs)
	d := decoder{b: buf}
	for d.remaining() > 0 {
		at := d.pos
		var err error
		if vs, err = c.decodeBatch(&d, vs); err != nil {
			clear(vs[start:])
			return vs[:start], fmt.Errorf("codec: %s: batch at byte %d: %w", c.name, at, err)
		}
	}
	return vs, nil
}

func (c *rawCodec[T]) decodeBatch(d *decoder, vs []T) ([]T, error) {
	if err := d.header(formatRaw, c.l.fp, c.name); err != nil {
		return vs, err
	}
	size, err := d.uvarint()
	if err != nil {
		return vs, err
	}
	if size != uint64(c.l.size) {
		return vs, fmt.Errorf("element size %d, want %d: %w", size, c.l.size, ErrMismatch)
	}
	count, err := d.uvarint()
	if err != nil {
		return vs, err
	}
	if err := checkCount(count, c.l.size, d.remaining()); err != nil {
		return vs, err
	}
	n := int(count) * c.l.size
	data := d.b[d.pos : d.pos+n]
	if len(c.l.bools) > 0 {
		for base := 0; base < n; base += c.l.size {
			for _, s := range c.l.bools {
				for i := base + s.off; i < base+s.off+s.n; i++ {
					if data[i] > 1 {
						return vs, malformed("record %d: bool byte %#x", base/c.l.size, data[i])
					}
				}
			}
		}
	}
	old := len(vs)
	vs = slices.Grow(vs, int(count))[:old+int(count)]
	if n > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&vs[old])), n), data)
	}
	d.pos += n
	return vs, nil
}
