package coord_test

import (
	"math/rand/v2"
	"testing"
)

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.IntN(n) }
func (c randChooser) done() bool     { return false }

// byteChooser makes a fuzzer's bytes the choices; once they run out the
// simulation stops.
type byteChooser struct{ b []byte }

func (c *byteChooser) intn(n int) int {
	if len(c.b) == 0 {
		return 0
	}
	v := int(c.b[0])
	c.b = c.b[1:]
	return v % n
}

func (c *byteChooser) done() bool { return len(c.b) == 0 }

// randomConfig picks a job's shape.
func randomConfig(ch chooser, unshared, faults bool) simConfig {
	cfg := simConfig{procs: 1 + ch.intn(3), tasks: 1 + ch.intn(3), every: 1 + uint64(ch.intn(3)), keep: 1 + ch.intn(3),
		unshared: unshared, faults: faults}
	if unshared {
		cfg.procs = 2 + ch.intn(2)
	}
	return cfg
}

func seeds(t *testing.T) int {
	if testing.Short() {
		return 50
	}
	return 400
}

// Processes sharing a store, in random interleavings of their tasks'
// reports and ends, the store's answers and the peers' claims, with
// failed writes and checks and crashes of the whole job between an
// action and its answer: every part written is the naive model's and
// holds every task's blobs, completions and commits follow the store and
// come in order, a crash leaves a whole newest complete checkpoint, and
// once idle no checkpoint with all its parts is left incomplete.
func TestRandomShared(t *testing.T) {
	runs, crashes, midway := 0, 0, 0
	for seed := range uint64(seeds(t)) {
		ch := randChooser{rand.New(rand.NewPCG(seed, 1))}
		s := newSim(t, ch, randomConfig(ch, false, true))
		s.run(600)
		s.end()
		runs++
		crashes += s.runs - 1
		midway += s.midway
	}
	if crashes < runs/2 || midway < crashes/4 {
		t.Errorf("%d restarts over %d simulations, %d between an action and its answer: too few to test recovery", crashes, runs, midway)
	}
	t.Logf("%d simulations, %d restarts, %d between an action and its answer", runs, crashes, midway)
}

// The same without faults: the job runs to its end in one run, and
// completes checkpoints.
func TestRandomSharedNoFaults(t *testing.T) {
	completed := 0
	for seed := range uint64(seeds(t)) {
		ch := randChooser{rand.New(rand.NewPCG(seed, 2))}
		s := newSim(t, ch, randomConfig(ch, false, false))
		s.run(600)
		s.end()
		if s.runs != 1 {
			t.Fatalf("seed %d: %d runs without faults", seed, s.runs)
		}
		if _, ok := s.stores[0].latest(); ok {
			completed++
		}
	}
	if completed < seeds(t)*3/4 {
		t.Errorf("only %d of %d simulations completed a checkpoint", completed, seeds(t))
	}
}

// Processes with a store each: nothing completes, each warns at most
// once and then keeps its store trimmed; in a long enough run each warns.
func TestRandomUnshared(t *testing.T) {
	for seed := range uint64(seeds(t)) {
		ch := randChooser{rand.New(rand.NewPCG(seed, 3))}
		cfg := randomConfig(ch, true, false)
		cfg.steady = true
		s := newSim(t, ch, cfg)
		s.run(1500)
		s.end()
		for _, p := range s.procs {
			if p.warned != 1 {
				t.Errorf("seed %d, %+v: process %d warned %d times, having written %d parts", seed, s.cfg, p.id, p.warned, p.writes)
			}
			if n := len(s.stores[p.id].dirs); n > s.cfg.keep+1 {
				t.Errorf("seed %d: process %d's store holds %d checkpoints, keeping %d", seed, p.id, n, s.cfg.keep+1)
			}
		}
	}
}

// FuzzSimulation lets the fuzzer choose the job's shape and every step.
func FuzzSimulation(f *testing.F) {
	f.Add([]byte{1, 1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19})
	f.Add([]byte("the store's answers come late and the job crashes in between"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ch := &byteChooser{b: data}
		unshared := ch.intn(4) == 0
		s := newSim(t, ch, randomConfig(ch, unshared, !unshared))
		s.run(min(len(data), 3000))
		s.end()
	})
}
