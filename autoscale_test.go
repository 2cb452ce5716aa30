package weir_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// sizedCount is a running word count whose keyed step takes service of
// time a record (a sleep: its instances' true rate is fixed whatever the
// machine's cores), read at rate records a second.
func sizedCount(j *weir.Job, in []string, rate float64, service time.Duration) *weir.Collect[wordCount] {
	s := weir.Source(j, "words", weir.Paced[string](weir.SliceSource[string]{Records: in, BatchSize: 16}, rate))
	c := weir.Process(weir.KeyBy(s, func(w string) string { return w }), func(k string, st *int, _ string, out []wordCount) []wordCount {
		time.Sleep(service)
		*st++
		return append(out, wordCount{k, *st})
	}, weir.Name("count"))
	out := &weir.Collect[wordCount]{}
	weir.Sink(c, out, weir.Name("out"))
	return out
}

// A job started on one instance of four, whose keyed step serves at
// most 3300 records a second an instance (about 900 here: a 300 µs sleep
// takes about a millisecond), is read at 6000 a second: it sizes itself
// up within three decisions, never above its planned instances, the
// instances it grows to take records, it finds no key group too hot (97
// words spread evenly), and its counts are the plain count's.
// (Batches of 16 records: an instance's figures move a batch at a time,
// and a batch of a thousand records of this step takes a second.)
func TestAutoscaleSizesUp(t *testing.T) {
	in := wordsInput(30000)
	j := sizingJob()
	out := sizedCount(j, in, 6000, 300*time.Microsecond)
	ds := runSizingUp(t, j)
	if last := ds[len(ds)-1]; last.InForce <= last.Epoch {
		t.Errorf("the last decision %+v never took force", last)
	}
	for i, d := range ds {
		if d.To < 1 || d.To > 4 || i > 0 && d.From != ds[i-1].To || len(d.Hot) > 0 {
			t.Errorf("decision %d: %+v of %+v", i, d, ds)
		}
	}
	t.Logf("decisions %+v", ds)
	// The instances it grew to took records.
	took := 0
	for _, in := range j.Stats().Instances() {
		if in.Operator == "count" && in.RecordsIn > 0 {
			took++
		}
	}
	if took < ds[len(ds)-1].To {
		t.Errorf("%d instances of the count took records; the last decision was to %d", took, ds[len(ds)-1].To)
	}
	if got := out.Records(); len(got) != len(in) {
		t.Errorf("%d counts for %d records", len(got), len(in))
	}
	checkWordCounts(t, in, out.Records())
}

// sizingJob is a job of four instances a keyed operator, started on one,
// that sizes itself every 20 epochs of 50 ms and rescales all at once.
func sizingJob() *weir.Job {
	pol := weir.DefaultAutoscalePolicy
	pol.Every = 20
	return weir.NewJob("autoscale", weir.Workers(4), weir.ActiveInstances(1), weir.BatchInterval(50*time.Millisecond), weir.BatchSize(16),
		weir.Autoscale(pol, weir.WithStrategy(weir.AllAtOnce)))
}

// runSizingUp runs j, which starts on one instance and must size itself
// up, and returns its decisions: one to three, the first up from 1.
func runSizingUp(t *testing.T, j *weir.Job) []weir.ScaleDecision {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := j.Run(ctx); err != nil {
		t.Fatal(err)
	}
	ds, err := j.ScaleDecisions()
	if err != nil {
		t.Errorf("the autoscaler stopped: %v", err)
	}
	if len(ds) == 0 || len(ds) > 3 || ds[0].From != 1 || ds[0].To < 2 {
		t.Fatalf("decisions %+v; want one to three, the first up from 1", ds)
	}
	return ds
}

// What cannot autoscale is refused before the job starts.
func TestAutoscaleRefused(t *testing.T) {
	in := wordsInput(100)
	bad := weir.DefaultAutoscalePolicy
	bad.Utilization = 0
	for _, c := range []struct {
		name  string
		opts  []weir.JobOption
		build func(j *weir.Job)
		want  string
	}{
		{"no keyed operator", []weir.JobOption{weir.Workers(2), weir.Autoscale(weir.DefaultAutoscalePolicy)}, func(j *weir.Job) {
			weir.Sink(weir.Source(j, "words", weir.SliceSource[string]{Records: in}), &weir.Collect[string]{})
		}, "no keyed operator"},
		{"a bad policy", []weir.JobOption{weir.Workers(2), weir.Autoscale(bad)}, func(j *weir.Job) { sizedCount(j, in, 1000, 0) }, "target utilization"},
		{"no interval", []weir.JobOption{weir.Workers(2), weir.Autoscale(weir.AutoscalePolicy{})}, func(j *weir.Job) { sizedCount(j, in, 1000, 0) }, "policy interval"},
		{"count-based epochs", []weir.JobOption{weir.Workers(2), weir.EpochRecords(100), weir.Autoscale(weir.DefaultAutoscalePolicy)}, func(j *weir.Job) { sizedCount(j, in, 1000, 0) }, "count-based epochs"},
	} {
		j := weir.NewJob("refused", c.opts...)
		c.build(j)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := j.Run(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error with %q", c.name, err, c.want)
		}
	}
}

// A job whose keyed operators cannot move while it runs cannot size
// itself either.
func TestAutoscaleRefusedUnmovable(t *testing.T) {
	for _, opt := range []weir.JobOption{weir.Ordered()} {
		j := weir.NewJob("refused", weir.Workers(2), opt, weir.Autoscale(weir.DefaultAutoscalePolicy))
		sizedCount(j, wordsInput(100), 1000, 0)
		if err := j.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "Autoscale") {
			t.Errorf("%v", err)
		}
	}
}

// A job one of whose keys takes most of the records, more than one
// instance of its keyed step can serve, names that key's group as too
// hot in its decisions, and its counts are still the plain count's.
func TestAutoscaleNamesHotKeyGroup(t *testing.T) {
	in := wordsInput(6000)
	for i := range in {
		if i%5 < 3 {
			in[i] = "hot" // 60 %: 900 records a second at 1500
		}
	}
	j := sizingJob()
	// 1 ms a record: an instance serves at most 800 a second at the
	// target utilization, fewer as a sleep takes longer than asked.
	out := sizedCount(j, in, 1500, time.Millisecond)
	ds := runSizingUp(t, j)
	t.Logf("decisions %+v", ds)
	named := map[string]bool{}
	for _, d := range ds {
		for _, h := range d.Hot {
			g, _, _ := strings.Cut(h, " needs")
			named[g] = true
		}
	}
	if len(named) != 1 {
		t.Errorf("decisions %+v; want one key group named, the hot key's", ds)
	}
	checkWordCounts(t, in, out.Records())
}
