package state

import "log/slog"

// Backend keeps keyed operator state outside memory: it opens one
// ByteStore per operator instance. The engine lays out keys and encodes
// values; a backend stores bytes. Package pebblestate is one.
type Backend interface {
	// Validate says whether the backend can work, before the job runs.
	Validate() error
	// Open opens the store named name (an operator instance of a
	// process), empty: checkpoints, not the store, carry state across
	// runs. log is the job's logger.
	Open(name string, log *slog.Logger) (ByteStore, error)
	// String names the backend in errors.
	String() string
}

// ByteStore is an ordered store of byte keys and values, used by one
// goroutine.
type ByteStore interface {
	// Get calls f with k's value, valid only during the call, and reports
	// whether k was there.
	Get(k []byte, f func(v []byte)) (bool, error)
	// Delete removes k.
	Delete(k []byte) error
	// Write applies the writes that fill makes, atomically: set stores a
	// value, del removes a key (both copy what they keep: the caller may
	// reuse the slices).
	Write(fill func(set func(k, v []byte), del func(k []byte))) error
	// Rewrite calls f with every entry in key order until it says stop,
	// and then applies, atomically, what f said of each entry it saw:
	// keep it with value nv (copied), or delete it. The slices f gets are
	// valid only during the call.
	Rewrite(f func(k, v []byte) (nv []byte, keep, stop bool)) error
	Close() error
}
