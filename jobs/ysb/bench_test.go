package ysb

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// The two benchmarks run the same query over the same events, so that
// benchstat can compare them; `weir bench ysb --baseline` reports the same
// ratio from one process.

var (
	benchEvents []gen.YSBEvent
	benchAds    []gen.AdCampaign
)

func events(b *testing.B) ([]gen.YSBEvent, Campaigns) {
	if benchEvents == nil {
		benchEvents, benchAds = gen.YSBEvents(2_000_000, 1)
	}
	return benchEvents, FromAds(benchAds)
}

func BenchmarkBaseline(b *testing.B) {
	evs, c := events(b)
	b.ResetTimer()
	for b.Loop() {
		NewBaseline(c).Run(evs)
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkEngine(b *testing.B) {
	evs, c := events(b)
	want := Reference(evs, c)
	b.ResetTimer()
	for b.Loop() {
		job := weir.NewJob("ysb", weir.BatchInterval(100*time.Millisecond))
		out := &Collector{}
		weir.Sink(Query(weir.Source(job, "events", weir.SliceSource[gen.YSBEvent]{Records: evs}), c, 5*time.Second), out)
		if err := job.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		if got := out.Sorted(); !slices.Equal(got, want) {
			b.Fatal("engine output differs from the reference")
		}
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
