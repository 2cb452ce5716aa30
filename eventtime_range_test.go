package weir_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// farIn returns ordinary records (disorder within outOfOrder) with one
// record near math.MaxInt64 among them, whose 100 ms window would end past
// int64, and that record.
func farIn() (in []rec, far rec) {
	in = genRecs(81, 3000, 5, maxDelay)
	far = rec{ID: len(in), Key: "k1", TS: math.MaxInt64 - 3}
	return slices.Insert(slices.Clone(in), 700, far), far
}

// TestFarFutureEventFailsTheJob is the reported bug: one event near
// math.MaxInt64 among ordinary ones pushed the watermark to the top, so
// every later event was late, and its window's end wrapped. Now the job
// fails, naming the record, instead of counting the rest as late.
func TestFarFutureEventFailsTheJob(t *testing.T) {
	in, far := farIn()
	j := weir.NewJob("far", weir.Workers(2), weir.EpochRecords(50))
	timed := weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 16}), recTS, outOfOrder, weir.Name("ts"))
	out := &weir.Collect[weir.WindowResult[string, int64]]{}
	weir.Sink(weir.Count(weir.Window(weir.KeyBy(timed, recKey), weir.Tumbling(100*time.Millisecond))), out)
	err := j.Run(context.Background())
	want := fmt.Sprintf(`weir: EventTime "ts": event time %d of record %v is outside the range windows can hold [`, far.TS, far)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run = %v; want an error containing %q", err, want)
	}
	if n := j.Metrics().Late; n != 0 {
		t.Errorf("Metrics().Late = %d; the far event made ordinary events late", n)
	}
	for _, r := range out.Records() {
		if r.End <= r.Start {
			t.Errorf("result %+v: a window end wrapped", r)
		}
	}
}

// TestFarFutureEventRoutedAside routes records outside the window's
// TimeRange to a sink of their own before EventTime: the far event goes
// there, and the ordinary events after it are counted on time, exactly as
// without it.
func TestFarFutureEventRoutedAside(t *testing.T) {
	in, far := farIn()
	spec := weir.Tumbling(100 * time.Millisecond)
	lo, hi := spec.TimeRange()
	inRange := func(r rec) bool { return lo <= r.TS && r.TS <= hi }
	j := weir.NewJob("far", weir.Workers(2), weir.EpochRecords(50))
	src := weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 16})
	aside := &weir.Collect[rec]{}
	weir.Sink(weir.Filter(src, func(r rec) bool { return !inRange(r) }, weir.Stateless()), aside)
	timed := weir.EventTime(weir.Filter(src, inRange, weir.Stateless()), recTS, outOfOrder)
	out := &weir.Collect[weir.WindowResult[string, int64]]{}
	weir.Sink(weir.Count(weir.Window(weir.KeyBy(timed, recKey), spec)), out)
	if err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := aside.Records(); !slices.Equal(got, []rec{far}) {
		t.Errorf("routed aside %v; want only %v", got, far)
	}
	if n := j.Metrics().Late; n != 0 {
		t.Errorf("Metrics().Late = %d; want 0", n)
	}
	ordinary := slices.DeleteFunc(slices.Clone(in), func(r rec) bool { return r == far })
	checkBag(t, out.Records(), groupModel(ordinary, xspec{kind: "tumbling", size: 100}))
}

// TestEventTimeRangeThroughLateStream: the records of a window's late
// output keep their times, so a window on that output narrows the range
// of the EventTime above the first window. A time that the first window
// holds but the session window on its late output does not (ts+gap past
// int64) fails the job at EventTime; without that session window it runs.
func TestEventTimeRangeThroughLateStream(t *testing.T) {
	const gap = time.Hour
	in := []rec{{ID: 0, Key: "a", TS: 1000}, {ID: 1, Key: "a", TS: math.MaxInt64 - 1000}}
	for _, withSession := range []bool{false, true} {
		j := stepJob()
		timed := weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 1}), recTS, 0, weir.Name("ts"))
		first := weir.Window(weir.KeyBy(timed, recKey), weir.Tumbling(100*time.Millisecond))
		out := &weir.Collect[weir.WindowResult[string, int64]]{}
		weir.Sink(weir.Count(first), out)
		if withSession {
			weir.Sink(weir.Count(weir.Window(weir.KeyBy(first.Late(), recKey), weir.Session(gap))), out)
		} else {
			weir.Sink(first.Late(), &weir.Collect[rec]{})
		}
		err := j.Run(context.Background())
		if !withSession {
			if err != nil {
				t.Fatalf("without the session window: %v", err)
			}
			continue
		}
		want := fmt.Sprintf("event time %d of record %v is outside the range windows can hold [", in[1].TS, in[1])
		hi := fmt.Sprintf(", %d]", int64(math.MaxInt64)-gap.Milliseconds())
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), hi) {
			t.Fatalf("Run = %v; want an error containing %q and %q", err, want, hi)
		}
	}
}

// TestWindowResultsOutsideDownstreamRange: a window's results carry the
// time end-1, the global window's math.MaxInt64-1, which no tumbling window
// can hold (its end would be past int64). The global window fails the job
// naming its result instead of passing the time on.
func TestWindowResultsOutsideDownstreamRange(t *testing.T) {
	in := []rec{{ID: 0, Key: "a", TS: 10}, {ID: 1, Key: "b", TS: 20}}
	j := weir.NewJob("chain", weir.Workers(2))
	timed := weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{Records: in}), recTS, 0)
	global := weir.Count(weir.Window(weir.KeyBy(timed, recKey), weir.Global(), weir.WindowOptions(weir.Name("all"))))
	byKey := weir.KeyBy(global, func(r weir.WindowResult[string, int64]) string { return r.Key })
	weir.Sink(weir.Count(weir.Window(byKey, weir.Tumbling(100*time.Millisecond))), &weir.Collect[weir.WindowResult[string, int64]]{})
	err := j.Run(context.Background())
	want := fmt.Sprintf("all: the result of window [%d, %d) of key ", int64(math.MinInt64), int64(math.MaxInt64))
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), fmt.Sprintf("has event time %d, outside the range", int64(math.MaxInt64-1))) {
		t.Fatalf("Run = %v; want the global window's error %q…", err, want)
	}
}

// TestJoinNarrowsBothInputs: a join's window narrows the range of the
// EventTime of each input.
func TestJoinNarrowsBothInputs(t *testing.T) {
	left := []rec{{ID: 0, Key: "a", TS: 10}}
	right := []rec{{ID: 1, Key: "a", TS: 20}, {ID: 2, Key: "a", TS: math.MaxInt64 - 3}}
	j := weir.NewJob("join", weir.Workers(2))
	l := weir.EventTime(weir.Source(j, "l", weir.SliceSource[rec]{Records: left}), recTS, 0, weir.Name("lt"))
	r := weir.EventTime(weir.Source(j, "r", weir.SliceSource[rec]{Records: right}), recTS, 0, weir.Name("rt"))
	joined := weir.Join(weir.KeyBy(l, recKey), weir.KeyBy(r, recKey), weir.Tumbling(100*time.Millisecond),
		func(_ string, a, b rec) int { return a.ID + b.ID })
	weir.Sink(joined, &weir.Collect[int]{})
	err := j.Run(context.Background())
	want := fmt.Sprintf(`EventTime "rt": event time %d of record %v is outside`, right[1].TS, right[1])
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run = %v; want an error containing %q", err, want)
	}
}

// TestSentinelTimesRejected: math.MinInt64 and math.MaxInt64 are the
// watermark's -inf and +inf, so no record may have them, even with no
// window downstream.
func TestSentinelTimesRejected(t *testing.T) {
	for _, ts := range []int64{math.MinInt64, math.MaxInt64} {
		in := []rec{{ID: 0, Key: "a", TS: 5}, {ID: 1, Key: "a", TS: ts}}
		j := weir.NewJob("inf", weir.Workers(1))
		timed := weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{Records: in}), recTS, time.Second, weir.Name("ts"))
		weir.Sink(timed, &weir.Collect[rec]{})
		err := j.Run(context.Background())
		want := fmt.Sprintf("event time %d of record %v is outside the range windows can hold [%d, %d]", ts, in[1], int64(math.MinInt64+1), int64(math.MaxInt64-1))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Run = %v; want an error containing %q", err, want)
		}
	}
}
