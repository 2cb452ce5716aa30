package engine

import "testing"

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
