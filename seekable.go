package weir

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
