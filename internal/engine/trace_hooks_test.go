package engine

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/op"
	"github.com/weirstream/weir/internal/trace"
	"github.com/weirstream/weir/internal/transport"
)

type traceRec struct {
	ID  int
	Key string
}

// traceJob reads n records, counts them per key behind a keyed exchange
// and collects the counts.
func traceJob(j *Job, n int) {
	in := make([]traceRec, n)
	for i := range in {
		in[i] = traceRec{ID: i, Key: fmt.Sprintf("k%d", i%23)}
	}
	s := op.SourceOf(j.Graph, "src", dataflow.SliceSource[traceRec]{Records: in, BatchSize: 50})
	k := op.KeyBy(s, func(r traceRec) string { return r.Key })
	c := op.Process(k, func(_ string, st *int, _ traceRec, out []int) []int {
		*st++
		return append(out, *st)
	}, dataflow.Name("count"))
	op.Sink(c, &dataflow.Collect[int]{}, dataflow.Name("out"))
}

// A traced run of two processes: each worker's activities never overlap,
// and every message received was sent, on either side of the network.
func TestTraceHooks(t *testing.T) {
	nets := transport.NewLocal(2)
	jobs := make([]*Job, 2)
	errs := make([]error, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i := range jobs {
		jobs[i] = NewJob("trace", dataflow.Workers(2), dataflow.EpochRecords(300), dataflow.KeyGroups(32),
			dataflow.QueueDepth(2), dataflow.WithNetwork(nets[i]))
		traceJob(jobs[i], 6000)
		jobs[i].tracer.SetOn(true)
		wg.Go(func() { errs[i] = jobs[i].Run(ctx) })
	}
	wg.Wait()
	type edge struct{ ch, seq uint64 }
	sent := map[edge]bool{}
	var recvs []edge
	kinds := map[trace.Kind]int{}
	for p, j := range jobs {
		if errs[p] != nil {
			t.Fatalf("process %d: %v", p, errs[p])
		}
		workers := j.tracer.Workers()
		by := map[uint32][]trace.Event{}
		for _, e := range j.tracer.Take() {
			if int(e.Worker) >= len(workers) {
				t.Fatalf("process %d: event of worker %d of %d", p, e.Worker, len(workers))
			}
			by[e.Worker] = append(by[e.Worker], e)
			kinds[e.Kind]++
			switch e.Kind {
			case trace.Send:
				if sent[edge{e.Channel, e.Seq}] {
					t.Errorf("process %d: two sends of message %d on channel %#x", p, e.Seq, e.Channel)
				}
				sent[edge{e.Channel, e.Seq}] = true
			case trace.Recv:
				recvs = append(recvs, edge{e.Channel, e.Seq})
			}
		}
		for w, evs := range by {
			sort.SliceStable(evs, func(a, b int) bool { return evs[a].Start < evs[b].Start })
			for k, e := range evs {
				if e.End < e.Start {
					t.Fatalf("process %d, %s: %v ends before it starts", p, workers[w].Name, e)
				}
				if k > 0 && e.Start < evs[k-1].End {
					t.Fatalf("process %d, %s: %v starts before %v ends", p, workers[w].Name, e, evs[k-1])
				}
			}
		}
	}
	for _, r := range recvs {
		if !sent[r] {
			t.Fatalf("message %d on channel %#x was received but never sent", r.seq, r.ch)
		}
	}
	for _, k := range []trace.Kind{trace.Processing, trace.Send, trace.Recv, trace.Serialization, trace.Deserialization,
		trace.WaitInput, trace.Alignment} {
		if kinds[k] == 0 {
			t.Errorf("no %s activity recorded; kinds %v", k, kinds)
		}
	}
	if len(recvs) == 0 {
		t.Fatal("no message received")
	}
}

// With tracing off nothing is recorded.
func TestTraceOff(t *testing.T) {
	j := NewJob("trace", dataflow.Workers(2), dataflow.EpochRecords(300))
	traceJob(j, 2000)
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ev := j.tracer.Take(); len(ev) != 0 {
		t.Fatalf("%d events recorded with tracing off", len(ev))
	}
}
