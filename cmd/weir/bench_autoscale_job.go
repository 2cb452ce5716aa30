package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weirstream/weir"
)

// serviceKeyed is the operator of fixed service time in the live
// autoscaling benchmark.
const serviceKeyed = "service"

// keyCount is a key's count after one more record.
type keyCount struct {
	Key   uint32
	Count int64
}

// keyCounts is the live benchmark's sink: each key's highest count, and
// the counts it received. It is safe for several instances.
type keyCounts struct {
	mu   sync.Mutex
	high map[uint32]int64
	n    int64
}

func (k *keyCounts) write(b []keyCount) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, c := range b {
		k.high[c.Key] = max(k.high[c.Key], c.Count)
	}
	k.n += int64(len(b))
	return nil
}

// check compares the sink with the plain count of records 0..n-1 keyed
// by r mod keys: every key's count, and one output a record.
func (k *keyCounts) check(n int64, keys uint32) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n != n {
		return fmt.Errorf("%d counts for %d records", k.n, n)
	}
	for key := range keys {
		want := n / int64(keys)
		if int64(key) < n%int64(keys) {
			want++
		}
		if k.high[key] != want {
			return fmt.Errorf("key %d counted %d; the plain count is %d", key, k.high[key], want)
		}
	}
	return nil
}

// serviceRun is one job of the live benchmark: records 0..n-1 read on
// clock's schedule by one source instance, keyed by r mod keys, counted
// by an operator whose every record takes service (a sleep: an
// instance's true rate is the same whatever the cores), and the counts
// checked at the sink.
type serviceRun struct {
	job  *weir.Job
	sink *keyCounts
	n    int64
	keys uint32
}

func newServiceRun(n int64, keys uint32, service time.Duration, clk *clock, opts ...weir.JobOption) *serviceRun {
	r := &serviceRun{job: weir.NewJob("autoscale-bench", opts...), sink: &keyCounts{high: map[uint32]int64{}}, n: n, keys: keys}
	recs := make([]uint32, n)
	for i := range recs {
		recs[i] = uint32(i)
	}
	src := weir.Source(r.job, "events", scheduled[uint32]{in: weir.SliceSource[uint32]{Records: recs, BatchSize: 16}, c: clk}, weir.Parallelism(1))
	counted := weir.Process(weir.KeyBy(src, func(r uint32) uint32 { return r % keys }), func(k uint32, st *int64, _ uint32, out []keyCount) []keyCount {
		time.Sleep(service)
		*st++
		return append(out, keyCount{k, *st})
	}, weir.Name(serviceKeyed))
	weir.Sink(counted, weir.SinkFunc[keyCount](r.sink.write), weir.Name("counts"))
	return r
}

// liveRun is one job of the live benchmark, over records read on a
// clock's schedule by one source instance, whose costed operator takes a
// fixed service time a record.
type liveRun interface {
	// Job is the job; Check compares its output with the plain
	// computation's once it has run.
	Job() *weir.Job
	Check() error
	// Costed names the chain of the operator of fixed service time;
	// Read is the records the source reads.
	Costed() string
	Read() int64
}

func (r *serviceRun) Job() *weir.Job { return r.job }
func (r *serviceRun) Check() error   { return r.sink.check(r.n, r.keys) }
func (r *serviceRun) Costed() string { return serviceKeyed }
func (r *serviceRun) Read() int64    { return r.n }

// runLive runs r's job to its end and checks its output.
func runLive(ctx context.Context, r liveRun) error {
	if err := r.Job().Run(ctx); err != nil {
		return err
	}
	return r.Check()
}

// serviceCost is the useful time the costed operator took over a run,
// by record the source read (0 if it took none), from the figures of the
// instances of the chain that holds it (fused with the source on one
// instance, the chain's other operators count too).
func serviceCost(r liveRun) time.Duration {
	var useful time.Duration
	for _, in := range r.Job().Stats().Instances() {
		if slices.Contains(strings.Split(in.Operator, "→"), r.Costed()) {
			useful += in.Useful
		}
	}
	if r.Read() == 0 {
		return 0
	}
	return useful / time.Duration(r.Read())
}
