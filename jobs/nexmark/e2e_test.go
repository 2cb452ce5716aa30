package nexmark_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

// startTime is the event time of the first event: not on a window
// boundary, so that the first and last windows are partial.
const startTime = 1_700_000_003_217

// testGen is a generator whose events span many windows: 100 events per
// second of event time.
func testGen(n int64, seed uint64) gen.Nexmark {
	return gen.Nexmark{Events: n, Seed: seed, StartTime: startTime, EventTimeRate: 100, BatchSize: 97}
}

func testEvents(t testing.TB) int64 {
	if testing.Short() {
		return 10_000
	}
	return 20_000
}

// events reads all of g's events with one reader.
func events(t testing.TB, g gen.Nexmark) []gen.NexmarkEvent {
	t.Helper()
	r, err := g.Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []gen.NexmarkEvent
	for {
		b, err := r.Read()
		out = append(out, b...)
		if err != nil {
			return out
		}
	}
}

// updating names the queries whose rows update a value per key (the
// first column): their result is each key's last row.
var updating = map[string]bool{"q4": true}

// final is the final result of a query's CSV lines, sorted.
func final(name string, lines []string) []string {
	if !updating[name] {
		out := slices.Clone(lines)
		slices.Sort(out)
		return out
	}
	last := map[string]string{}
	for _, l := range lines {
		key, _, _ := strings.Cut(l, ",")
		last[key] = l
	}
	out := make([]string, 0, len(last))
	for _, l := range last {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// run runs query name over in on a new job and returns its CSV lines and
// checksum.
func run(t testing.TB, name string, in weir.Input[gen.NexmarkEvent], opts ...weir.JobOption) ([]string, nexmark.Checksum) {
	t.Helper()
	job := weir.NewJob("nexmark-"+name, opts...)
	var lines weir.Collect[string]
	var sum nexmark.Checksum
	if err := nexmark.Add(name, weir.Source(job, "events", in), nexmark.Sinks{CSV: &lines, Sum: &sum}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := job.Run(ctx); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if m := job.Metrics(); m.Late != 0 {
		t.Errorf("%s: %d late records", name, m.Late)
	}
	return lines.Records(), sum
}

// check compares a run's lines and checksum with the reference.
func check(t *testing.T, name string, lines []string, sum nexmark.Checksum, want []string) {
	t.Helper()
	got := final(name, lines)
	if !slices.Equal(got, want) {
		t.Errorf("%s: %d final rows, want %d", name, len(got), len(want))
		for i := range max(len(got), len(want)) {
			if i >= len(got) || i >= len(want) || got[i] != want[i] {
				g, w := "(none)", "(none)"
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				t.Errorf("%s: first difference at row %d: got %q, want %q", name, i, g, w)
				break
			}
		}
	}
	ws := nexmark.ChecksumOf(name, want)
	if !sum.Equal(&ws) {
		t.Errorf("%s: engine checksum %v, reference's %v", name, &sum, &ws)
	}
	if ls := nexmark.ChecksumOf(name, lines); !ls.Equal(&sum) {
		t.Errorf("%s: checksum of the engine's CSV %v, engine's checksum %v", name, &ls, &sum)
	}
}

// reference returns each query's reference result over g's events, and
// checks that it is not trivially small and that Baseline agrees.
func reference(t *testing.T, g gen.Nexmark) map[string][]string {
	t.Helper()
	evs := events(t, g)
	if int64(len(evs)) != g.Events {
		t.Fatalf("read %d events, want %d", len(evs), g.Events)
	}
	out := map[string][]string{}
	for _, name := range nexmark.Names() {
		want, err := nexmark.Reference(name, evs)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) < 5 {
			t.Fatalf("%s: the reference has %d rows; want more to test with", name, len(want))
		}
		ws := nexmark.ChecksumOf(name, want)
		bs, n, err := nexmark.Baseline(name, g)
		if err != nil || n != g.Events || !bs.Equal(&ws) {
			t.Fatalf("%s: Baseline = %v, %d events, %v; want the reference's %v over %d", name, &bs, n, err, &ws, g.Events)
		}
		out[name] = want
		t.Logf("%s: %d rows", name, len(want))
	}
	return out
}

func TestQueriesMatchReference(t *testing.T) {
	g := testGen(testEvents(t), 5)
	want := reference(t, g)
	epochs := map[string][]weir.JobOption{
		"records":  {weir.EpochRecords(500)},
		"interval": {weir.BatchInterval(2 * time.Millisecond), weir.BatchSize(64)},
	}
	for _, name := range nexmark.Names() {
		for _, w := range []int{1, 2, 4} {
			for e, opts := range epochs {
				t.Run(fmt.Sprintf("%s/workers=%d/%s", name, w, e), func(t *testing.T) {
					lines, sum := run(t, name, g, append(slices.Clone(opts), weir.Workers(w))...)
					check(t, name, lines, sum, want[name])
				})
			}
		}
	}
}

func TestNames(t *testing.T) {
	want := []string{"q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q9", "q11"}
	if got := nexmark.Names(); !slices.Equal(got[:min(len(got), len(want))], want) {
		t.Errorf("Names() = %v; want %v first", got, want)
	}
	for _, n := range nexmark.Names() {
		if nexmark.Header(n) == "" {
			t.Errorf("Header(%q) is empty", n)
		}
	}
	if nexmark.Header("q6") != "" {
		t.Error("Header of an unknown query is not empty")
	}
	job := weir.NewJob("x")
	if err := nexmark.Add("q6", weir.Source(job, "events", testGen(10, 1)), nexmark.Sinks{}); err == nil {
		t.Error("Add of an unknown query succeeded")
	}
}
