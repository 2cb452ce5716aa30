// Package bin decodes the small binary records Weir writes for itself
// (source positions, say): a Decoder reads fields in order and keeps the
// first error, so a caller reads every field and checks once.
//
//	d := bin.Decoder{B: pos}
//	format, n := d.Byte(), d.Uvarint()
//	if d.Err != nil { ... }
package bin
