package weir_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// stepJob is a job in which every record is an epoch of its own: one worker,
// sources read one record at a time and cut an epoch after each, so the
// watermark the window operator sees before record i is exactly
// max(ts[0..i-1]) - maxOutOfOrder - 1.
func stepJob() *weir.Job {
	return weir.NewJob("step", weir.Workers(1), weir.EpochRecords(1), weir.BatchSize(4))
}

func stepSource(j *weir.Job, in []rec, slack time.Duration) weir.Stream[rec] {
	return weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 1}), recTS, slack)
}

func TestLateRecordsAndRefiring(t *testing.T) {
	// Tumbling 100 ms windows, no out-of-orderness, 50 ms allowed lateness.
	in := []rec{
		{ID: 1, Key: "a", TS: 10},  // [0,100)
		{ID: 2, Key: "a", TS: 120}, // wm 119: [0,100) fires with 1, kept until wm 149
		{ID: 3, Key: "a", TS: 20},  // within lateness: [0,100) fires again with 2
		{ID: 4, Key: "a", TS: 200}, // wm 199: [0,100) dropped, [100,200) fires with 1
		{ID: 5, Key: "a", TS: 30},  // [0,100) is past cleanup: late
		{ID: 6, Key: "a", TS: 150}, // within lateness: [100,200) fires again with 2
	}
	j := stepJob()
	ws := weir.Window(weir.KeyBy(stepSource(j, in, 0), recKey), weir.Tumbling(100*time.Millisecond),
		weir.AllowedLateness(50*time.Millisecond))
	out := &bag[weir.WindowResult[string, int64]]{}
	late := &bag[rec]{}
	weir.Sink(weir.Count(ws), out)
	weir.Sink(ws.Late(), late)
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []weir.WindowResult[string, int64]{
		{Key: "a", Start: 0, End: 100, Value: 1},
		{Key: "a", Start: 0, End: 100, Value: 2},
		{Key: "a", Start: 100, End: 200, Value: 1},
		{Key: "a", Start: 100, End: 200, Value: 2},
		{Key: "a", Start: 200, End: 300, Value: 1},
	}
	if !slices.Equal(out.out, want) {
		t.Errorf("results:\n got %v\nwant %v", out.out, want)
	}
	if !slices.Equal(late.out, []rec{in[4]}) {
		t.Errorf("late output %v, want %v", late.out, in[4:5])
	}
	if n := j.Metrics().Late; n != 1 {
		t.Errorf("Metrics().Late = %d, want 1", n)
	}
}

// lateModel simulates a window operator that sees each record as its own
// epoch (see stepJob): it returns every firing and the late records.
func lateModel(in []rec, slack, lateness int64, assign func(ts int64) [][2]int64) (fired []weir.WindowResult[string, int64], late []rec) {
	type state struct {
		n            int64
		fired, dirty bool
	}
	wins := map[winKey]*state{}
	fire := func(wm int64) {
		for k, s := range wins {
			if k.End-1 <= wm && (!s.fired || s.dirty) {
				fired = append(fired, weir.WindowResult[string, int64]{Key: k.Key, Start: k.Start, End: k.End, Value: s.n})
				s.fired, s.dirty = true, false
			}
			if k.End-1+lateness <= wm {
				delete(wins, k)
			}
		}
	}
	wm, maxTS := int64(math.MinInt64), int64(math.MinInt64)
	for _, r := range in {
		isLate := true
		for _, w := range assign(r.TS) {
			k := winKey{r.Key, w[0], w[1]}
			if k.End-1+lateness <= wm {
				continue
			}
			isLate = false
			s := wins[k]
			if s == nil {
				s = &state{}
				wins[k] = s
			}
			s.n++
			s.dirty = s.fired
		}
		if isLate {
			late = append(late, r)
		}
		maxTS = max(maxTS, r.TS)
		wm = max(wm, maxTS-slack-1)
		fire(wm)
	}
	fire(math.MaxInt64)
	return fired, late
}

func TestLatenessAgainstModel(t *testing.T) {
	// Disorder of up to 200 ms against a watermark slack of 20 ms: many
	// records are late, some within the allowed lateness, some beyond it.
	in := genRecs(41, 3000, 5, 200)
	specs := []struct {
		name   string
		spec   weir.WindowSpec
		assign func(ts int64) [][2]int64
	}{
		{"tumbling", weir.Tumbling(50 * time.Millisecond), func(ts int64) [][2]int64 {
			s := ts - ts%50
			return [][2]int64{{s, s + 50}}
		}},
		{"sliding", weir.Sliding(60*time.Millisecond, 25*time.Millisecond), func(ts int64) [][2]int64 {
			var out [][2]int64
			for s := ts - ts%25; s > ts-60; s -= 25 {
				out = append(out, [2]int64{s, s + 60})
			}
			return out
		}},
	}
	for _, sp := range specs {
		for _, lateness := range []int64{0, 30, 90} {
			for _, strategy := range strategies {
				t.Run(sp.name+"/lateness"+time.Duration(lateness*1e6).String()+"/"+strategy, func(t *testing.T) {
					t.Parallel()
					wantOut, wantLate := lateModel(in, 20, lateness, sp.assign)
					if len(wantLate) == 0 || len(wantLate) == len(in) {
						t.Fatalf("model has %d late records of %d: the input does not test lateness", len(wantLate), len(in))
					}
					// Pre-aggregating strategies must send possibly-late
					// records raw, so that exactly the model's are late.
					j := weir.NewJob("step", weir.Workers(1), weir.EpochRecords(1), weir.BatchSize(4), weir.Partitioning(strategy))
					ws := weir.Window(weir.KeyBy(stepSource(j, in, 20*time.Millisecond), recKey), sp.spec,
						weir.AllowedLateness(time.Duration(lateness)*time.Millisecond))
					out := &bag[weir.WindowResult[string, int64]]{}
					late := &bag[rec]{}
					weir.Sink(weir.Count(ws), out)
					weir.Sink(ws.Late(), late)
					if err := j.Run(context.Background()); err != nil {
						t.Fatal(err)
					}
					checkBag(t, out.out, wantOut)
					if !slices.Equal(late.out, wantLate) {
						t.Errorf("%d late records, want %d", len(late.out), len(wantLate))
					}
					if n := j.Metrics().Late; n != int64(len(wantLate)) {
						t.Errorf("Metrics().Late = %d, want %d", n, len(wantLate))
					}
				})
			}
		}
	}
}

// TestNothingDroppedUncounted checks with many workers and unpredictable
// watermarks that every record is either in the last firing of its window
// or in the late output, and that the late output is what Metrics counts.
func TestNothingDroppedUncounted(t *testing.T) {
	in := genRecs(42, 6000, 23, 300)
	type acc struct{ n, ids int64 }
	for _, c := range runCfgs() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			j := c.job()
			ws := weir.Window(weir.KeyBy(weir.EventTime(source(c, j, "src", in), recTS, 5*time.Millisecond), recKey),
				weir.Tumbling(40*time.Millisecond), weir.AllowedLateness(20*time.Millisecond))
			out := &bag[weir.WindowResult[string, acc]]{}
			late := &bag[rec]{}
			weir.Sink(weir.Aggregate(ws, weir.Aggregator[rec, acc, acc]{
				Add: func(a acc, r rec) acc { return acc{a.n + 1, a.ids + int64(r.ID)} },
			}), out)
			weir.Sink(ws.Late(), late, weir.Parallelism(2))
			if err := j.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			last := map[winKey]acc{}
			for _, r := range out.out {
				k := winKey{r.Key, r.Start, r.End}
				if r.Value.n > last[k].n {
					last[k] = r.Value
				}
			}
			var n, ids, wantIDs int64
			for _, a := range last {
				n, ids = n+a.n, ids+a.ids
			}
			for _, r := range late.out {
				n, ids = n+1, ids+int64(r.ID)
			}
			for _, r := range in {
				wantIDs += int64(r.ID)
			}
			if n != int64(len(in)) || ids != wantIDs {
				t.Errorf("windows and late output hold %d records (id sum %d), want %d (%d)", n, ids, len(in), wantIDs)
			}
			if len(late.out) == 0 {
				t.Error("no late records: the input does not test lateness")
			}
			if m := j.Metrics().Late; m != int64(len(late.out)) {
				t.Errorf("Metrics().Late = %d, late output has %d records", m, len(late.out))
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	recs := []rec{{Key: "a", TS: 1}}
	tests := []struct {
		name  string
		build func(j *weir.Job)
		want  string
	}{
		{"time window without event time", func(j *weir.Job) {
			weir.Sink(weir.Count(weir.Window(weir.KeyBy(weir.Source(j, "s", weir.SliceSource[rec]{Records: recs}), recKey),
				weir.Tumbling(time.Second))), &bag[weir.WindowResult[string, int64]]{})
		}, "need event time"},
		{"session aggregator without merge", func(j *weir.Job) {
			ws := weir.Window(weir.KeyBy(stepSource(j, recs, 0), recKey), weir.Session(time.Second))
			weir.Sink(weir.Aggregate(ws, weir.Aggregator[rec, avgAcc, float64]{Add: average.Add, Result: average.Result}), &bag[weir.WindowResult[string, float64]]{})
		}, "Merge"},
		{"join with session windows", func(j *weir.Job) {
			k := weir.KeyBy(stepSource(j, recs, 0), recKey)
			weir.Sink(weir.Join(k, k, weir.Session(time.Second), joinRecs), &bag[joined]{})
		}, "session"},
		{"join without event time", func(j *weir.Job) {
			l := weir.KeyBy(stepSource(j, recs, 0), recKey)
			r := weir.KeyBy(weir.Source(j, "r", weir.SliceSource[rec]{Records: recs}), recKey)
			weir.Sink(weir.Join(l, r, weir.Tumbling(time.Second), joinRecs), &bag[joined]{})
		}, "event time"},
		{"aggregator without add", func(j *weir.Job) {
			ws := weir.Window(weir.KeyBy(stepSource(j, recs, 0), recKey), weir.Global())
			weir.Aggregate(ws, weir.Aggregator[rec, int, int]{})
		}, "Add"},
		{"aggregator without result", func(j *weir.Job) {
			ws := weir.Window(weir.KeyBy(stepSource(j, recs, 0), recKey), weir.Global())
			weir.Aggregate(ws, weir.Aggregator[rec, avgAcc, float64]{Add: average.Add})
		}, "Result"},
		{"late before aggregate", func(j *weir.Job) {
			ws := weir.Window(weir.KeyBy(stepSource(j, recs, 0), recKey), weir.Global())
			weir.Sink(ws.Late(), &bag[rec]{})
		}, "Late"},
		{"aggregated twice", func(j *weir.Job) {
			ws := weir.Window(weir.KeyBy(stepSource(j, recs, 0), recKey), weir.Global())
			weir.Count(ws)
			weir.Count(ws)
		}, "once"},
		{"zero tumbling size", func(j *weir.Job) {
			weir.Count(weir.Window(weir.KeyBy(stepSource(j, recs, 0), recKey), weir.Tumbling(0)))
		}, "at least 1ms"},
		{"zero slide", func(j *weir.Job) {
			weir.Count(weir.Window(weir.KeyBy(stepSource(j, recs, 0), recKey), weir.Sliding(time.Second, 0)))
		}, "at least 1ms"},
		{"zero session gap", func(j *weir.Job) {
			weir.Count(weir.Window(weir.KeyBy(stepSource(j, recs, 0), recKey), weir.Session(0)))
		}, "at least 1ms"},
		{"negative lateness", func(j *weir.Job) {
			weir.Count(weir.Window(weir.KeyBy(stepSource(j, recs, 0), recKey), weir.Global(), weir.AllowedLateness(-time.Second)))
		}, "negative"},
		{"union with and without event time", func(j *weir.Job) {
			s := weir.Source(j, "s", weir.SliceSource[rec]{Records: recs})
			weir.Sink(weir.Union(weir.EventTime(s, recTS, 0), s), &bag[rec]{})
		}, "event time"},
		{"union across jobs", func(j *weir.Job) {
			other := weir.NewJob("other")
			a := weir.Source(j, "a", weir.SliceSource[rec]{Records: recs})
			b := weir.Source(other, "b", weir.SliceSource[rec]{Records: recs})
			weir.Sink(weir.Union(a, b), &bag[rec]{})
		}, "different jobs"},
		{"no operators", func(j *weir.Job) {}, "no operators"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := weir.NewJob("bad", weir.Workers(2))
			tt.build(j)
			err := j.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run error %v, want one mentioning %q", err, tt.want)
			}
			if _, err := j.Explain(); err == nil {
				t.Errorf("Explain of an invalid job succeeded")
			}
		})
	}
}

func TestRunTwice(t *testing.T) {
	j := weir.NewJob("twice", weir.Workers(1))
	weir.Sink(weir.Source(j, "s", weir.SliceSource[int]{Records: []int{1, 2}}), &bag[int]{})
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := j.Run(context.Background()); err == nil {
		t.Error("second Run succeeded")
	}
}

// TestHoppingGapNotLate: with a slide longer than the size, a record
// between two windows belongs to none. It is on time, so it must not be
// counted or output as late (or the spec must be rejected).
func TestHoppingGapNotLate(t *testing.T) {
	// A slide longer than the size would leave records in no window, to be
	// counted as late although they are on time; such windows are refused
	// when the job is built.
	in := []rec{{ID: 1, Key: "a", TS: 5}, {ID: 2, Key: "a", TS: 15}, {ID: 3, Key: "a", TS: 35}}
	j := stepJob()
	ws := weir.Window(weir.KeyBy(stepSource(j, in, time.Second), recKey), weir.Sliding(10*time.Millisecond, 30*time.Millisecond))
	weir.Sink(weir.Count(ws), &bag[weir.WindowResult[string, int64]]{})
	err := j.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "longer than size") {
		t.Fatalf("Run = %v; want the gapped sliding window refused", err)
	}
}
