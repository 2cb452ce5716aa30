package weir_test

import (
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// rescaleWaitOn runs rescaleOpsAt over in as a job of two processes, with
// opts, its keyed operators over instances 0 and 1 (on process 0), asks
// process 1, whose operators feed no sink of its own (the sink runs on
// process 0), to rescale them to 4 instances with ropts, and waits for
// the rescale there. Wait must return once the last step is done on
// process 1 while the source (on process 0) has records left to read,
// not at the job's end; key groups must have moved from process 0 to
// process 1, and the results must be the plain computation's.
func rescaleWaitOn(t *testing.T, in []rec, opts []weir.JobOption, ropts ...weir.RescaleOption) *weir.Migration {
	t.Helper()
	var m *weir.Migration
	jobs, out := rescaleTwoWaited(t, in, 2, 4, 1, opts, func(mg *weir.Migration, jobs []*weir.Job) {
		m = mg
		if !m.Completed() {
			t.Errorf("Wait returned before the last step (epoch %d) was completed on process 1", m.Last)
		}
		if read := jobs[0].Metrics().Records; read == int64(len(in)) {
			t.Errorf("Wait on process 1 returned only once the input had all been read")
		}
	}, ropts...)
	if m != nil && !m.Completed() {
		t.Errorf("once the job ended, process 1 says it did not complete the last step (epoch %d)", m.Last)
	}
	if _, kgs := jobs[0].MovedBytes(); kgs == 0 {
		t.Error("process 0 handed over no key group")
	}
	checkOps(t, out, withoutTTL(rescaleModel(in)))
	return m
}

// On process 1, whose keyed operators feed no sink of its own,
// Migration.Wait returns once every task instance there has completed
// the last step's epoch, not at the job's end.
func TestRescaleWaitWithoutSink(t *testing.T) {
	// 20 ms epochs, 2500 records a second: the rescale is asked 0.4 s
	// in, takes force 1.5 s later and its steps (batched over 128 key
	// groups) take 1.3 s; the input lasts 8 s.
	rescaleWaitOn(t, rescaleInput(20000), nil)
}

// A fluid rescale from 2 to 4 instances over 4096 key groups takes 3072
// steps, one key group each: its announcement (the first table whole,
// then the key group each step moves) fits, every process routes by the
// same tables at the same epochs, and the results are the plain
// computation's.
func TestRescaleFluid4096(t *testing.T) {
	if testing.Short() {
		t.Skip("3072 epochs of steps")
	}
	// 2 ms epochs, 2500 records a second: the rescale is asked 0.4 s in
	// and takes force 1.5 s later; its 3072 steps take 6.1 s; the input
	// lasts 12 s.
	m := rescaleWaitOn(t, rescaleInput(30000), []weir.JobOption{weir.BatchInterval(2 * time.Millisecond), weir.KeyGroups(4096)},
		weir.WithStrategy(weir.Fluid))
	if m != nil && (m.Steps != 3072 || m.Moves != 3072) {
		t.Errorf("%d steps, %d moves; want 3072 of each", m.Steps, m.Moves)
	}
}
