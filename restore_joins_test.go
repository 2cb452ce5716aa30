package weir_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/pebblestate"
)

// restoreCase says how a job is crashed and restored: with how many
// workers before and after, and what else the job is given (a state
// backend under dir).
type restoreCase struct {
	before, after int
	extra         func(dir string) []weir.JobOption
}

// rescales are the restores every stateful operator of this file goes
// through: key groups move to other instances in each.
var rescales = []restoreCase{{before: 2, after: 3}, {before: 3, after: 1}, {before: 1, after: 4}}

// checkRestored runs build with checkpoints, crashing at the record with
// ID crashAt, then again without the crash from the checkpoint, at every
// case's worker counts and then from 2 processes to 3; check judges the
// restored run's output. A restore that lost state gives other output.
func checkRestored[T any](t *testing.T, cases []restoreCase, procs bool, crashAt int, build func(j *weir.Job, crashAt int) *weir.Collect[T], check func(desc string, got []T)) {
	t.Helper()
	opts := func(dir string, workers int, extra func(string) []weir.JobOption) []weir.JobOption {
		o := []weir.JobOption{weir.Workers(workers), weir.EpochRecords(40), weir.Checkpoints(filepath.Join(dir, "ckpt"), 2, 2)}
		if extra != nil {
			o = append(o, extra(dir)...)
		}
		return o
	}
	for _, c := range cases {
		desc := fmt.Sprintf("workers %d -> %d", c.before, c.after)
		dir := t.TempDir()
		first := weir.NewJob("first", opts(dir, c.before, c.extra)...)
		build(first, crashAt)
		if err := runErr(t, first); err == nil || !strings.Contains(err.Error(), "crash") {
			t.Fatalf("%s: first run: %v; want the crash", desc, err)
		}
		second := weir.NewJob("second", opts(dir, c.after, c.extra)...)
		out := build(second, -1)
		if err := runErr(t, second); err != nil {
			t.Fatalf("%s: %v", desc, err)
		}
		if second.Metrics().RestoredFrom == 0 || second.Metrics().Late != 0 {
			t.Fatalf("%s: restored from %d with %d late records; want a checkpoint and none", desc, second.Metrics().RestoredFrom, second.Metrics().Late)
		}
		check(desc, out.Records())
	}
	if !procs {
		return
	}
	dir := t.TempDir()
	_, errs := runProcesses(t, 2, opts(dir, 1, nil), func(j *weir.Job) *weir.Collect[T] { return build(j, crashAt) })
	if errs[0] == nil && errs[1] == nil {
		t.Fatal("2 processes: the first run did not crash")
	}
	got, errs := runProcesses(t, 3, opts(dir, 1, nil), func(j *weir.Job) *weir.Collect[T] { return build(j, -1) })
	for i, err := range errs {
		if err != nil {
			t.Fatalf("3 processes: process %d: %v", i, err)
		}
	}
	check("2 -> 3 processes", got)
}

// bagCheck compares a restored run's output with want as multisets.
func bagCheck[T comparable](t *testing.T, want []T) func(string, []T) {
	return func(desc string, got []T) {
		t.Helper()
		t.Run(desc, func(t *testing.T) { checkBag(t, got, want) })
	}
}

// crashLate fails at the record with ID crashAt (-1: never), after a
// pause in which the checkpoints taken so far are written: the inputs
// here are short, and a crash that came at once could leave none
// complete.
func crashLate(s weir.Stream[rec], crashAt int) weir.Stream[rec] {
	return weir.Map(s, func(r rec) rec {
		if r.ID == crashAt {
			time.Sleep(300 * time.Millisecond)
			panic("crash")
		}
		return r
	}, weir.Stateless(), weir.Name("crash"))
}

// joinJob is a record join of the join inputs, the left one crashing at
// crashAt.
func joinJob(j *weir.Job, crashAt int, join func(l, r weir.KeyedStream[string, rec]) weir.Stream[joined]) *weir.Collect[joined] {
	left, right := joinInputs()
	ls := weir.EventTime(crashLate(weir.Source(j, "left", weir.SliceSource[rec]{Records: left, BatchSize: 16}), crashAt), recTS, outOfOrder, weir.Name("left-time"))
	rs := weir.EventTime(weir.Source(j, "right", weir.SliceSource[rec]{Records: right, BatchSize: 16}), recTS, outOfOrder, weir.Name("right-time"))
	out := &weir.Collect[joined]{}
	weir.Sink(join(weir.KeyBy(ls, recKey), weir.KeyBy(rs, recKey)), out, weir.Name("out"))
	return out
}

func intervalJob(j *weir.Job, crashAt int) *weir.Collect[joined] {
	return joinJob(j, crashAt, func(l, r weir.KeyedStream[string, rec]) weir.Stream[joined] {
		return weir.IntervalJoin(l, r, -20*time.Millisecond, 30*time.Millisecond, joinRecs, weir.Name("join"))
	})
}

// innerJob's TTL is longer than the input, so nothing expires: the
// records' expiry is saved and restored with them.
func innerJob(domain weir.TimeDomain) func(j *weir.Job, crashAt int) *weir.Collect[joined] {
	return func(j *weir.Job, crashAt int) *weir.Collect[joined] {
		return joinJob(j, crashAt, func(l, r weir.KeyedStream[string, rec]) weir.Stream[joined] {
			return weir.InnerJoin(l, r, joinRecs, weir.Name("join"), weir.StateTTL(time.Hour, domain))
		})
	}
}

// The joins' state (each key's records of both sides) is saved by key
// group and restored at other worker and process counts.
func TestRecordJoinsRestore(t *testing.T) {
	left, right := joinInputs()
	t.Run("interval", func(t *testing.T) {
		checkRestored(t, rescales, true, 1200, intervalJob, bagCheck(t, intervalModel(left, right, -20, 30)))
	})
	t.Run("inner", func(t *testing.T) {
		checkRestored(t, rescales, true, 1200, innerJob(weir.EventTimeDomain), bagCheck(t, innerModel(left, right)))
	})
}

// allCountJob counts all records in sliding windows, crashing at crashAt.
func allCountJob(in []rec) func(j *weir.Job, crashAt int) *weir.Collect[weir.WindowResult[weir.Unit, int64]] {
	return func(j *weir.Job, crashAt int) *weir.Collect[weir.WindowResult[weir.Unit, int64]] {
		s := weir.EventTime(crashLate(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 16}), crashAt), recTS, outOfOrder, weir.Name("time"))
		out := &weir.Collect[weir.WindowResult[weir.Unit, int64]]{}
		weir.Sink(weir.Count(weir.WindowAll(s, weir.Sliding(100*time.Millisecond, 30*time.Millisecond), weir.WindowOptions(weir.Name("all")))), out, weir.Name("out"))
		return out
	}
}

func TestWindowAllRestore(t *testing.T) {
	in := genRecs(54, 3000, 37, maxDelay)
	want := unitResults(allWindows(winModels()[2], in), func(rs []rec) int64 { return int64(len(rs)) })
	checkRestored(t, rescales, true, 2000, allCountJob(in), bagCheck(t, want))
}

// updatingInput has records in time order over 20 keys, k0 to k2 twice
// as often as the others, and again every seventh record of k15 to k19
// 2000 records (200 ms of event time) later: the copies arrive after
// their windows fired, within the allowed lateness, and do not change
// the top three. A ranking that lost a window's earlier results would
// rank the copies' keys alone.
func updatingInput() []rec {
	base := make([]rec, 12000)
	for i := range base {
		k := i % 23
		if k >= 20 {
			k -= 20
		}
		base[i] = rec{ID: i, Key: fmt.Sprintf("k%d", k), Val: int64(k), TS: int64(i) / 10}
	}
	var in []rec
	for pos, r := range base {
		in = append(in, r)
		if pos >= 2000 && (pos-2000)%7 == 0 && base[pos-2000].Val >= 15 {
			c := base[pos-2000]
			c.ID += 100_000
			in = append(in, c)
		}
	}
	return in
}

// topJob ranks counts that windows update after they fired, keeping the
// windows' results for the upstream lateness.
func topJob(in []rec) func(j *weir.Job, crashAt int) *weir.Collect[countResult] {
	return func(j *weir.Job, crashAt int) *weir.Collect[countResult] {
		s := weir.EventTime(crashLate(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 16}), crashAt), recTS, 0, weir.Name("time"))
		cs := weir.Count(weir.Window(weir.KeyBy(s, recKey), weir.Tumbling(100*time.Millisecond), weir.AllowedLateness(time.Second), weir.WindowOptions(weir.Name("count"))))
		out := &weir.Collect[countResult]{}
		top := weir.TopN(cs, 3, func(a, b int64) bool { return a < b }, weir.Name("top"), weir.StateTTL(time.Second, weir.EventTimeDomain))
		weir.Sink(top, out, weir.Name("out"))
		return out
	}
}

// lastRanking checks that the last three results of each window are the
// top three of its final counts, in rank order.
func lastRanking(t *testing.T, in []rec) func(string, []countResult) {
	final := rankModel(results(fixedWindows(func(ts int64) [][2]int64 { return [][2]int64{{ts - ts%100, ts - ts%100 + 100}} })(in),
		func(rs []rec) int64 { return int64(len(rs)) }), 3)
	return func(desc string, got []countResult) {
		t.Helper()
		byWin := map[int64][]countResult{}
		for _, r := range got {
			byWin[r.Start] = append(byWin[r.Start], r)
		}
		for _, w := range final {
			rs := byWin[w.Start]
			if len(rs) < 3 {
				t.Fatalf("%s: window %d ranked %d results", desc, w.Start, len(rs))
			}
		}
		wantBy := map[int64][]countResult{}
		for _, w := range final {
			wantBy[w.Start] = append(wantBy[w.Start], w)
		}
		for start, want := range wantBy {
			rs := byWin[start]
			if last := rs[len(rs)-3:]; !slices.Equal(last, want) {
				t.Fatalf("%s: window %d last ranked %+v; want %+v", desc, start, last, want)
			}
		}
		if len(byWin) != len(wantBy) {
			t.Errorf("%s: %d windows ranked; want %d", desc, len(byWin), len(wantBy))
		}
	}
}

// TopN keeps the windows it ranked (StateTTL) across a restore: updates
// after the restore rank a window with its results from before.
func TestTopNRestore(t *testing.T) {
	in := updatingInput()
	checkRestored(t, rescales, true, 9000, topJob(in), lastRanking(t, in))
}

// Keyed state in Pebble: the joins and TopN give the same results,
// across a restore.
func TestJoinsPebbleState(t *testing.T) {
	left, right := joinInputs()
	in := updatingInput()
	pebble := []restoreCase{{before: 2, after: 3, extra: func(dir string) []weir.JobOption {
		return []weir.JobOption{pebblestate.Dir(filepath.Join(dir, "state"))}
	}}}
	checkRestored(t, pebble, false, 1200, intervalJob, bagCheck(t, intervalModel(left, right, -20, 30)))
	checkRestored(t, pebble, false, 1200, innerJob(weir.ProcessingTimeDomain), bagCheck(t, innerModel(left, right)))
	checkRestored(t, pebble, false, 9000, topJob(in), lastRanking(t, in))
}
