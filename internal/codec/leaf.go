package codec

import (
	"encoding/binary"
	"unsafe"
)

// boolNode: one byte, 0 or 1; any other byte is malformed.
func boolNode() *node {
	return &node{
		size: 1, min: 1, desc: "bool",
		enc: func(b []byte, p unsafe.Pointer) []byte {
			if *(*bool)(p) {
				return append(b, 1)
			}
			return append(b, 0)
		},
		dec: func(d *decoder, p unsafe.Pointer) error {
			c, err := d.byte()
			if err != nil {
				return err
			}
			if c > 1 {
				return malformed("bool byte %#x", c)
			}
			*(*bool)(p) = c == 1
			return nil
		},
	}
}

// fixedNode: a number of size bytes made of little-endian words of word
// bytes (integers, floats, complex numbers).
func fixedNode(desc string, size uintptr, word int) *node {
	if littleEndian || word == 1 {
		return runNode(desc, size)
	}
	return wordsNode(desc, size, word)
}

// wordsNode is fixedNode for a big-endian host: word by word.
func wordsNode(desc string, size uintptr, word int) *node {
	return &node{
		size: size, min: int(size), desc: desc,
		enc: func(b []byte, p unsafe.Pointer) []byte {
			for i := uintptr(0); i < size; i += uintptr(word) {
				q := unsafe.Add(p, i)
				switch word {
				case 2:
					b = binary.LittleEndian.AppendUint16(b, *(*uint16)(q))
				case 4:
					b = binary.LittleEndian.AppendUint32(b, *(*uint32)(q))
				default:
					b = binary.LittleEndian.AppendUint64(b, *(*uint64)(q))
				}
			}
			return b
		},
		dec: func(d *decoder, p unsafe.Pointer) error {
			if d.remaining() < int(size) {
				return malformed("truncated %s", desc)
			}
			for i := uintptr(0); i < size; i += uintptr(word) {
				q, in := unsafe.Add(p, i), d.b[d.pos+int(i):]
				switch word {
				case 2:
					*(*uint16)(q) = binary.LittleEndian.Uint16(in)
				case 4:
					*(*uint32)(q) = binary.LittleEndian.Uint32(in)
				default:
					*(*uint64)(q) = binary.LittleEndian.Uint64(in)
				}
			}
			d.pos += int(size)
			return nil
		},
	}
}

// runNode copies size bytes of memory as they are. Only for values whose
// memory image is their little-endian encoding, valid whatever the bytes.
func runNode(desc string, size uintptr) *node {
	n := int(size)
	dec := func(d *decoder, p unsafe.Pointer) error {
		if d.remaining() < n {
			return malformed("truncated input: %d bytes, want %d", d.remaining(), n)
		}
		copy(unsafe.Slice((*byte)(p), n), d.b[d.pos:])
		d.pos += n
		return nil
	}
	enc := func(b []byte, p unsafe.Pointer) []byte {
		return append(b, unsafe.Slice((*byte)(p), n)...)
	}
	switch n {
	case 1:
		enc = func(b []byte, p unsafe.Pointer) []byte { return append(b, *(*byte)(p)) }
	case 8:
		enc = func(b []byte, p unsafe.Pointer) []byte {
			return binary.LittleEndian.AppendUint64(b, *(*uint64)(p))
		}
		dec = func(d *decoder, p unsafe.Pointer) error {
			if d.remaining() < 8 {
				return malformed("truncated input: %d bytes, want 8", d.remaining())
			}
			*(*uint64)(p) = binary.LittleEndian.Uint64(d.b[d.pos:])
			d.pos += 8
			return nil
		}
	}
	return &node{size: size, min: n, flat: true, desc: desc, enc: enc, dec: dec}
}

// wordNode: an int, uint or uintptr, as 8 bytes little-endian whatever
// its size on this host; decoding checks the value fits.
func wordNode[W int | uint | uintptr](desc string) *node {
	var zero W
	if unsafe.Sizeof(zero) == 8 {
		return fixedNode(desc, 8, 8)
	}
	signed := W(0)-1 < 0
	return &node{
		size: unsafe.Sizeof(zero), min: 8, desc: desc,
		enc: func(b []byte, p unsafe.Pointer) []byte {
			if signed {
				return binary.LittleEndian.AppendUint64(b, uint64(int64(*(*W)(p))))
			}
			return binary.LittleEndian.AppendUint64(b, uint64(*(*W)(p)))
		},
		dec: func(d *decoder, p unsafe.Pointer) error {
			if d.remaining() < 8 {
				return malformed("truncated %s", desc)
			}
			u := binary.LittleEndian.Uint64(d.b[d.pos:])
			w := W(u)
			if signed && int64(w) != int64(u) || !signed && uint64(w) != u {
				return malformed("%d overflows %s on this host", u, desc)
			}
			*(*W)(p) = w
			d.pos += 8
			return nil
		},
	}
}

// stringNode: uvarint length, bytes. Decoded strings point into the batch
// body (a private copy).
func stringNode() *node {
	return &node{
		size: unsafe.Sizeof(""), min: 1, alias: true, str: true, desc: "string",
		enc: func(b []byte, p unsafe.Pointer) []byte {
			s := *(*string)(p)
			b = appendUvarint(b, uint64(len(s)))
			return append(b, s...)
		},
		dec: decString,
	}
}

func decString(d *decoder, p unsafe.Pointer) error {
	// Fast path: a length below 128 that fits.
	if b, pos := d.b, d.pos; pos < len(b) {
		if n := int(b[pos]); n < 0x80 && n < len(b)-pos {
			if n == 0 {
				*(*string)(p) = ""
			} else {
				*(*string)(p) = unsafe.String(&b[pos+1], n)
			}
			d.pos = pos + 1 + n
			return nil
		}
	}
	n, err := d.uvarint()
	if err != nil {
		return err
	}
	if n > uint64(d.remaining()) {
		return malformed("string length %d exceeds %d remaining bytes", n, d.remaining())
	}
	if n == 0 {
		*(*string)(p) = ""
		return nil
	}
	*(*string)(p) = unsafe.String(&d.b[d.pos], int(n))
	d.pos += int(n)
	return nil
}

// bytesNode: a slice of a byte kind: uvarint length+1 (0 for nil), bytes.
// Decoded slices point into the batch body, capacity capped at length.
func bytesNode() *node {
	return &node{
		size: unsafe.Sizeof([]byte(nil)), min: 1, alias: true, desc: "[]uint8",
		enc: func(b []byte, p unsafe.Pointer) []byte {
			s := *(*[]byte)(p)
			if s == nil {
				return append(b, 0)
			}
			b = appendUvarint(b, uint64(len(s))+1)
			return append(b, s...)
		},
		dec: func(d *decoder, p unsafe.Pointer) error {
			v, err := d.uvarint()
			if err != nil {
				return err
			}
			switch n := v - 1; {
			case v == 0:
				*(*[]byte)(p) = nil
			case n > uint64(d.remaining()):
				return malformed("byte slice length %d exceeds %d remaining bytes", n, d.remaining())
			case n == 0:
				*(*[]byte)(p) = []byte{}
			default:
				end := d.pos + int(n)
				*(*[]byte)(p) = d.b[d.pos:end:end]
				d.pos = end
			}
			return nil
		},
	}
}
