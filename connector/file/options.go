package file

// Options configures a file source.
type Options struct {
	// DeadLetter, if set, receives the lines the decoder rejects, and the
	// reader goes on. Without it, a rejected line fails the job.
	DeadLetter *DeadLetter
	// BatchSize is the largest number of records per Read (default 4096).
	BatchSize int
	// Header skips the first line of each file.
	Header bool

	// chunkSize is the size of the reads from a file (default 1 MiB).
	chunkSize int
}

const (
	defaultBatchSize = 4096
	defaultChunkSize = 1 << 20
)
