package bin

import (
	"encoding/binary"
	"errors"
	"testing"
)

func TestDecoder(t *testing.T) {
	b := []byte{7}
	b = binary.LittleEndian.AppendUint64(b, 1<<40)
	b = binary.AppendUvarint(b, 300)
	b = binary.AppendVarint(b, -5)
	b = binary.AppendUvarint(b, 9)
	d := Decoder{B: b}
	if c, u, v, s, n := d.Byte(), d.Uint64(), d.Uvarint(), d.Varint(), d.Int(10); d.Err != nil || c != 7 || u != 1<<40 || v != 300 || s != -5 || n != 9 || len(d.B) != 0 {
		t.Errorf("decoded %d %d %d %d %d, err %v, %d bytes left", c, u, v, s, n, d.Err, len(d.B))
	}
	for k := range len(b) {
		d := Decoder{B: b[:k]}
		d.Byte()
		d.Uint64()
		d.Uvarint()
		d.Varint()
		d.Int(10)
		if !errors.Is(d.Err, ErrTruncated) {
			t.Errorf("%d of %d bytes: err %v; want ErrTruncated", k, len(b), d.Err)
		}
	}
	s := append(binary.AppendUvarint(nil, 5), "topic"...)
	for k := range len(s) + 1 {
		d := Decoder{B: s[:k]}
		got := d.String()
		if k == len(s) && (d.Err != nil || got != "topic") || k < len(s) && !errors.Is(d.Err, ErrTruncated) {
			t.Errorf("String of %d of %d bytes: %q, err %v", k, len(s), got, d.Err)
		}
	}
	d = Decoder{B: binary.AppendUvarint(nil, 10)}
	if d.Int(10); d.Err == nil || errors.Is(d.Err, ErrTruncated) {
		t.Errorf("Int(10) of 10: err %v; want a corrupt-value error", d.Err)
	}
}
