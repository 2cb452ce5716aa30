package main

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/partition"
)

// diagRec is a record of the diagnose job: Seq numbers it; Item, Order
// and User are its keys for the three keyed stages; V carries the work
// done on it (so that no stage's loop can be left out).
type diagRec struct {
	Seq, Item, Order, User, V uint64
}

// diagGen generates records 0..N-1, split into contiguous shares over the
// source's instances. A record's User is Hot for a Skew share of the
// records (spread evenly by a hash of Seq), uniform over Keys otherwise;
// its Item is uniform over Keys and its Order is Seq modulo Keys.
type diagGen struct {
	N    int
	Keys uint64
	Hot  uint64
	Skew float64
}

func (g diagGen) Open(ctx weir.SourceContext) (weir.Reader[diagRec], error) {
	lo := g.N * ctx.Instance / ctx.Parallelism
	hi := g.N * (ctx.Instance + 1) / ctx.Parallelism
	return &diagReader{g: g, next: uint64(lo), end: uint64(hi), buf: make([]diagRec, 1024)}, nil
}

type diagReader struct {
	g         diagGen
	next, end uint64
	buf       []diagRec
}

func (r *diagReader) Read() ([]diagRec, error) {
	if r.next >= r.end {
		return nil, io.EOF
	}
	n := min(uint64(len(r.buf)), r.end-r.next)
	hot := uint64(r.g.Skew * (1 << 32))
	for i := range n {
		s := r.next + i
		h := mix(s)
		user := (h >> 32) % r.g.Keys
		if h&(1<<32-1) < hot {
			user = r.g.Hot
		}
		r.buf[i] = diagRec{Seq: s, Item: mix(h) % r.g.Keys, Order: s % r.g.Keys, User: user, V: h}
	}
	r.next += n
	return r.buf[:n], nil
}

func (r *diagReader) Close() error { return nil }

// mix is a 64-bit finalizer (SplitMix64's): a deterministic hash.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// spin is the work of one record: rounds of mix, deterministic.
func spin(v uint64, rounds int) uint64 {
	for range rounds {
		v = mix(v)
	}
	return v
}

// diagJob is the job both scenarios run: gen → parse (keyed by Item) →
// enrich (keyed by Order) → score (keyed by User) → count. Every stage is
// keyed by a key of its own, so each is a task of its own with an
// exchange before it. Each stage spins base rounds per record; enrich
// spins slow rounds more, and score hot rounds more for a record of the
// hot user key (gen.Hot, when gen.Skew > 0).
type diagJob struct {
	gen             diagGen
	workers         int
	base, slow, hot int
	trace           string
}

// diagOutcome is what a run of diagJob gives: the records the sink
// counted, how long the run took and the job's figures at its end.
type diagOutcome struct {
	records int64
	took    time.Duration
	stats   weir.JobStats
}

func (d diagJob) run(ctx context.Context) (diagOutcome, error) {
	job := weir.NewJob("diagnose", weir.Workers(d.workers), weir.BatchInterval(200*time.Millisecond), weir.TraceFile(d.trace))
	src := weir.Source(job, "gen", d.gen)
	stage := func(s weir.Stream[diagRec], name, key string, k func(diagRec) uint64, rounds func(diagRec) int) weir.Stream[diagRec] {
		ks := weir.KeyBy(s, k, weir.Name(key))
		return weir.Process(ks, func(_ uint64, n *uint64, r diagRec, out []diagRec) []diagRec {
			*n++
			r.V = spin(r.V, rounds(r))
			return append(out, r)
		}, weir.Name(name))
	}
	hot := d.gen.Hot
	if d.gen.Skew == 0 {
		hot = d.gen.Keys // no record has it
	}
	s := stage(src, "parse", "item", func(r diagRec) uint64 { return r.Item }, func(diagRec) int { return d.base })
	s = stage(s, "enrich", "order", func(r diagRec) uint64 { return r.Order }, func(diagRec) int { return d.base + d.slow })
	s = stage(s, "score", "user", func(r diagRec) uint64 { return r.User }, func(r diagRec) int {
		if r.User == hot {
			return d.base + d.hot
		}
		return d.base
	})
	var count, sum atomic.Int64
	weir.Sink(s, weir.SinkFunc[diagRec](func(b []diagRec) error {
		var x uint64
		for _, r := range b {
			x ^= r.V
		}
		count.Add(int64(len(b)))
		sum.Add(int64(x & 1))
		return nil
	}), weir.Name("count"))
	start := time.Now()
	if err := job.Run(ctx); err != nil {
		return diagOutcome{}, err
	}
	return diagOutcome{records: count.Load(), took: time.Since(start), stats: job.Stats()}, nil
}

// ownerOf returns the instance, of par, of a keyed operator that a uint64
// key is routed to: the owner of its key group among the job's default
// key groups, as the engine's keyed exchange routes it.
func ownerOf(key uint64, par int) int {
	return partition.Owner(keyGroupOf(key), partition.DefaultKeyGroups, par)
}

// keyGroupOf returns the key group of a uint64 key among the job's
// default key groups.
func keyGroupOf(key uint64) partition.KeyGroup {
	return partition.KeyGroupOf(partition.HashUint64(key), partition.DefaultKeyGroups)
}

// hotKey returns the smallest key below keys that is routed to instance
// inst of par.
func hotKey(inst, par int, keys uint64) (uint64, error) {
	for k := range keys {
		if ownerOf(k, par) == inst {
			return k, nil
		}
	}
	return 0, fmt.Errorf("no key below %d is routed to instance %d of %d", keys, inst, par)
}
