package weir_test

import (
	"sync"
	"testing"

	"github.com/weirstream/weir"
)

// recordingInput is a SliceSource that records the calls of Recover and
// Open, in order.
type recordingInput struct {
	weir.SliceSource[rec]
	mu    sync.Mutex
	calls []any // RecoverContext or SourceContext
}

func (r *recordingInput) Recover(rc weir.RecoverContext) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, rc)
	return nil
}

func (r *recordingInput) Open(ctx weir.SourceContext) (weir.Reader[rec], error) {
	r.mu.Lock()
	r.calls = append(r.calls, ctx)
	r.mu.Unlock()
	return r.SliceSource.Open(ctx)
}

// A job calls Recover once, before any Open, with the checkpoint it
// restored from (0 from scratch), through Paced too.
func TestRecoverableInput(t *testing.T) {
	in := make([]rec, 20_000)
	for i := range in {
		in[i] = rec{ID: i}
	}
	dir := t.TempDir()
	run := func(crashAt int, paced bool) (*recordingInput, *weir.Job) {
		src := &recordingInput{SliceSource: weir.SliceSource[rec]{Records: in, BatchSize: 50}}
		j := weir.NewJob("recover", weir.Workers(1), weir.EpochRecords(100), weir.Checkpoints(dir, 2, 3))
		var input weir.Input[rec] = src
		if paced {
			input = weir.Paced(input, 1e9)
		}
		weir.Sink(crashMap(weir.Source(j, "numbers", input), crashAt), &weir.Collect[rec]{}, weir.Name("out"))
		runErr(t, j)
		return src, j
	}
	check := func(what string, src *recordingInput, want uint64) {
		t.Helper()
		if len(src.calls) != 2 {
			t.Fatalf("%s: calls %+v, want Recover, then Open", what, src.calls)
		}
		rc, ok := src.calls[0].(weir.RecoverContext)
		if !ok || rc != (weir.RecoverContext{Checkpoint: want, Source: "numbers", Job: "recover", Process: 0, Processes: 1}) {
			t.Errorf("%s: first call %+v, want Recover at checkpoint %d", what, src.calls[0], want)
		}
	}
	first, _ := run(12_000, false)
	check("from scratch", first, 0)
	second, j := run(-1, true)
	if j.Metrics().RestoredFrom == 0 {
		t.Fatal("the second run restored nothing")
	}
	check("restored, paced", second, j.Metrics().RestoredFrom)
}
