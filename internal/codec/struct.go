package codec

import (
	"encoding/binary"
	"unsafe"
)

// Field kinds a struct's loop handles inline, without calling the field's
// node.
const (
	fieldCall   uint8 = iota // call the node
	fieldString              // a string
	fieldWord                // 8 flat bytes
	fieldRun                 // n flat bytes
)

// field is a flattened struct field.
type field struct {
	kind uint8
	off  uintptr
	n    int
	enc  encFn
	dec  decFn
}

// structFns returns the encoder and decoder of a flattened struct: a loop
// over its fields, with strings and flat runs handled inline.
func structFns(ops []op) (encFn, decFn) {
	switch len(ops) {
	case 0:
		return encEmpty, decEmpty
	case 1:
		if o := ops[0]; o.off == 0 {
			return o.n.enc, o.n.dec
		}
	}
	fs := make([]field, len(ops))
	for i, o := range ops {
		f := field{off: o.off, n: int(o.n.size), enc: o.n.enc, dec: o.n.dec}
		switch {
		case o.n.str:
			f.kind = fieldString
		case o.n.flat && o.n.size == 8:
			f.kind = fieldWord
		case o.n.flat:
			f.kind = fieldRun
		}
		fs[i] = f
	}
	enc := func(b []byte, p unsafe.Pointer) []byte {
		for i := range fs {
			f := &fs[i]
			q := unsafe.Add(p, f.off)
			switch f.kind {
			case fieldString:
				s := *(*string)(q)
				b = append(appendUvarint(b, uint64(len(s))), s...)
			case fieldWord:
				b = binary.LittleEndian.AppendUint64(b, *(*uint64)(q))
			case fieldRun:
				b = append(b, unsafe.Slice((*byte)(q), f.n)...)
			default:
				b = f.enc(b, q)
			}
		}
		return b
	}
	dec := func(d *decoder, p unsafe.Pointer) error {
		for i := range fs {
			f := &fs[i]
			q := unsafe.Add(p, f.off)
			switch f.kind {
			case fieldString:
				if err := decString(d, q); err != nil {
					return err
				}
			case fieldWord, fieldRun:
				if d.remaining() < f.n {
					return malformed("truncated input: %d bytes, want %d", d.remaining(), f.n)
				}
				if f.kind == fieldWord {
					*(*uint64)(q) = binary.LittleEndian.Uint64(d.b[d.pos:])
				} else {
					copy(unsafe.Slice((*byte)(q), f.n), d.b[d.pos:])
				}
				d.pos += f.n
			default:
				if err := f.dec(d, q); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return enc, dec
}
