package runtime

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/progress"
)

// finalMarks is a Remote that records the final markers it carries.
type finalMarks struct {
	mu    sync.Mutex
	final []progress.Epoch
}

func (m *finalMarks) Send(any) error { return nil }
func (m *finalMarks) Mark(mk progress.Marker) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mk.Final {
		m.final = append(m.final, mk.Epoch)
	}
	return nil
}

func (m *finalMarks) got() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fmt.Sprint(m.final)
}

// A sender ends (final marker of epoch 2) while its remote receiver is
// absent: the marker is dropped, then sent as the end of the receiver's
// join epoch once that is set (6), and again when a new process takes
// the receiver's slot after it retired (join 12). A receiver present
// when the marker went gets it once, then again at its slot's next join.
func TestFinalMarkersHeldForJoins(t *testing.T) {
	rt := New(Config{Interval: time.Hour})
	absent, present := rt.Retirement("r", 0), rt.Retirement("r", 1)
	absent.Absent()
	toAbsent, toPresent := &finalMarks{}, &finalMarks{}
	a, p := RemoteOutlet(toAbsent).Until(absent), RemoteOutlet(toPresent).Until(present)
	done := make(chan struct{})
	ended := make(chan error, 1)
	go func() { ended <- rt.deliverFinals(done) }()
	for _, o := range []Outlet{a, p} {
		if err := o.Mark(progress.Marker{Epoch: 2, Final: true, Watermark: progress.MaxWatermark}); err != nil {
			t.Fatal(err)
		}
	}
	wait := func(m *finalMarks, want string) {
		t.Helper()
		for end := time.Now().Add(5 * time.Second); m.got() != want && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		if got := m.got(); got != want {
			t.Fatalf("final markers: %s; want %s", got, want)
		}
	}
	wait(toAbsent, "[]")
	wait(toPresent, "[2]")
	absent.Join(6)
	wait(toAbsent, "[6]")
	absent.Set(9)
	present.Set(9)
	absent.Join(12)
	present.Join(12)
	wait(toAbsent, "[6 12]")
	wait(toPresent, "[2 12]")
	close(done)
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
}
