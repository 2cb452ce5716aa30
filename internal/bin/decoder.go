package bin

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrTruncated reports input that ends early or has a malformed varint.
var ErrTruncated = errors.New("truncated or corrupt")

// Decoder reads fields from B; the first error sticks in Err, and every
// read after it returns zero.
type Decoder struct {
	B   []byte
	Err error
}

// Fail records that the input ends early, unless an error came first.
func (d *Decoder) Fail() {
	if d.Err == nil {
		d.Err = ErrTruncated
	}
}

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if d.Err != nil || len(d.B) < 1 {
		d.Fail()
		return 0
	}
	v := d.B[0]
	d.B = d.B[1:]
	return v
}

// Uint64 reads a little-endian uint64.
func (d *Decoder) Uint64() uint64 {
	if d.Err != nil || len(d.B) < 8 {
		d.Fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.B)
	d.B = d.B[8:]
	return v
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	v, k := binary.Uvarint(d.B)
	if d.Err != nil || k <= 0 {
		d.Fail()
		return 0
	}
	d.B = d.B[k:]
	return v
}

// Varint reads a signed varint.
func (d *Decoder) Varint() int64 {
	v, k := binary.Varint(d.B)
	if d.Err != nil || k <= 0 {
		d.Fail()
		return 0
	}
	d.B = d.B[k:]
	return v
}

// String reads a uvarint length and that many bytes.
func (d *Decoder) String() string {
	n := d.Uvarint()
	if d.Err != nil || n > uint64(len(d.B)) {
		d.Fail()
		return ""
	}
	v := string(d.B[:n])
	d.B = d.B[n:]
	return v
}

// Int reads a uvarint that must be below limit.
func (d *Decoder) Int(limit int64) int64 {
	v := d.Uvarint()
	if d.Err == nil && v >= uint64(limit) {
		d.Err = fmt.Errorf("corrupt: %d where at most %d fits", v, limit-1)
	}
	return int64(v)
}
