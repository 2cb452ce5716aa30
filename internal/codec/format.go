package codec

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"unsafe"
)

// Batch formats: the first byte of every batch.
const (
	formatCompiled byte = 'C' // fingerprint, count, body length, body
	formatRaw      byte = 'R' // fingerprint, element size, count, memory image
)

// maxEmpty bounds the count of zero-size values a batch or slice may
// declare: they take no input bytes, so nothing else bounds it.
const maxEmpty = 1 << 30

// maxMin saturates minimum encoded sizes.
const maxMin = math.MaxInt32

// littleEndian reports whether this host stores integers little-endian, so
// that memory images of numbers are their wire encoding.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// sliceHeader is the memory layout of every slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// fingerprint hashes a type description.
func fingerprint(desc string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(desc))
	return h.Sum64()
}

// malformed returns an error wrapping ErrMalformed.
func malformed(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrMalformed)...)
}

// appendHeader appends a batch's format byte and fingerprint.
func appendHeader(b []byte, format byte, fp uint64) []byte {
	b = append(b, format)
	return binary.LittleEndian.AppendUint64(b, fp)
}

// appendUvarint is binary.AppendUvarint with the one-byte case inlined.
func appendUvarint(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	return binary.AppendUvarint(b, v)
}

// uvarintLen is the length of v's uvarint encoding.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// patchLen writes the length of everything after buf[at+reserved:] as a
// uvarint in the reserved bytes at buf[at:], padded with continuation
// bytes if shorter; if longer, it moves the body to make room.
func patchLen(buf []byte, at, reserved int) []byte {
	start := at + reserved
	n := len(buf) - start
	if k := uvarintLen(uint64(n)); k > reserved {
		buf = append(buf, make([]byte, k-reserved)...)
		copy(buf[at+k:], buf[start:start+n])
		reserved = k
	}
	v := uint64(n)
	for i := range reserved - 1 {
		buf[at+i] = byte(v) | 0x80
		v >>= 7
	}
	buf[at+reserved-1] = byte(v)
	return buf
}

// decoder reads a batch.
type decoder struct {
	b   []byte
	pos int
}

func (d *decoder) remaining() int { return len(d.b) - d.pos }

func (d *decoder) uvarint() (uint64, error) {
	if d.pos < len(d.b) && d.b[d.pos] < 0x80 {
		d.pos++
		return uint64(d.b[d.pos-1]), nil
	}
	return d.uvarintSlow()
}

func (d *decoder) uvarintSlow() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.pos:])
	if n <= 0 {
		if n == 0 {
			return 0, malformed("truncated varint")
		}
		return 0, malformed("varint overflows 64 bits")
	}
	d.pos += n
	return v, nil
}

func (d *decoder) byte() (byte, error) {
	if d.pos >= len(d.b) {
		return 0, malformed("truncated input")
	}
	c := d.b[d.pos]
	d.pos++
	return c, nil
}

// header reads a batch's format byte and fingerprint and checks them.
func (d *decoder) header(format byte, fp uint64, name string) error {
	if d.remaining() < 9 {
		return malformed("truncated batch header")
	}
	if got := d.b[d.pos]; got != format {
		return fmt.Errorf("batch format %q, want %q: %w", got, format, ErrMismatch)
	}
	if got := binary.LittleEndian.Uint64(d.b[d.pos+1:]); got != fp {
		return fmt.Errorf("batch fingerprint %#016x does not match %s (%#016x): %w", got, name, fp, ErrMismatch)
	}
	d.pos += 9
	return nil
}

// checkCount checks that n values of at least min encoded bytes each fit
// in rem bytes, so that nothing is allocated for values the input cannot
// hold.
func checkCount(n uint64, min, rem int) error {
	if min == 0 {
		if n > maxEmpty {
			return malformed("%d empty values exceed the limit of %d", n, maxEmpty)
		}
		return nil
	}
	if n > uint64(rem/min) {
		return malformed("%d values of at least %d bytes exceed %d remaining bytes", n, min, rem)
	}
	return nil
}

func satAdd(a, b int) int { return min(a+b, maxMin) }

func satMul(a, n int) int {
	if a != 0 && n > maxMin/a {
		return maxMin
	}
	return min(a*n, maxMin)
}
