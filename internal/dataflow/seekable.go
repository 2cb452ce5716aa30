package dataflow

// Seekable is a Reader that can say where it is and resume from there,
// which checkpoints need: a job that restarts from a checkpoint reopens
// every source with the same SourceContext and seeks each reader to the
// position it had when the checkpoint was taken.
type Seekable interface {
	// Position returns where reading stands after the first used records
	// of the batch the last Read returned (all of them if used equals its
	// length; before any Read, used is 0 and the position is the start).
	// The bytes are opaque to the engine and stable across processes and
	// versions of the binary that read the same input.
	Position(used int) ([]byte, error)
	// Seek resumes reading at a position Position returned, on a reader
	// just opened with the same SourceContext and the same input. The next
	// Read returns the record that followed the position.
	Seek(pos []byte) error
}

// Rescalable is a Seekable reader that can also resume where a run with a
// different number of readers stopped, which restoring a checkpoint with
// another parallelism needs, and moving a running source's shares to
// other instances (Job.Rescale): there the positions are those of the
// readers that read until the move, its Position is asked for at every
// move whether or not the job takes checkpoints, and a reader just
// resumed may be asked for its position before its first Read.
type Rescalable interface {
	Seekable
	// SeekSplits resumes reading, on a reader just opened with a new
	// SourceContext over the same input, at the records of its new share
	// that the old run's readers had not read: positions holds what
	// Position returned on each old reader, in the old instance order
	// (len(positions) is the old parallelism). Over all new readers, every
	// record that no old reader had read is read exactly once.
	SeekSplits(positions [][]byte) error
}

// Acknowledged is a Seekable reader whose input lets go of what was read
// once the job no longer needs it: a JetStream consumer acknowledges the
// messages, a Kafka consumer group commits the offsets. Acknowledge(pos)
// says that the records before pos, a position the reader (or, after a
// restore or a move, an earlier reader of the same share) returned, need
// never be read again:
//
//   - In a job with checkpoints, once a checkpoint that holds pos is
//     complete (with the newest such position, if several complete at
//     once), and, at the end of a job that ran to its end in every
//     process (one that will not be resumed), with the position at its
//     end.
//   - Without checkpoints, at every epoch's end, with the position after
//     the records the source has passed on: a job that fails loses what
//     was in flight, as a Kafka consumer with automatic commits does.
//
// It runs on another goroutine than Read, possibly at the same time and
// after Close, so it must be safe for that. An error is logged, not
// fatal: the next acknowledgement covers what this one did not.
type Acknowledged interface {
	Seekable
	Acknowledge(pos []byte) error
}
