package codec

import (
	"bytes"
	"fmt"
	"slices"
	"unsafe"
)

// compiledCodec encodes a batch as a header (format, fingerprint, count,
// body length) and a body: each value in turn, encoded by its compiled
// node.
type compiledCodec[T any] struct {
	name string
	fp   uint64
	root *node
}

// beginBatch appends a compiled batch's header for count values and
// reserves room for the body length, to be written by patchLen(buf, at,
// reserved) once the body, of about est bytes, is appended.
func beginBatch(buf []byte, fp uint64, count, est int) (b []byte, at, reserved int) {
	buf = appendHeader(buf, formatCompiled, fp)
	buf = appendUvarint(buf, uint64(count))
	reserved = uvarintLen(uint64(est))
	at = len(buf)
	buf = slices.Grow(buf, reserved+est)
	return buf[:at+reserved], at, reserved
}

// batch reads a compiled batch's header and returns its count and body;
// the count is checked against the body's length for values of at least
// min bytes. If alias, the body is a private copy.
func (d *decoder) batch(fp uint64, name string, min int, alias bool) (int, []byte, error) {
	if err := d.header(formatCompiled, fp, name); err != nil {
		return 0, nil, err
	}
	count, err := d.uvarint()
	if err != nil {
		return 0, nil, err
	}
	n, err := d.uvarint()
	if err != nil {
		return 0, nil, err
	}
	if n > uint64(d.remaining()) {
		return 0, nil, malformed("body of %d bytes exceeds %d remaining bytes", n, d.remaining())
	}
	body := d.b[d.pos : d.pos+int(n)]
	d.pos += int(n)
	if err := checkCount(count, min, len(body)); err != nil {
		return 0, nil, err
	}
	if alias && len(body) > 0 {
		body = bytes.Clone(body)
	}
	return int(count), body, nil
}

func (c *compiledCodec[T]) Append(buf []byte, vs []T) []byte {
	// Reserve one byte for the body length, encode the first value, and
	// estimate the body's length from it (with a margin: the length is
	// padded if it takes fewer bytes than reserved, and the body moved if
	// more).
	buf, at, reserved := beginBatch(buf, c.fp, len(vs), 0)
	if len(vs) == 0 {
		return patchLen(buf, at, reserved)
	}
	enc := c.root.enc
	buf = enc(buf, unsafe.Pointer(&vs[0]))
	first := len(buf) - at - reserved
	est := first * len(vs)
	if r := uvarintLen(uint64(est + est/2)); r > reserved {
		buf = slices.Grow(buf, r-reserved+est-first)
		buf = buf[:len(buf)+r-reserved]
		copy(buf[at+r:], buf[at+reserved:at+reserved+first])
		reserved = r
	}
	for i := 1; i < len(vs); i++ {
		buf = enc(buf, unsafe.Pointer(&vs[i]))
	}
	return patchLen(buf, at, reserved)
}

func (c *compiledCodec[T]) Decode(buf []byte, vs []T) ([]T, error) {
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

func (c *compiledCodec[T]) decodeBatch(d *decoder, vs []T) ([]T, error) {
	count, body, err := d.batch(c.fp, c.name, c.root.min, c.root.alias)
	if err != nil {
		return vs, err
	}
	old := len(vs)
	vs = slices.Grow(vs, count)[:old+count]
	if c.root.min == 0 {
		clear(vs[old:])
		return vs, nil
	}
	bd := decoder{b: body}
	dec := c.root.dec
	for i := old; i < len(vs); i++ {
		if err := dec(&bd, unsafe.Pointer(&vs[i])); err != nil {
			return vs, fmt.Errorf("record %d: %w", i-old, err)
		}
	}
	if bd.remaining() != 0 {
		return vs, malformed("%d bytes after the last record", bd.remaining())
	}
	return vs, nil
}

// stringCodec is the compiled codec of a string kind, with the loops
// specialised. Decoded strings share one copy of the batch body.
type stringCodec[T any] struct {
	name string
	fp   uint64
}

func (c *stringCodec[T]) Append(buf []byte, vs []T) []byte {
	ss := unsafe.Slice((*string)(unsafe.Pointer(unsafe.SliceData(vs))), len(vs))
	est := 0
	for _, s := range ss {
		est += uvarintLen(uint64(len(s))) + len(s)
	}
	buf, at, reserved := beginBatch(buf, c.fp, len(vs), est)
	for _, s := range ss {
		buf = appendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	return patchLen(buf, at, reserved)
}

func (c *stringCodec[T]) Decode(buf []byte, vs []T) ([]T, error) {
	start := len(vs)
	d := decoder{b: buf}
	for d.remaining() > 0 {
		at := d.pos
		count, body, err := d.batch(c.fp, c.name, 1, true)
		if err == nil {
			old := len(vs)
			vs = slices.Grow(vs, count)[:old+count]
			bd := decoder{b: body}
			for i := old; i < len(vs) && err == nil; i++ {
				if err = decString(&bd, unsafe.Pointer(&vs[i])); err != nil {
					err = fmt.Errorf("record %d: %w", i-old, err)
				}
			}
			if err == nil && bd.remaining() != 0 {
				err = malformed("%d bytes after the last record", bd.remaining())
			}
		}
		if err != nil {
			clear(vs[start:])
			return vs[:start], fmt.Errorf("codec: %s: batch at byte %d: %w", c.name, at, err)
		}
	}
	return vs, nil
}
