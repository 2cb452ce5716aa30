package weir_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/transport"
)

// runProcesses runs the same program as procs processes in this one, over
// an in-process network, and returns process 0's output and every
// process's error.
func runProcesses[T any](t *testing.T, procs int, opts []weir.JobOption, build func(j *weir.Job) *weir.Collect[T]) ([]T, []error) {
	t.Helper()
	nets := transport.NewLocal(procs)
	errs := make([]error, procs)
	outs := make([]*weir.Collect[T], procs)
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range procs {
		j := weir.NewJob("distributed", append(slices.Clone(opts), weir.WithNetwork(nets[i]))...)
		outs[i] = build(j)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = j.Run(ctx)
		}()
	}
	wg.Wait()
	for i := 1; i < procs; i++ {
		if n := len(outs[i].Records()); n != 0 {
			t.Errorf("process %d's sink got %d records; sinks run on process 0", i, n)
		}
	}
	return outs[0].Records(), errs
}

type distWindow = weir.WindowResult[string, int64]

func windowedCount(in []rec) func(j *weir.Job) *weir.Collect[distWindow] {
	return func(j *weir.Job) *weir.Collect[distWindow] {
		s := weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 64})
		timed := weir.EventTime(s, func(r rec) int64 { return r.TS }, 50*time.Millisecond)
		counts := weir.Count(weir.Window(weir.KeyBy(timed, func(r rec) string { return r.Key }), weir.Tumbling(100*time.Millisecond)))
		out := &weir.Collect[distWindow]{}
		weir.Sink(counts, out)
		return out
	}
}

// windowedSum sums the records' values per key and sliding window: an
// aggregator that reads its records, so the micro-batch rounds deposit
// records, not counts.
func windowedSum(in []rec) func(j *weir.Job) *weir.Collect[distWindow] {
	return func(j *weir.Job) *weir.Collect[distWindow] {
		s := weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 64})
		timed := weir.EventTime(s, func(r rec) int64 { return r.TS }, 50*time.Millisecond)
		vals := weir.Map(timed, func(r rec) distWindow { return distWindow{Key: r.Key, Value: r.Val} })
		sums := weir.Reduce(weir.Window(weir.KeyBy(vals, func(w distWindow) string { return w.Key }), weir.Sliding(200*time.Millisecond, 100*time.Millisecond)),
			func(a, b distWindow) distWindow { return distWindow{Key: a.Key, Value: a.Value + b.Value} })
		out := &weir.Collect[distWindow]{}
		weir.Sink(weir.Map(sums, func(w weir.WindowResult[string, distWindow]) distWindow {
			return distWindow{Key: w.Key, Start: w.Start, End: w.End, Value: w.Value.Value}
		}), out)
		return out
	}
}

func sortedWindows(rs []distWindow) []distWindow {
	slices.SortFunc(rs, func(a, b distWindow) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return int(a.Start - b.Start)
	})
	return rs
}

// A windowed count over 1-4 processes, pre-aggregated where records are
// (roundrobin), sent raw (hash) or through the micro-batch rounds of each
// process (prompt, pkg), equals the single-process result.
func TestDistributedWindowedCount(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	in := make([]rec, 20000)
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", int(r.ExpFloat64()*20)), TS: int64(i / 10)}
	}
	base := weir.NewJob("single", weir.Workers(2), weir.EpochRecords(500))
	want := windowedCount(in)(base)
	if err := runErr(t, base); err != nil {
		t.Fatal(err)
	}
	for _, strategy := range []string{"roundrobin", "hash", "prompt", "pkg"} {
		for procs := 1; procs <= 4; procs++ {
			opts := []weir.JobOption{weir.Workers(2), weir.EpochRecords(500), weir.Partitioning(strategy)}
			got, errs := runProcesses(t, procs, opts, windowedCount(in))
			for i, err := range errs {
				if err != nil {
					t.Fatalf("%s, %d processes: process %d: %v", strategy, procs, i, err)
				}
			}
			if !slices.Equal(sortedWindows(got), sortedWindows(want.Records())) {
				t.Errorf("%s, %d processes: %d windows; want %d", strategy, procs, len(got), len(want.Records()))
			}
		}
	}
}

// A sum over sliding windows, whose aggregator reads its records, over
// 1-3 processes under every strategy equals a plain sum.
func TestDistributedWindowedSum(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	in := make([]rec, 20000)
	want := map[[2]string]int64{}
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", int(r.ExpFloat64()*20)), TS: int64(i / 10), Val: int64(r.IntN(100))}
		for _, start := range []int64{in[i].TS - in[i].TS%100, in[i].TS - in[i].TS%100 - 100} {
			want[[2]string{in[i].Key, fmt.Sprint(start)}] += in[i].Val
		}
	}
	for _, strategy := range []string{"roundrobin", "hash", "prompt", "pkg"} {
		for procs := 1; procs <= 3; procs++ {
			opts := []weir.JobOption{weir.Workers(2), weir.EpochRecords(500), weir.Partitioning(strategy)}
			got, errs := runProcesses(t, procs, opts, windowedSum(in))
			for i, err := range errs {
				if err != nil {
					t.Fatalf("%s, %d processes: process %d: %v", strategy, procs, i, err)
				}
			}
			sums := map[[2]string]int64{}
			for _, w := range got {
				sums[[2]string{w.Key, fmt.Sprint(w.Start)}] += w.Value
			}
			if !maps.Equal(sums, want) {
				t.Errorf("%s, %d processes: %d windows differ from the plain sum's %d", strategy, procs, len(sums), len(want))
			}
		}
	}
}

// Ordered pipelines of every operator kind give the same list over 1-3
// processes.
func TestDistributedOrderedPipelines(t *testing.T) {
	for c := range 12 {
		r := rand.New(rand.NewPCG(uint64(c), 77))
		in := randomRecords(r)
		stages := randomStages(r)
		want := fissionReference(in, stages, true)
		procs := 1 + c%3
		opts := []weir.JobOption{weir.Workers(1 + r.IntN(3)), weir.Ordered(), weir.EpochRecords(1 + r.IntN(300)), weir.BatchSize(1 + r.IntN(50))}
		got, errs := runProcesses(t, procs, opts, func(j *weir.Job) *weir.Collect[frec] {
			return fissionJob(j, in, stages, true, 1+r.IntN(40), make([]exclusive, len(stages)))
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("case %d (%d processes, stages %v): process %d: %v", c, procs, stages, i, err)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("case %d (%d processes, stages %v): %d records, want %d, first difference at %d", c, procs, stages, len(got), len(want), firstDiff(got, want))
		}
	}
}

// The micro-batch rounds need an instance of the aggregation in every
// process: a Parallelism below the processes is refused at start.
func TestDistributedPromptRefusesFewInstances(t *testing.T) {
	_, errs := runProcesses(t, 2, []weir.JobOption{weir.Workers(1), weir.Partitioning("prompt")}, func(j *weir.Job) *weir.Collect[distWindow] {
		s := weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{}), func(r rec) int64 { return r.TS }, 0)
		out := &weir.Collect[distWindow]{}
		weir.Sink(weir.Count(weir.Window(weir.KeyBy(s, func(r rec) string { return r.Key }), weir.Tumbling(time.Second),
			weir.WindowOptions(weir.Parallelism(1)))), out)
		return out
	})
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "need an instance in each of the 2 processes") {
			t.Errorf("process %d: Run = %v; want the refusal of Parallelism(1)", i, err)
		}
	}
}

// countedCodec is a user codec that counts what it encodes: int pairs as
// text, to show it is the one used.
type countedCodec struct{ encoded *atomic.Int64 }

type pairRec struct{ A, B int }

func (c countedCodec) Append(buf []byte, vs []pairRec) []byte {
	c.encoded.Add(int64(len(vs)))
	for _, v := range vs {
		buf = fmt.Appendf(buf, "%d %d\n", v.A, v.B)
	}
	return buf
}

func (c countedCodec) Decode(buf []byte, vs []pairRec) ([]pairRec, error) {
	for _, line := range strings.Split(strings.TrimSuffix(string(buf), "\n"), "\n") {
		if line == "" {
			continue
		}
		var v pairRec
		if _, err := fmt.Sscanf(line, "%d %d", &v.A, &v.B); err != nil {
			return vs, err
		}
		vs = append(vs, v)
	}
	return vs, nil
}

// A registered codec carries its type between processes.
func TestDistributedUserCodec(t *testing.T) {
	var encoded atomic.Int64
	weir.RegisterCodec[pairRec](countedCodec{&encoded})
	defer weir.RegisterCodec[pairRec](nil)
	in := make([]int, 3000)
	for i := range in {
		in[i] = i
	}
	got, errs := runProcesses(t, 3, []weir.JobOption{weir.Workers(2)}, func(j *weir.Job) *weir.Collect[pairRec] {
		s := weir.Source(j, "src", weir.SliceSource[int]{Records: in, BatchSize: 100})
		out := &weir.Collect[pairRec]{}
		weir.Sink(weir.Map(s, func(i int) pairRec { return pairRec{i, i * i} }, weir.Stateless()), out)
		return out
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	slices.SortFunc(got, func(a, b pairRec) int { return a.A - b.A })
	for i, v := range got {
		if v != (pairRec{i, i * i}) {
			t.Fatalf("record %d = %v", i, v)
		}
	}
	if len(got) != len(in) || encoded.Load() == 0 {
		t.Errorf("%d records, %d encoded by the user codec; want %d and some", len(got), encoded.Load(), len(in))
	}
}

// Processes on an in-process network that build different jobs (process
// 0 has a source and sink that process 1 lacks) are refused at start,
// each naming the first operator that differs in process 0's order, from
// its own side, as processes over TCP are, instead of exchanging records
// over channels that do not match and hanging.
func TestDistributedLocalDifferentJobs(t *testing.T) {
	in := make([]rec, 2000)
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i%7), TS: int64(i)}
	}
	nets := transport.NewLocal(2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 2 {
		j := weir.NewJob("distributed", weir.Workers(2), weir.EpochRecords(100), weir.WithNetwork(nets[i]))
		windowedCount(in)(j)
		if i == 0 {
			s := weir.Source(j, "extra", weir.SliceSource[rec]{Records: in})
			weir.Sink(s, &weir.Collect[rec]{}, weir.Name("extra-out"))
		}
		wg.Go(func() { errs[i] = j.Run(ctx) })
	}
	wg.Wait()
	for i, want := range []string{"peer 1 (local) runs another job: operator extra is source, unkeyed state, 1:n, of weir_test.rec here, not set there",
		"peer 0 (local) runs another job: operator extra is not set here, source, unkeyed state, 1:n, of weir_test.rec there"} {
		var m *transport.MismatchError
		if !errors.As(errs[i], &m) || !strings.Contains(errs[i].Error(), want) {
			t.Errorf("process %d: %v; want a *MismatchError saying %q", i, errs[i], want)
		}
	}
}
