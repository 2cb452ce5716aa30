package weir_test

import (
	"encoding/binary"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/checkpoint"
)

// ackInput reads records one share of Records per instance; a position
// is the index of the next record (8 bytes), and it logs what it is told
// to acknowledge, and where its readers were sought to.
type ackInput struct {
	Records []rec
	mu      sync.Mutex
	acked   []int // the positions acknowledged, in order
	sought  []int // the positions readers resumed at
}

func (in *ackInput) Open(ctx weir.SourceContext) (weir.Reader[rec], error) {
	n := len(in.Records)
	lo, hi := n*ctx.Instance/ctx.Parallelism, n*(ctx.Instance+1)/ctx.Parallelism
	return &ackReader{in: in, at: lo, hi: hi}, nil
}

func (in *ackInput) log() (acked, sought []int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Clone(in.acked), slices.Clone(in.sought)
}

type ackReader struct {
	in        *ackInput
	at, hi    int
	batchFrom int
}

func (r *ackReader) Read() ([]rec, error) {
	r.batchFrom = r.at
	if r.at >= r.hi {
		return nil, io.EOF
	}
	end := min(r.at+50, r.hi)
	b := r.in.Records[r.at:end]
	r.at = end
	return b, nil
}

func (r *ackReader) Close() error { return nil }

func (r *ackReader) Position(used int) ([]byte, error) {
	return binary.BigEndian.AppendUint64(nil, uint64(r.batchFrom+used)), nil
}

func (r *ackReader) Seek(pos []byte) error {
	if len(pos) != 8 {
		return errors.New("bad position")
	}
	r.at = int(binary.BigEndian.Uint64(pos))
	r.batchFrom = r.at
	r.in.mu.Lock()
	r.in.sought = append(r.in.sought, r.at)
	r.in.mu.Unlock()
	return nil
}

func (r *ackReader) Acknowledge(pos []byte) error {
	r.in.mu.Lock()
	r.in.acked = append(r.in.acked, int(binary.BigEndian.Uint64(pos)))
	r.in.mu.Unlock()
	return nil
}

var _ weir.Acknowledged = (*ackReader)(nil)

// A reader that wants acknowledgements gets them only for positions that
// a complete checkpoint holds: never past where a restore resumes. At the
// end of a job that finished, its end is acknowledged; without
// checkpoints, every epoch's end is.
func TestAcknowledgedAfterCheckpoints(t *testing.T) {
	in := make([]rec, 30_000)
	for i := range in {
		in[i] = rec{ID: i}
	}
	dir := t.TempDir()
	run := func(crashAt int, rate float64, opts ...weir.JobOption) (*ackInput, *weir.Collect[rec], error) {
		src := &ackInput{Records: in}
		j := weir.NewJob("ack", append([]weir.JobOption{weir.Workers(1)}, opts...)...)
		var input weir.Input[rec] = src
		if rate > 0 {
			input = weir.Paced(input, rate)
		}
		out := &weir.Collect[rec]{}
		weir.Sink(crashMap(weir.Source(j, "numbers", input), crashAt), out, weir.Name("out"))
		return src, out, runErr(t, j)
	}
	increasing := func(what string, acked []int) {
		t.Helper()
		if !slices.IsSorted(acked) {
			t.Errorf("%s: acknowledged %v, not in order", what, acked)
		}
	}
	// Paced at 20,000 records a second, in epochs of 5 ms, the run fails
	// when the first write of a checkpoint from epoch 100 on (after half a
	// second) fails, 300 ms late: that checkpoint, which its source
	// reported to, never completes. (The epochs are cut by time, so that
	// the source goes on meanwhile: the checkpoints that come due while
	// the store is busy are not taken.)
	stuck := &stuckFS{FS: checkpoint.OSFS(), from: 100, stuck: 300 * time.Millisecond}
	first, _, err := run(20_000, 20_000, weir.BatchInterval(5*time.Millisecond), weir.Checkpoints(dir, 2, 10), weir.CheckpointFS(stuck))
	if err == nil {
		t.Fatal("the first run did not crash")
	}
	acked, _ := first.log()
	increasing("crashed run", acked)
	if len(acked) == 0 || acked[len(acked)-1] == 0 {
		t.Fatalf("the crashed run acknowledged %v: nothing", acked)
	}
	second, out, err := run(-1, 0, weir.EpochRecords(100), weir.Checkpoints(dir, 3, 10))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Records()) == 0 {
		t.Fatal("the restored run wrote nothing")
	}
	acked2, sought := second.log()
	if len(sought) != 1 {
		t.Fatalf("the restored run sought %v, want one position", sought)
	}
	if last := acked[len(acked)-1]; last > sought[0] {
		t.Errorf("the crashed run acknowledged up to %d, past the position %d its job restored: those records were lost", last, sought[0])
	}
	increasing("restored run", acked2)
	if len(acked2) == 0 || acked2[len(acked2)-1] != len(in) {
		t.Errorf("the restored run acknowledged %v, want its end %d last", acked2, len(in))
	}
	if acked2[0] < sought[0] {
		t.Errorf("the restored run acknowledged %d, before where it resumed (%d)", acked2[0], sought[0])
	}

	plain, _, err := run(-1, 1e6, weir.EpochRecords(100))
	if err != nil {
		t.Fatal(err)
	}
	acked3, _ := plain.log()
	increasing("without checkpoints", acked3)
	if len(acked3) < len(in)/100/2 || acked3[len(acked3)-1] != len(in) {
		t.Errorf("without checkpoints: %d acknowledgements ending at %v, want about one per epoch (%d) ending at %d", len(acked3), acked3[max(0, len(acked3)-1):], len(in)/100, len(in))
	}
}

// stuckFS is the OS's file system where creating the first file of a
// checkpoint from from on fails, after stuck.
type stuckFS struct {
	checkpoint.FS
	from  uint64
	stuck time.Duration
	once  sync.Once
}

func (f *stuckFS) CreateTemp(dir, pattern string) (checkpoint.File, error) {
	if n, ok := checkpoint.ParseDir(filepath.Base(dir)); ok && n >= f.from {
		failed := false
		f.once.Do(func() {
			time.Sleep(f.stuck)
			failed = true
		})
		if failed {
			return nil, errors.New("disk stuck")
		}
	}
	return f.FS.CreateTemp(dir, pattern)
}
