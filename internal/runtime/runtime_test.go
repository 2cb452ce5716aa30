package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/progress"
)

// countSource emits n batches of one int each, to every outlet in turn.
type countSource struct {
	n, i int
	outs []Outlet
	fail error
}

func (s *countSource) Poll(limit int) (int, error) {
	if s.i == s.n {
		return 0, ErrEndOfInput
	}
	if s.fail != nil && s.i == s.n/2 {
		return 0, s.fail
	}
	s.i++
	return 1, s.outs[s.i%len(s.outs)].Send(s.i)
}

func (s *countSource) Mark(m progress.Marker) error {
	for _, o := range s.outs {
		if err := o.Mark(m); err != nil {
			return err
		}
	}
	return nil
}

func (s *countSource) Close() error { return nil }

// sumTask adds up what it receives and records each epoch's sum.
type sumTask struct {
	mu     sync.Mutex
	sum    int
	epochs []int
	final  bool
	block  chan struct{}
	panics bool
}

func (t *sumTask) Batch(port int, b any) error {
	if t.block != nil {
		<-t.block
	}
	if t.panics {
		panic("boom")
	}
	t.mu.Lock()
	t.sum += b.(int)
	t.mu.Unlock()
	return nil
}

func (t *sumTask) Mark(m progress.Marker) error {
	t.mu.Lock()
	t.epochs = append(t.epochs, t.sum)
	t.final = m.Final
	t.mu.Unlock()
	return nil
}

func build(t *testing.T, cfg Config, sources, n int, task *sumTask, fail error) *Runtime {
	t.Helper()
	rt := New(cfg)
	in := rt.NewInbox("sum", 0, 4)
	for i := 0; i < sources; i++ {
		s := &countSource{n: n, outs: []Outlet{in.Sender(0)}, fail: fail}
		rt.AddSource("src", i, s, false)
	}
	rt.AddTask("sum", 0, in, task, true)
	return rt
}

func TestRunSumsEverything(t *testing.T) {
	var epochs []EpochStats
	task := &sumTask{}
	rt := build(t, Config{Records: 10, OnEpoch: func(s EpochStats) { epochs = append(epochs, s) }}, 3, 100, task, nil)
	if err := rt.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := 3 * 100 * 101 / 2; task.sum != want || !task.final {
		t.Errorf("sum = %d final = %v; want %d true", task.sum, task.final, want)
	}
	// Each source cuts an epoch every 10 records: epoch e holds records
	// 10e+1..10e+10 of every source, whatever the interleaving.
	for e, got := range task.epochs[:10] {
		want := 3 * (10*e + 10) * (10*e + 11) / 2
		if got != want {
			t.Errorf("after epoch %d the sum is %d; want %d", e, got, want)
		}
	}
	if rt.Records() != 300 {
		t.Errorf("Records() = %d; want 300", rt.Records())
	}
	if len(epochs) != 11 || !epochs[10].Final {
		t.Errorf("OnEpoch saw %d epochs (last final: %v); want 11, final", len(epochs), len(epochs) > 0 && epochs[len(epochs)-1].Final)
	}
}

func TestRunReturnsFirstError(t *testing.T) {
	bad := errors.New("bad input at line 7")
	rt := build(t, Config{Records: 5}, 2, 50, &sumTask{}, bad)
	err := rt.Run(context.Background())
	if !errors.Is(err, bad) || !strings.Contains(err.Error(), "src#") {
		t.Fatalf("Run = %v; want the source's error, prefixed with its name", err)
	}
}

func TestRunRecoversPanics(t *testing.T) {
	rt := build(t, Config{Records: 5}, 1, 50, &sumTask{panics: true}, nil)
	err := rt.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "sum#0: panic: boom") {
		t.Fatalf("Run = %v; want a panic error naming the task", err)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	// The task blocks, so the bounded inbox fills and the source blocks
	// in Send: cancellation must still stop everything.
	task := &sumTask{block: make(chan struct{})}
	rt := build(t, Config{Records: 5}, 1, 1000, task, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- rt.Run(ctx) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	go func() {
		<-rt.Done()
		close(task.block)
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v; want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// unitSource sends units s, s+k, s+2k... below n: sender s of k in a
// round-robin split.
type unitSource struct {
	next, step, n int
	out           Outlet
}

func (s *unitSource) Poll(int) (int, error) {
	if s.next >= s.n {
		return 0, ErrEndOfInput
	}
	u := s.next
	s.next += s.step
	return 1, s.out.Send(u)
}

func (s *unitSource) Mark(m progress.Marker) error { return s.out.Mark(m) }
func (s *unitSource) Close() error                 { return nil }

// seqTask wants unit u from sender u mod k, and records at each epoch end
// how many units it has taken.
type seqTask struct {
	k, next int
	err     error
	ends    []int
}

func (t *seqTask) Next() int { return t.next % t.k }

func (t *seqTask) Batch(port int, b any) error {
	if u := b.(int); u != t.next && t.err == nil {
		t.err = errors.New("out of sequence")
	}
	t.next++
	return nil
}

func (t *seqTask) Mark(m progress.Marker) error {
	t.ends = append(t.ends, t.next)
	return nil
}

// A sequenced task takes units from its senders in the turn it asks for,
// and an epoch ends after exactly the units cut before it: with epochs
// every 2 records per source and 3 sources, after units 6, 12, 18...
func TestSequencedTask(t *testing.T) {
	const k, n = 3, 200
	rt := New(Config{Records: 2})
	in := rt.NewInbox("seq", 0, 2)
	for s := 0; s < k; s++ {
		rt.AddSource("src", s, &unitSource{next: s, step: k, n: n, out: in.Sender(0)}, false)
	}
	task := &seqTask{k: k}
	rt.AddTask("seq", 0, in, task, true)
	if err := rt.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if task.err != nil || task.next != n {
		t.Fatalf("took %d units (%v); want %d in sequence", task.next, task.err, n)
	}
	for i, e := range task.ends[:len(task.ends)-1] {
		if e != 6*(i+1) {
			t.Fatalf("epoch ends after %v units; want every 6", task.ends)
		}
	}
}

// Epochs counted from a distant origin (the Unix epoch, as distributed
// jobs count them) are numbered far from 0; the runtime reports the ones
// that ended without walking the numbers in between.
func TestDistantOrigin(t *testing.T) {
	var epochs []EpochStats
	task := &sumTask{}
	cfg := Config{Interval: time.Millisecond, Origin: time.Unix(0, 0), OnEpoch: func(s EpochStats) { epochs = append(epochs, s) }}
	rt := build(t, cfg, 2, 50, task, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rt.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if task.sum != 2*50*51/2 || len(epochs) == 0 || !epochs[len(epochs)-1].Final {
		t.Fatalf("sum %d, %d epochs reported; want %d and a final one", task.sum, len(epochs), 2*50*51/2)
	}
	if first := epochs[0].Epoch; first < progress.Epoch(time.Since(time.Unix(0, 0))/time.Millisecond)-60_000 {
		t.Errorf("first epoch %d; want one numbered from the Unix epoch", first)
	}
}

// A service that waits on done (a watcher) is told to return once every
// task has ended, and Run returns; it saw every task end first.
func TestWatcherServiceEndsWithTasks(t *testing.T) {
	task := &sumTask{}
	rt := build(t, Config{Records: 10}, 2, 50, task, nil)
	sawFinal := make(chan bool, 1)
	rt.AddService("watch", func(done <-chan struct{}) error {
		<-done
		sawFinal <- task.final
		return nil
	})
	runWithin(t, rt, "the watcher was never told the tasks ended")
	if !<-sawFinal {
		t.Error("the watcher returned before the task ended")
	}
}

// A listener that blocks on something that never comes (a peer with
// nothing more to say) does not hold Run back once every task has
// ended, and its error then is none, unless its keep says to wait for
// it; its error while the tasks run fails the runtime.
func TestListenerNotWaitedFor(t *testing.T) {
	task := &sumTask{}
	rt := build(t, Config{Records: 10}, 2, 50, task, nil)
	never, returned := make(chan struct{}), make(chan struct{})
	pumped := make(chan struct{}) // never closed
	rt.AddListener("listen", func(<-chan struct{}) error {
		<-never
		close(returned)
		return errors.New("the peer went away")
	}, func() bool { return false })
	runWithin(t, rt, "it waited for the listener")
	close(never)
	<-returned
	if task.sum != 2*50*51/2 {
		t.Errorf("sum %d; want %d", task.sum, 2*50*51/2)
	}

	kept := build(t, Config{Records: 10}, 2, 50, &sumTask{}, nil)
	release := make(chan struct{})
	kept.AddListener("listen", func(<-chan struct{}) error {
		<-release
		return nil
	}, func() bool { return true })
	// One without a keep is not waited for, whatever the others' say.
	kept.AddListener("pump", func(<-chan struct{}) error {
		<-pumped
		return nil
	}, nil)
	ran := make(chan error, 1)
	go func() { ran <- kept.Run(context.Background()) }()
	select {
	case err := <-ran:
		t.Fatalf("Run = %v before the listener it keeps returned", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-ran:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run waited for a listener without a keep")
	}

	// The task waits for the listener to fail, then still has millions
	// of records to sum: the runtime runs when the error comes.
	slow := &sumTask{block: make(chan struct{})}
	failing := build(t, Config{Records: 1000}, 2, 2_000_000, slow, nil)
	failing.AddListener("listen", func(done <-chan struct{}) error {
		close(slow.block)
		return errors.New("a corrupt message")
	}, nil)
	if err := failing.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "a corrupt message") {
		t.Errorf("Run = %v; want the listener's error", err)
	}
}

// runWithin runs rt and fails the test if Run fails or has not returned
// within 10 s (why says what would hold it).
func runWithin(t *testing.T, rt *Runtime, why string) {
	t.Helper()
	ran := make(chan error, 1)
	go func() { ran <- rt.Run(context.Background()) }()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return: " + why)
	}
}
