package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/transport"
	"github.com/weirstream/weir/jobs/nexmark"
)

// ballast is keyed state that the benchmark adds beside the query so that
// the state a rescale moves reaches a chosen size (the queries' own state
// is small and bounded: q4 keeps the auctions in flight, q5 and q8 one
// window's counts). A keyed Process holds Pad bytes for each of Keys keys,
// filled by the auctions (key: the auction id's offset modulo Keys, so the
// keys are all in use after Keys auctions); it emits nothing, so the
// query's result is unchanged. Its state is saved, restored and
// redistributed by key group like any other keyed state.
type ballast struct {
	Keys int64
	Pad  int
}

// ballastState is one ballast key's state.
type ballastState struct {
	Pad  []byte
	Seen int64
}

func (b ballast) add(events weir.Stream[gen.NexmarkEvent]) {
	if b.Keys == 0 {
		return
	}
	auctions := weir.FilterRef(events, func(e *gen.NexmarkEvent) bool { return e.Kind == gen.AuctionKind },
		weir.Name("ballast-auctions"), weir.Stateless())
	keys := weir.MapRef(auctions, func(e *gen.NexmarkEvent) int64 { return (e.Auction.ID - 1000) % b.Keys },
		weir.Name("ballast-key"), weir.Stateless())
	pad := b.Pad
	out := weir.Process(weir.KeyBy(keys, func(k int64) int64 { return k }, weir.Name("ballast-key")),
		func(k int64, s *ballastState, _ int64, out []struct{}) []struct{} {
			if s.Pad == nil {
				s.Pad = make([]byte, pad)
				for i := 0; i < pad; i += 64 {
					s.Pad[i] = byte(k + int64(i))
				}
			}
			s.Seen++
			return out
		}, weir.Name("ballast"))
	weir.Sink(out, weir.SinkFunc[struct{}](func([]struct{}) error { return nil }), weir.Name("ballast-out"))
}

// rescaleJob is one job of a rescale benchmark: query q over the
// scheduled source, with the ballast, run by procs in-process processes
// (joined by in-process networks) of workers instances each. The
// checksum is process 0's, where the sinks run.
type rescaleJob struct {
	jobs []*weir.Job
	sum  nexmark.Checksum
	// rest are the other processes' checksums, which stay empty: every
	// process builds the same topology, sinks included, and the sinks
	// (one instance) run on process 0.
	rest []nexmark.Checksum
	// An elastic job (bench rescale --join): the processes past the
	// members join later (joinLater); errs holds their Runs' errors.
	slots   *transport.LocalSlots
	members int
	later   func(i int) (*weir.Job, error)
	wg      sync.WaitGroup
	mu      sync.Mutex
	errs    []error
}

// newRescaleJob makes the job's procs processes; with members above 0,
// an elastic job of procs slots whose first members start it.
func newRescaleJob(q string, src weir.Input[gen.NexmarkEvent], bl ballast, procs, workers int, opts []weir.JobOption, first []weir.JobOption, members int) (*rescaleJob, error) {
	r := &rescaleJob{rest: make([]nexmark.Checksum, procs), members: members}
	var nets []transport.Network
	switch {
	case members > 0:
		r.slots = transport.NewLocalSlots(procs)
		opts = append(opts, weir.ElasticCluster(members))
	case procs > 1:
		nets = transport.NewLocal(procs)
	}
	mk := func(i int) (*weir.Job, error) {
		o := append([]weir.JobOption{weir.Workers(workers)}, opts...)
		if nets != nil {
			o = append(o, dataflow.WithNetwork(nets[i]))
		}
		if r.slots != nil {
			nw, err := r.slots.Join(i, nil)
			if err != nil {
				return nil, err
			}
			o = append(o, dataflow.WithNetwork(nw))
			if i >= members {
				o = append(o, weir.JoinCluster())
			}
		}
		if i == 0 {
			o = append(o, first...)
		}
		j := weir.NewJob("rescale-bench-"+q, o...)
		events := weir.Source(j, "events", src)
		sinks := nexmark.Sinks{Sum: &r.rest[i]}
		if i == 0 {
			sinks.Sum = &r.sum
		}
		if err := nexmark.Add(q, events, sinks); err != nil {
			return nil, err
		}
		bl.add(events)
		return j, nil
	}
	n := procs
	if members > 0 {
		n, r.later = members, mk
	}
	for i := range n {
		j, err := mk(i)
		if err != nil {
			return nil, err
		}
		r.jobs = append(r.jobs, j)
	}
	return r, nil
}

// joinLater starts the processes of the slots past the members, which
// join the running job; run waits for them too.
func (r *rescaleJob) joinLater(ctx context.Context) error {
	for i := r.members; i < len(r.rest); i++ {
		j, err := r.later(i)
		if err != nil {
			return err
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			err := j.Run(ctx)
			r.mu.Lock()
			r.errs = append(r.errs, err)
			r.mu.Unlock()
		}()
	}
	return nil
}

// run runs every process of the job and returns the first error other
// than a clean stop, else process 0's.
func (r *rescaleJob) run(ctx context.Context) error {
	errs := make([]error, len(r.jobs))
	var wg sync.WaitGroup
	for i, j := range r.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = j.Run(ctx)
		}()
	}
	wg.Wait()
	r.wg.Wait()
	r.mu.Lock()
	errs = append(errs, r.errs...)
	r.mu.Unlock()
	for i, err := range errs {
		if err != nil && !errors.Is(err, weir.ErrStopped) {
			return fmt.Errorf("process %d: %w", i, err)
		}
	}
	return errs[0]
}
