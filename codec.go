package weir

import "github.com/weirstream/weir/internal/dataflow"

// Codec encodes records of type T in batches, for a distributed job whose
// records cross processes. Weir has a default for any type without
// channels, functions or interfaces inside: a raw memory copy for types
// without pointers (numbers, bools, arrays and structs of them), else an
// encoder compiled once from the type (strings and slices length-prefixed,
// integers fixed-width). Records of a window's key, value and accumulator
// types cross in the engine's own format, with these codecs for their
// parts. Give a type a codec of your own with RegisterCodec.
type Codec[T any] = dataflow.Codec[T]

// RegisterCodec makes c the codec of T in every job of this process (the
// last registration wins). Every process of a job must register the same.
func RegisterCodec[T any](c Codec[T]) {
	dataflow.RegisterCodec[T](c)
}
