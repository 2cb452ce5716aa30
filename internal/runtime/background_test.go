package runtime

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/progress"
)

// bgTask takes on pieces of work of its own at each marker, done one per
// Background call.
type bgTask struct {
	sumTask
	pieces, left int
	done         atomic.Int64 // pieces done
	early        bool         // Background found nothing to do while work was due
}

func (t *bgTask) Mark(m progress.Marker) error {
	if t.left > 0 {
		t.early = true
	}
	if !m.Final {
		t.left = t.pieces
	}
	return t.sumTask.Mark(m)
}

func (t *bgTask) Background() bool {
	if t.left > 0 {
		t.left--
		t.done.Add(1)
	}
	return t.left > 0
}

// waitSource sends one record, ends epoch 0, then waits (sending nothing)
// until the task has done its work, or gives up after a while.
type waitSource struct {
	out  Outlet
	task *bgTask
	want int64
	sent bool
}

func (s *waitSource) Poll(int) (int, error) {
	if !s.sent {
		s.sent = true
		return 1, s.out.Send(1)
	}
	for deadline := time.Now().Add(10 * time.Second); s.task.done.Load() < s.want; {
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return 0, ErrEndOfInput
}

func (s *waitSource) Mark(m progress.Marker) error { return s.out.Mark(m) }
func (s *waitSource) Close() error                 { return nil }

// TestBackground: a task's own work, taken on at a marker, is done while
// no input comes (the source sends nothing until it is), and before the
// next marker in the test's single epoch.
func TestBackground(t *testing.T) {
	rt := New(Config{Records: 1})
	in := rt.NewInbox("bg", 0, 1)
	task := &bgTask{pieces: 50}
	src := &waitSource{out: in.Sender(0), task: task, want: 50}
	rt.AddSource("src", 0, src, false)
	rt.AddTask("bg", 0, in, task, true)
	if err := rt.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := task.done.Load(); got != 50 || task.early {
		t.Fatalf("did %d pieces of 50 (work still due at a later marker: %v)", got, task.early)
	}
}
