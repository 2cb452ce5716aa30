package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

// The benchmark's job, built by newRescaleJob as 1 and 2 in-process
// processes with the ballast, keyed state over part of the instances and
// the shared input schedule, runs to the end of its input with the result
// of a run of the query alone (nexmark.Baseline), all of it on process 0.
// (Processes built with different sinks ran other jobs over one network,
// and hung.)
func TestRescaleJobProcesses(t *testing.T) {
	const rate = 50000.0
	g := gen.Nexmark{Events: 10000, Seed: 3, StartTime: 1_700_000_000_000, EventTimeRate: rate}
	for _, q := range []string{"q8", "q4"} {
		want, n, err := nexmark.Baseline(q, g)
		if err != nil || n != g.Events || want.Rows == 0 {
			t.Fatalf("%s: reference read %d of %d events, %d rows: %v", q, n, g.Events, want.Rows, err)
		}
		for _, procs := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/processes=%d", q, procs), func(t *testing.T) {
				src := scheduled[gen.NexmarkEvent]{in: g, c: steadyClock(rate)}
				opts := []weir.JobOption{weir.BatchInterval(20 * time.Millisecond), weir.ActiveInstances(2)}
				j, err := newRescaleJob(q, src, ballast{Keys: 100, Pad: 1000}, procs, 4/procs, opts, nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := j.run(ctx); err != nil {
					t.Fatal(err)
				}
				if !j.sum.Equal(&want) {
					t.Errorf("result %s; want %s", j.sum.String(), want.String())
				}
				for i, s := range j.rest[1:] {
					if s.Rows != 0 {
						t.Errorf("process %d's checksum sink got %d rows; the sinks run on process 0", i+1, s.Rows)
					}
				}
			})
		}
	}
}
