package weir

import "github.com/weirstream/weir/internal/op"

// Process calls f for every record of a keyed stream with the state of
// the record's key: a pointer to an S, the zero value the first time the
// key is seen, that f may read and change. f appends any number of outputs
// to out and returns it (Selectivity may declare fewer). Records of one key
// reach f in the order the stream carries them, on one instance; each
// instance keeps the state of the key groups it owns, so Process runs in
// parallel without locks. The state lives as long as the job.
func Process[K comparable, T, S, U any](k KeyedStream[K, T], f func(key K, state *S, v T, out []U) []U, opts ...Option) Stream[U] {
	return op.Process[K, T, S, U](k, f, opts...)
}
