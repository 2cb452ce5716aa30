package dataflow

import "github.com/weirstream/weir/internal/codec"

// Codec encodes records of type T in batches, for a distributed job whose
// records cross processes. Weir has a default for any type without
// channels, functions or interfaces inside: a raw memory copy for types
// without pointers (numbers, bools, arrays and structs of them), else an
// encoder compiled once from the type (strings and slices length-prefixed,
// integers fixed-width). Records of a window's key, value and accumulator
// types cross in the engine's own format, with these codecs for their
// parts. Give a type a codec of your own with RegisterCodec.
type Codec[T any] interface {
	// Append appends the encoding of vs to buf and returns it.
	Append(buf []byte, vs []T) []byte
	// Decode decodes what Append made of one or more batches, appending
	// the values to vs. It must not panic on malformed input, and the
	// values must not refer to buf's memory, which is reused as soon as
	// Decode returns (copy the bytes of strings and slices).
	Decode(buf []byte, vs []T) ([]T, error)
}

// RegisterCodec makes c the codec of T in every job of this process (the
// last registration wins). Every process of a job must register the same.
func RegisterCodec[T any](c Codec[T]) { codec.Register[T](c) }
