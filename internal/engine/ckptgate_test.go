package engine

import (
	"testing"

	"github.com/weirstream/weir/internal/coord"
)

// In a job of one process with time-based epochs, a checkpoint due while the store is busy is
// skipped, one that is due once it is free is taken, and every task that
// asks of one gets the answer the first got, whatever the store did
// since. Where the gate is off (several processes, count-based epochs)
// every checkpoint is taken.
func TestGate(t *testing.T) {
	g := &gate{on: true, every: 10}
	if !g.take(10) {
		t.Fatal("checkpoint 10, store free: skipped")
	}
	g.setBusy(true)
	if !g.take(10) || g.take(20) {
		t.Fatal("store busy: want 10 taken still, 20 skipped")
	}
	g.setBusy(false)
	if g.take(20) || !g.take(30) {
		t.Fatal("store free again: want 20 skipped still, 30 taken")
	}
	for n := uint64(40); n < 40+2*maxGateLag*10; n += 10 {
		g.take(n)
	}
	if len(g.taken) > maxGateLag+1 {
		t.Errorf("the gate remembers %d decisions", len(g.taken))
	}
	several := &gate{every: 10}
	several.setBusy(true)
	if !several.take(10) || !several.take(20) {
		t.Error("the gate off skipped a checkpoint")
	}
}

// In a job of several processes, the leader's gate doubles the stride
// while the slowest process's writes lag, from the epoch its lag gives;
// a process that hears the step takes the same checkpoints from there on,
// and every task of one process gets the first answer, whatever was
// heard since.
func TestGatePaced(t *testing.T) {
	written := uint64(0)
	zero := &gate{paced: true, every: 10, lag: func(n uint64) (bool, uint64, uint64) { return true, written, n + 25 }}
	one := &gate{paced: true, every: 10, lag: func(n uint64) (bool, uint64, uint64) { return false, written, n + 25 }}
	for n := uint64(10); n <= 30; n += 10 {
		written = n - 10 // caught up
		if !zero.take(n) || !one.take(n) {
			t.Fatalf("caught up: checkpoint %d skipped", n)
		}
	}
	written = 20 // 30 and 40 wait: double from 65
	if !zero.take(40) {
		t.Fatal("checkpoint 40 skipped")
	}
	st := zero.paceStep()
	if st.From != 65 || st.Stride != 2 {
		t.Fatalf("step %+v, want stride 2 from 65", st)
	}
	one.hearPace(st)
	for n := uint64(50); n <= 120; n += 10 {
		written = n
		if a, b := zero.take(n), one.take(n); a != b || a != (n < 65 || n/10%2 == 0) {
			t.Errorf("checkpoint %d: process 0 takes %v, process 1 %v", n, a, b)
		}
	}
	late := &gate{paced: true, every: 10}
	first := late.take(70)
	late.hearPace(st)
	if late.take(70) != first || late.take(90) {
		t.Error("a step heard after a checkpoint was decided changed that decision, or was not followed after")
	}
}

// A stop waits for the checkpoint it proposed: the gate of a job of one
// process takes it, or the first one due after it, even while the store
// is busy, and skips the ones before as before.
func TestGateForced(t *testing.T) {
	g := &gate{on: true, every: 10}
	g.setBusy(true)
	g.force(30)
	if g.take(20) {
		t.Error("store busy, checkpoint 20 before the forced 30: taken")
	}
	if !g.take(40) {
		t.Error("store busy, checkpoint 40 after the forced 30: skipped")
	}
}

// In a paced job the checkpoint a stop proposed, and those after, are
// taken whatever the stride, so that every process takes the highest
// proposal.
func TestGatePacedForced(t *testing.T) {
	g := &gate{paced: true, every: 10}
	g.hearPace(coord.PaceStep{From: 0, Stride: 4})
	g.force(50)
	for n, want := range map[uint64]bool{30: false, 40: true, 50: true, 60: true, 70: true} {
		if g.take(n) != want {
			t.Errorf("stride 4, forced from 50: take(%d) = %v", n, !want)
		}
	}
}

// When the leader leaves, the next one decides the checkpoints from its
// leave on: the old one decides nothing after it, the new one nothing
// before, and the steps of both, heard in either order, agree.
func TestGateLeaderChanges(t *testing.T) {
	const leave = 100
	written := uint64(0)
	zero := &gate{paced: true, every: 10, lag: func(n uint64) (bool, uint64, uint64) { return n < leave, written, n + 25 }}
	one := &gate{paced: true, every: 10, lag: func(n uint64) (bool, uint64, uint64) { return n >= leave, written, n + 25 }}
	written = 10 // behind from the start
	for n := uint64(20); n < leave; n += 10 {
		zero.take(n)
		one.take(n)
	}
	if st := one.paceStep(); st.From != 0 {
		t.Fatalf("process 1 decided %+v before it leads", st)
	}
	zst := zero.paceStep()
	if zst.From == 0 {
		t.Fatal("the leader decided no step while the writes lagged")
	}
	for n := uint64(leave); n < leave+200; n += 10 {
		zero.take(n)
		one.take(n)
	}
	if st := zero.paceStep(); st != zst {
		t.Errorf("process 0 decided %+v after its leave", st)
	}
	ost := one.paceStep()
	if ost == zst {
		t.Fatal("the new leader decided no step while the writes lagged")
	}
	// A third process hears the two leaders' newest steps in either order.
	a, b := &gate{paced: true, every: 10}, &gate{paced: true, every: 10}
	a.hearPace(zst)
	a.hearPace(ost)
	b.hearPace(ost)
	b.hearPace(zst)
	for n := uint64(leave); n < leave+400; n += 10 {
		if a.pace.Stride(n) != b.pace.Stride(n) {
			t.Fatalf("checkpoint %d: stride %d heard in one order, %d in the other", n, a.pace.Stride(n), b.pace.Stride(n))
		}
	}
}
