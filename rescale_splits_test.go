package weir_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/connector/gen"
)

// splitsInput is an input whose shares move, as records of type rec: the
// records a reader of the whole input reads, in order, and a function
// that adds the source, paced at rate records a second, to a job.
type splitsInput struct {
	name   string
	recs   []rec
	source func(j *weir.Job, rate float64) weir.Stream[rec]
}

// readAll reads all of in with one reader: the plain computation's input.
func readAll[T any](t *testing.T, in weir.Input[T]) []T {
	t.Helper()
	r, err := in.Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return seekRead(t, r)
}

// splitsInputs are n records of a slice, of a CSV file and of the YSB
// generator, each in time order, over a few dozen keys.
func splitsInputs(t *testing.T, n int) []splitsInput {
	slice := rescaleInput(n)
	var csv strings.Builder
	for _, r := range slice {
		fmt.Fprintf(&csv, "%d,%s,%d\n", r.ID, r.Key, r.TS)
	}
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	csvIn := file.CSV([]string{path}, func(f []string) (rec, error) {
		id, err := strconv.Atoi(f[0])
		if err != nil {
			return rec{}, err
		}
		ts, err := strconv.ParseInt(f[2], 10, 64)
		return rec{ID: id, Key: f[1], TS: ts}, err
	}, file.Options{BatchSize: 32})
	// 16 events a millisecond of event time, as rescaleInput.
	ysb := gen.YSB{Seed: 7, Events: int64(n), StartTime: gen.YSBEventsStart, EventTimeRate: 16000, BatchSize: 32}
	ysbRec := func(e gen.YSBEvent) rec { return rec{Key: e.EventType + "/" + e.AdType, TS: e.EventTime} }
	var ysbRecs []rec
	for _, e := range readAll(t, weir.Input[gen.YSBEvent](ysb)) {
		ysbRecs = append(ysbRecs, ysbRec(e))
	}
	return []splitsInput{
		{"slice", slice, func(j *weir.Job, rate float64) weir.Stream[rec] {
			return weir.Source(j, "src", weir.Paced[rec](weir.SliceSource[rec]{Records: slice, BatchSize: 32}, rate))
		}},
		{"file", readAll(t, csvIn), func(j *weir.Job, rate float64) weir.Stream[rec] {
			return weir.Source(j, "src", weir.Paced(csvIn, rate))
		}},
		{"gen", ysbRecs, func(j *weir.Job, rate float64) weir.Stream[rec] {
			s := weir.Source(j, "src", weir.Paced[gen.YSBEvent](ysb, rate))
			return weir.Map(s, ysbRec, weir.Name("rec"))
		}},
	}
}

// splitsCounts counts the records per key and 50 ms window of event time.
func splitsCounts(s weir.Stream[rec]) *weir.Collect[weir.WindowResult[string, int64]] {
	timed := weir.EventTime(s, recTS, 10*time.Millisecond, weir.Name("time"))
	counts := weir.Count(weir.Window(weir.KeyBy(timed, recKey), weir.Tumbling(50*time.Millisecond), weir.WindowOptions(weir.Name("count"))))
	out := &weir.Collect[weir.WindowResult[string, int64]]{}
	weir.Sink(counts, out, weir.Name("out"))
	return out
}

// plainCounts is splitsCounts' result by a plain loop.
func plainCounts(in []rec) map[string]int64 {
	want := map[string]int64{}
	for _, r := range in {
		want[fmt.Sprintf("%s@%d", r.Key, r.TS/50*50)]++
	}
	return want
}

func checkCounts(t *testing.T, got []weir.WindowResult[string, int64], want map[string]int64) {
	t.Helper()
	g := countsOf(got)
	if len(g) != len(want) {
		t.Errorf("%d windows; want %d", len(g), len(want))
	}
	for k, v := range want {
		if g[k] != v {
			t.Errorf("window %s counted %d; want %d", k, g[k], v)
			return
		}
	}
}

// sourceReads is what each instance of the source (the chain holding
// op) has read so far, by instance, in this process's figures.
func sourceReads(st weir.JobStats, op string, self int) map[int]int64 {
	out := map[int]int64{}
	for _, in := range st.Instances() {
		if in.Source && in.Process == self && slices.Contains(strings.Split(in.Operator, "→"), op) {
			out[in.Instance] = in.RecordsIn
		}
	}
	return out
}

// checkReads checks what par source instances read before and after a
// move from the first active to readers: every record is read by one
// instance, the instances without a share read nothing after the move
// and none before it, and if the move came before half the input was
// read, the readers read after it.
func checkReads(t *testing.T, before, after map[int]int64, par, active int, readers []int, total int) {
	t.Helper()
	var sum, early, late int64
	for i := range par {
		sum += after[i]
		early += before[i]
		late += after[i] - before[i]
		if !slices.Contains(readers, i) && after[i] != before[i] {
			t.Errorf("instance %d read %d records after the move; it has no share", i, after[i]-before[i])
		}
		if i >= active && !slices.Contains(readers, i) && after[i] != 0 {
			t.Errorf("instance %d read %d records; it never had a share", i, after[i])
		}
	}
	if sum != int64(total) {
		t.Errorf("the source instances read %d records; want %d", sum, total)
	}
	if early < int64(total)/2 && late == 0 {
		t.Errorf("no instance read after the move, with %d of %d records left", int64(total)-early, total)
	}
}

// waitRecords waits until j's sources have read n records, or fails.
func waitRecords(t *testing.T, j *weir.Job, n int64, done <-chan error) {
	t.Helper()
	for j.Metrics().Records < n {
		select {
		case err := <-done:
			t.Fatalf("the job ended (%v) before reading %d records", err, n)
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// A source's shares move while the job runs, from 2 readers to 4, from 4
// to 1 and from 4 to 2, along with the keyed operators: every record is
// still read once (the counts per key and window are the plain loop's,
// with none late), and after the move the instances without a share read
// nothing more while those given one read.
func TestSplitsMove(t *testing.T) {
	for _, in := range splitsInputs(t, 12000) {
		want := plainCounts(in.recs)
		for _, c := range []struct{ from, to int }{{2, 4}, {4, 1}, {4, 2}} {
			t.Run(fmt.Sprintf("%s/%d-%d", in.name, c.from, c.to), func(t *testing.T) {
				j := weir.NewJob("splits", weir.Workers(4), weir.BatchInterval(20*time.Millisecond), weir.ActiveInstances(c.from))
				out := splitsCounts(in.source(j, 8000))
				done := make(chan error, 1)
				go func() { done <- j.Run(context.Background()) }()
				waitRecords(t, j, 2000, done)
				m, err := j.Rescale(c.to, weir.WithStrategy(weir.AllAtOnce))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(m.Sources, []string{"src"}) {
					t.Errorf("the rescale moves the shares of %q; want src's", m.Sources)
				}
				if err := m.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				if !m.Completed() {
					t.Fatalf("the input ended before the move (epochs %d..%d, %d completed)", m.First, m.Last, j.Metrics().Epochs)
				}
				before := sourceReads(j.Stats(), "src", 0)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				checkReads(t, before, sourceReads(j.Stats(), "src", 0), 4, c.from, firstN(c.to), len(in.recs))
				if got := j.Metrics().Records; got != int64(len(in.recs)) {
					t.Errorf("%d records read; want %d", got, len(in.recs))
				}
				if late := j.Metrics().Late; late != 0 {
					t.Errorf("%d late records", late)
				}
				checkCounts(t, out.Records(), want)
			})
		}
	}
}

// notRescalable is an input whose readers can say where they stand and
// seek there, but cannot resume what other readers left.
type notRescalable struct{ recs []rec }

func (n notRescalable) Open(ctx weir.SourceContext) (weir.Reader[rec], error) {
	lo, hi := len(n.recs)*ctx.Instance/ctx.Parallelism, len(n.recs)*(ctx.Instance+1)/ctx.Parallelism
	return &seekOnly{recs: n.recs[lo:hi]}, nil
}

type seekOnly struct {
	recs []rec
	next int
}

func (r *seekOnly) Read() ([]rec, error) {
	if r.next == len(r.recs) {
		return nil, io.EOF
	}
	time.Sleep(time.Millisecond) // slowly enough to still run when asked to rescale
	n := min(16, len(r.recs)-r.next)
	r.next += n
	return r.recs[r.next-n : r.next], nil
}

func (r *seekOnly) Close() error { return nil }

func (r *seekOnly) Position(used int) ([]byte, error) {
	return strconv.AppendInt(nil, int64(r.next), 10), nil
}

func (r *seekOnly) Seek(pos []byte) error {
	n, err := strconv.Atoi(string(pos))
	r.next = n
	return err
}

// A source whose readers cannot resume other readers' records keeps its
// shares: the rescale moves the keyed operators and names the source as
// kept, with why, whether it runs as many instances as they do or fewer;
// the job's results are the plain loop's. (With fewer, each event-time
// instance takes records of both readers, which are far apart in event
// time: the watermark makes the lagging reader's records late, so the
// counts are checked with as many readers only.)
func TestSplitsKeptNotRescalable(t *testing.T) {
	in := rescaleInput(6000)
	for _, opts := range [][]weir.Option{nil, {weir.Parallelism(2)}} {
		j := weir.NewJob("kept", weir.Workers(4), weir.BatchInterval(20*time.Millisecond), weir.ActiveInstances(2))
		out := splitsCounts(weir.Source(j, "src", notRescalable{in}, opts...))
		done := make(chan error, 1)
		go func() { done <- j.Run(context.Background()) }()
		waitRecords(t, j, 500, done)
		m, err := j.Rescale(4)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Sources) != 0 || len(m.KeptSources) != 1 || !strings.Contains(m.KeptSources[0], "src: ") || !strings.Contains(m.KeptSources[0], "Rescalable") {
			t.Errorf("%d options: sources moved %q, kept %q; want src kept, for not being Rescalable", len(opts), m.Sources, m.KeptSources)
		}
		if m.Steps == 0 || m.Moves == 0 {
			t.Errorf("the keyed operators' rescale has %d steps of %d moves", m.Steps, m.Moves)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if opts == nil {
			checkCounts(t, out.Records(), plainCounts(in))
		}
	}
}

// Moves of a source's shares that cannot work are refused when they are
// asked for, with an error that says why, and the job runs on unharmed.
func TestSplitsRefused(t *testing.T) {
	in := rescaleInput(6000)
	for _, c := range []struct {
		name    string
		opts    []weir.JobOption
		input   weir.Input[rec]
		source  string
		readers []int
		words   []string
	}{
		{"not Rescalable", nil, notRescalable{in}, "src", []int{0}, []string{"source src", "Rescalable"}},
		{"count-based epochs", []weir.JobOption{weir.EpochRecords(200)}, notRescalable{in}, "src", []int{0}, []string{"source src", "count-based epochs"}},
		{"an instance twice", nil, weir.SliceSource[rec]{Records: in, BatchSize: 16}, "src", []int{1, 1}, []string{"instance 1", "two shares"}},
		{"no such instance", nil, weir.SliceSource[rec]{Records: in, BatchSize: 16}, "src", []int{0, 4}, []string{"no instance 4"}},
		{"no such source", nil, weir.SliceSource[rec]{Records: in, BatchSize: 16}, "other", []int{0}, []string{"no source other"}},
		{"no reader", nil, weir.SliceSource[rec]{Records: in, BatchSize: 16}, "src", nil, []string{"no instance to read"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := weir.NewJob("refuse-splits", append([]weir.JobOption{weir.Workers(4), weir.BatchInterval(20 * time.Millisecond)}, c.opts...)...)
			src := c.input
			if s, ok := src.(weir.SliceSource[rec]); ok {
				src = weir.Paced[rec](s, 8000)
			}
			out := splitsCounts(weir.Source(j, "src", src))
			done := make(chan error, 1)
			go func() { done <- j.Run(context.Background()) }()
			waitRecords(t, j, 100, done)
			_, err := weir.MoveSplits(j, c.source, c.readers)
			if err := <-done; err != nil {
				t.Fatalf("Run: %v", err)
			}
			wantRefusal(t, err, c.words...)
			checkCounts(t, out.Records(), plainCounts(in))
		})
	}
}
