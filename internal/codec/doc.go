// Package codec encodes the records of a stream in batches, for records
// that cross a process boundary.
//
// The engine is generic, so it needs a codec for any record type T. For[T]
// returns, in order of preference: the codec registered with Register[T];
// else a built-in one; else one compiled from T's type by reflection. Codecs
// are built once per type, cached, and safe for concurrent use.
//
//	c, err := codec.For[Event]() // err names the field it cannot encode
//	buf = c.Append(buf[:0], events)
//	...
//	events, err = c.Decode(buf, events[:0])
//
// # Formats
//
// Append appends one self-describing batch; Decode decodes any
// concatenation of batches. A batch starts with a format byte and a 64-bit
// fingerprint of T, and a batch for another fingerprint is rejected with an
// error wrapping ErrMismatch.
//
// Pointer-free types of fixed layout (bools, numbers, and arrays and structs
// of them: every basic number type and named types of them) are encoded raw:
// element size, count, and the memory image of the slice, padding zeroed.
// The fingerprint hashes the layout (byte order, size, and every field's
// offset and kind), so only a process with the same layout decodes it: the
// same architecture family, not necessarily the same field names. Decoding
// checks that bools are 0 or 1.
//
// Every other type is compiled into a tree of small encoders and decoders
// that work on unsafe.Pointer and field offsets, with nested structs
// flattened and adjacent fixed-width fields copied as one run: count, body
// length, then each value in turn. Integers are fixed-width little-endian
// (int, uint and uintptr as 8 bytes on every platform, range-checked on
// decode); measured against zigzag varints, fixed width made partial
// aggregates ({H uint64; K string; Start, End, Acc int64}) 14% larger but
// encode about 3x faster. Floats and complex numbers are little-endian IEEE 754,
// bools one byte, strings a uvarint length and the bytes, slices and maps a
// uvarint length+1 (0 is nil, so nil and empty differ after a round trip),
// pointers a byte (0 nil, 1 followed by the pointee), arrays and structs
// their elements and fields in order (unexported and embedded fields
// included). Its fingerprint hashes the type's shape (kinds and structure,
// not names or offsets), so it is portable across architectures.
// String, []byte and their named types use the compiled format with
// specialised loops.
//
// # Invariants
//
//   - Decode never panics on bad input, and no length read from the input
//     makes it allocate more than a small multiple of the input's size: a
//     count or length is checked against the bytes that remain, at the
//     smallest encoded size of its values, before anything is allocated.
//   - On error Decode returns vs at its original length (all or nothing),
//     and the error wraps ErrMalformed or ErrMismatch.
//   - Append is deterministic: the same values give the same bytes, except
//     that maps are written in iteration order.
//   - Decoded strings and byte slices of a batch share one copy of its body
//     (one allocation per batch, not one per string; byte slices have their
//     capacity capped, so appending to one never overwrites another). A
//     decoded string kept for long (say, as a key of long-lived state) keeps
//     its whole batch alive; strings.Clone it to avoid that.
//   - Decoding allocates a fresh pointee for every non-nil pointer: two
//     pointers to one value decode as two values.
//
// # Unsupported types
//
// For returns an error wrapping ErrUnsupported, naming the path to the
// offending type, for chan, func, interface and unsafe.Pointer types and
// for recursive types (a struct that contains itself through a pointer,
// slice or map), for example "codec: T.Fields[0].F: func type not
// supported". Paths use .Field, [0] for an element, [key] for a map's value
// and {key} for its key. Zero-size fields, such as _ [0]func(), carry no
// data and are allowed. A registered codec makes any type usable, but only
// as the T of For[T]: compiled codecs do not consult the registry for their
// fields. Types that hide pointers, such as time.Time (whose *Location is
// copied deeply and loses its identity), are better sent as plain numbers.
package codec
