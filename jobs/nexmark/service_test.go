package nexmark_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

// A query built with Service gives the reference result, and its first
// keyed aggregation takes the service time for every record it folds.
func TestService(t *testing.T) {
	g := testGen(4000, 9)
	evs := events(t, g)
	costed := map[string]string{"q5": "q5-pane", "q8": "q8-window", "q11": "q11-session"}
	for _, name := range []string{"q5", "q8", "q11"} {
		t.Run(name, func(t *testing.T) {
			want, err := nexmark.Reference(name, evs)
			if err != nil {
				t.Fatal(err)
			}
			folds := int64(0)
			for _, e := range evs {
				switch {
				case name == "q8" && e.Kind != gen.BidKind, name != "q8" && e.Kind == gen.BidKind:
					folds++
				}
			}
			job := weir.NewJob("service-"+name, weir.Workers(2), weir.Partitioning("hash"), weir.BatchInterval(5*time.Millisecond))
			var lines weir.Collect[string]
			var sum nexmark.Checksum
			if err := nexmark.Add(name, weir.Source(job, "events", g), nexmark.Sinks{CSV: &lines, Sum: &sum}, nexmark.Service(50*time.Microsecond)); err != nil {
				t.Fatal(err)
			}
			if err := job.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			check(t, name, lines.Records(), sum, want)
			// The first keyed aggregation takes in every record it folds,
			// and its useful time holds a sleep a fold.
			var useful time.Duration
			var in int64
			for _, s := range job.Stats().Instances() {
				if s.Operator == costed[name] || strings.HasPrefix(s.Operator, costed[name]+"→") {
					useful += s.Useful
					in += s.RecordsIn
				}
			}
			t.Logf("%s: %d records in %v (%d folds)", costed[name], in, useful, folds)
			if in != folds || useful < time.Duration(folds)*50*time.Microsecond {
				t.Errorf("%s took %d records in %v; want the %d folds, 50µs each at least", costed[name], in, useful, folds)
			}
		})
	}
	job := weir.NewJob("x")
	if err := nexmark.Add("q7", weir.Source(job, "events", g), nexmark.Sinks{}, nexmark.Service(time.Millisecond)); err == nil || !strings.Contains(err.Error(), "no service time") {
		t.Errorf("q7 with a service time: %v", err)
	}
}
