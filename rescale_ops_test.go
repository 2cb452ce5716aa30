package weir_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/pebblestate"
)

// The keyed operators give the results of a plain computation when their
// key groups move while the job runs: every keyed operator in one job,
// its keyed operators rescaled from 2 to 4 instances and from 4 to 1,
// by each strategy, under both window partitionings.

// rsOut is one result of any operator of rescaleOps, as plain values: the
// operator, the key and up to three figures.
type rsOut struct {
	Op      string
	Key     string
	A, B, C int64
}

// rescaleInput is n records over 52 keys, 16 a millisecond; each key is
// absent from one stretch of 1600 records in four (its records go to the
// next key), so that sessions and state time-to-live end and start again.
func rescaleInput(n int) []rec {
	in := make([]rec, n)
	for i := range in {
		k := i % 52
		if (i/1600+k)%4 == 0 {
			k = (k + 1) % 52
		}
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", k), TS: int64(i) / 16, Val: int64(i % 7)}
	}
	return in
}

func isLeft(r rec) bool   { return r.ID%3 != 0 }
func joinKey(r rec) int64 { return int64(r.ID % 997) }

// rescaleOps builds every keyed operator over in, read at 8000 records a
// second by one reader, and returns their outputs, by operator.
func rescaleOps(j *weir.Job, in []rec) *weir.Collect[rsOut] { return rescaleOpsAt(j, in, 8000, nil) }

// rescaleOpsAt is rescaleOps reading rate records a second, with mid (if
// set) between the source and the operators.
func rescaleOpsAt(j *weir.Job, in []rec, rate float64, mid func(weir.Stream[rec]) weir.Stream[rec]) *weir.Collect[rsOut] {
	s := weir.Source(j, "src", weir.Paced[rec](weir.SliceSource[rec]{Records: in, BatchSize: 32}, rate), weir.Parallelism(1))
	if mid != nil {
		s = mid(s)
	}
	timed := weir.EventTime(s, recTS, 10*time.Millisecond, weir.Name("time"), weir.Parallelism(1))
	left := weir.Filter(timed, isLeft, weir.Name("left"), weir.Stateless())
	right := weir.Filter(timed, func(r rec) bool { return !isLeft(r) }, weir.Name("right"), weir.Stateless())
	keyed := weir.KeyBy(timed, recKey)
	var outs []weir.Stream[rsOut]
	win := func(name string, ws weir.Stream[weir.WindowResult[string, int64]]) {
		outs = append(outs, weir.Map(ws, func(w weir.WindowResult[string, int64]) rsOut {
			return rsOut{name, w.Key, w.Start, w.End, w.Value}
		}, weir.Name(name+"-out"), weir.Stateless()))
	}
	tumbling := weir.Count(weir.Window(keyed, weir.Tumbling(50*time.Millisecond), weir.WindowOptions(weir.Name("tumbling"))))
	win("tumbling", tumbling)
	win("sliding", weir.Count(weir.Window(keyed, weir.Sliding(100*time.Millisecond, 50*time.Millisecond), weir.WindowOptions(weir.Name("sliding")))))
	win("session", weir.Count(weir.Window(keyed, weir.Session(20*time.Millisecond), weir.WindowOptions(weir.Name("session")))))
	less := func(a, b int64) bool { return a < b }
	win("topn", weir.TopN(tumbling, 3, less, weir.Name("topn")))
	win("argmax", weir.ArgMax(tumbling, less, weir.Name("argmax")))

	pair := func(name string) func(k string, l, r rec) rsOut {
		return func(k string, l, r rec) rsOut { return rsOut{name, k, int64(l.ID), int64(r.ID), 0} }
	}
	outs = append(outs,
		weir.Join(weir.KeyBy(left, recKey), weir.KeyBy(right, recKey), weir.Tumbling(50*time.Millisecond), pair("join"),
			weir.WindowOptions(weir.Name("join"))),
		weir.IntervalJoin(weir.KeyBy(left, recKey), weir.KeyBy(right, recKey), -3*time.Millisecond, 3*time.Millisecond, pair("interval"),
			weir.Name("interval")),
		weir.InnerJoin(weir.KeyBy(left, joinKey), weir.KeyBy(right, joinKey), func(k int64, l, r rec) rsOut {
			return rsOut{"inner", "", k, int64(l.ID), int64(r.ID)}
		}, weir.Name("inner")))

	// Event-time timers: a count per key and 50 ms window, emitted by the
	// window end's timer.
	type pctx = weir.ProcessContext[string, map[int64]int64, rsOut]
	outs = append(outs, weir.KeyedProcess(keyed, weir.ProcessFunc[string, rec, map[int64]int64, rsOut]{
		OnRecord: func(c *pctx, r rec) {
			m := c.State()
			if *m == nil {
				*m = map[int64]int64{}
			}
			end := r.TS/50*50 + 49
			(*m)[end]++
			c.RegisterEventTimer(end)
		},
		OnTimer: func(c *pctx, tm weir.Timer) {
			m := c.State()
			c.Emit(rsOut{"kprocess", c.Key(), tm.Time, (*m)[tm.Time], 0})
			delete(*m, tm.Time)
		},
	}, weir.Name("kprocess")))

	// CoProcess: the left and right counts per key and 50 ms window.
	type cctx = weir.ProcessContext[string, map[int64][2]int64, rsOut]
	add := func(c *cctx, r rec, side int) {
		m := c.State()
		if *m == nil {
			*m = map[int64][2]int64{}
		}
		end := r.TS/50*50 + 49
		v := (*m)[end]
		v[side]++
		(*m)[end] = v
		c.RegisterEventTimer(end)
	}
	outs = append(outs, weir.CoProcess(weir.KeyBy(left, recKey), weir.KeyBy(right, recKey), weir.CoProcessFunc[string, rec, rec, map[int64][2]int64, rsOut]{
		OnLeft:  func(c *cctx, r rec) { add(c, r, 0) },
		OnRight: func(c *cctx, r rec) { add(c, r, 1) },
		OnTimer: func(c *cctx, tm weir.Timer) {
			m := c.State()
			v := (*m)[tm.Time]
			c.Emit(rsOut{"coprocess", c.Key(), tm.Time, v[0], v[1]})
			delete(*m, tm.Time)
		},
	}, weir.Name("coprocess")))

	// Process with state that expires 30 ms of event time after its last
	// write: each key counts again from 1 after its absences.
	outs = append(outs, weir.Process(keyed, func(k string, n *int64, r rec, out []rsOut) []rsOut {
		*n++
		return append(out, rsOut{"ttl", k, int64(r.ID), *n, 0})
	}, weir.StateTTL(30*time.Millisecond, weir.EventTimeDomain), weir.Name("ttl")))

	out := &weir.Collect[rsOut]{}
	weir.Sink(weir.Union(outs[0], outs[1:]...), out, weir.Name("out"))
	return out
}

// rescaleModel is the plain computation of rescaleOps' outputs.
func rescaleModel(in []rec) map[string][]rsOut {
	want := map[string][]rsOut{}
	type win struct {
		key        string
		start, end int64
	}
	counts := func(windows func(ts int64) [][2]int64) map[win]int64 {
		m := map[win]int64{}
		for _, r := range in {
			for _, w := range windows(r.TS) {
				m[win{r.Key, w[0], w[1]}]++
			}
		}
		return m
	}
	emit := func(name string, m map[win]int64) {
		for w, n := range m {
			want[name] = append(want[name], rsOut{name, w.key, w.start, w.end, n})
		}
	}
	tumbling := counts(func(ts int64) [][2]int64 { return [][2]int64{{ts / 50 * 50, ts/50*50 + 50}} })
	emit("tumbling", tumbling)
	emit("sliding", counts(func(ts int64) [][2]int64 {
		s := ts / 50 * 50
		return [][2]int64{{s - 50, s + 50}, {s, s + 100}}
	}))
	// Sessions: a key's records less than 20 ms apart.
	sessions := map[win]int64{}
	byKey := map[string][]int64{}
	for _, r := range in {
		byKey[r.Key] = append(byKey[r.Key], r.TS)
	}
	for k, ts := range byKey {
		cur := win{k, ts[0], ts[0] + 20}
		var n int64
		for _, t := range ts {
			if t >= cur.end {
				sessions[cur] = n
				cur, n = win{k, t, t + 20}, 0
			}
			cur.end, n = t+20, n+1
		}
		sessions[cur] = n
	}
	emit("session", sessions)
	// TopN and ArgMax of the tumbling counts: by count, then key.
	byWin := map[int64][]rsOut{}
	for w, n := range tumbling {
		byWin[w.start] = append(byWin[w.start], rsOut{Key: w.key, A: w.start, B: w.end, C: n})
	}
	for _, rs := range byWin {
		slices.SortFunc(rs, func(a, b rsOut) int { return cmp.Or(cmp.Compare(b.C, a.C), cmp.Compare(a.Key, b.Key)) })
		for i, r := range rs {
			if i < 3 {
				r.Op = "topn"
				want["topn"] = append(want["topn"], r)
			}
			if r.C == rs[0].C {
				r.Op = "argmax"
				want["argmax"] = append(want["argmax"], r)
			}
		}
	}
	joinModel(in, want)
	return want
}

// joinModel adds the results of rescaleOps' joins and processes to want.
func joinModel(in []rec, want map[string][]rsOut) {
	type win struct {
		key        string
		start, end int64
	}
	var ls, rs []rec
	for _, r := range in {
		if isLeft(r) {
			ls = append(ls, r)
		} else {
			rs = append(rs, r)
		}
	}
	byKeyR := map[string][]rec{}
	byJoinKeyR := map[int64][]rec{}
	for _, r := range rs {
		byKeyR[r.Key] = append(byKeyR[r.Key], r)
		byJoinKeyR[joinKey(r)] = append(byJoinKeyR[joinKey(r)], r)
	}
	for _, l := range ls {
		for _, r := range byKeyR[l.Key] {
			if l.TS/50 == r.TS/50 {
				want["join"] = append(want["join"], rsOut{"join", l.Key, int64(l.ID), int64(r.ID), 0})
			}
			if l.TS-3 <= r.TS && r.TS <= l.TS+3 {
				want["interval"] = append(want["interval"], rsOut{"interval", l.Key, int64(l.ID), int64(r.ID), 0})
			}
		}
		for _, r := range byJoinKeyR[joinKey(l)] {
			want["inner"] = append(want["inner"], rsOut{"inner", "", joinKey(l), int64(l.ID), int64(r.ID)})
		}
	}
	// The processes.
	co := map[win][2]int64{}
	for _, r := range in {
		w := win{r.Key, r.TS/50*50 + 49, 0}
		v := co[w]
		if isLeft(r) {
			v[0]++
		} else {
			v[1]++
		}
		co[w] = v
	}
	for w, v := range co {
		want["kprocess"] = append(want["kprocess"], rsOut{"kprocess", w.key, w.start, v[0] + v[1], 0})
		want["coprocess"] = append(want["coprocess"], rsOut{"coprocess", w.key, w.start, v[0], v[1]})
	}
	last, n := map[string]int64{}, map[string]int64{}
	for _, r := range in {
		if l, ok := last[r.Key]; ok && l+30 <= r.TS {
			n[r.Key] = 0
		}
		last[r.Key] = r.TS
		n[r.Key]++
		want["ttl"] = append(want["ttl"], rsOut{"ttl", r.Key, int64(r.ID), n[r.Key], 0})
	}
}

// checkOps compares got with want, operator by operator.
func checkOps(t *testing.T, got []rsOut, want map[string][]rsOut) {
	t.Helper()
	by := map[string][]rsOut{}
	for _, r := range got {
		by[r.Op] = append(by[r.Op], r)
	}
	for op, w := range want {
		t.Run(op, func(t *testing.T) { checkBag(t, by[op], w) })
	}
	for op := range by {
		if want[op] == nil && op != "ttl" {
			t.Errorf("outputs of an unknown operator %q", op)
		}
	}
}

// withoutTTL is want without the outputs of the Process with a state TTL.
// Under time-based epochs they depend on timing: the watermark that
// expires state moves at epoch ends, and a machine that stalls may read a
// key's return in the same epoch as the records that would have expired
// its state. Under count-based epochs (EpochRecords) they do not.
func withoutTTL(want map[string][]rsOut) map[string][]rsOut {
	out := maps.Clone(want)
	delete(out, "ttl")
	return out
}

// rescaleDuring runs j, asks it to rescale to instances once its sources
// have read at least records, and returns once the job ended.
func rescaleDuring(t *testing.T, j *weir.Job, records int64, instances int, opts ...weir.RescaleOption) {
	t.Helper()
	rescaleWhen(t, j, fmt.Sprintf("reading %d records", records), func() bool { return j.Metrics().Records >= records }, nil, instances, opts...)
}

// rescaleWhen runs j, asks it to rescale to instances once ready says so,
// calls asked (if set) once it has, and returns once the job ended.
func rescaleWhen(t *testing.T, j *weir.Job, what string, ready func() bool, asked func(), instances int, opts ...weir.RescaleOption) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()
	for !ready() {
		select {
		case err := <-done:
			t.Fatalf("the job ended before %s: %v", what, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	m, err := j.Rescale(instances, opts...)
	if asked != nil {
		asked()
	}
	if err != nil {
		t.Errorf("Rescale(%d): %v", instances, err)
	} else if err := m.Wait(ctx); err != nil {
		t.Errorf("waiting for the rescale: %v", err)
	} else if m.Moves == 0 {
		t.Errorf("Rescale(%d) moves no key group", instances)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if late := j.Metrics().Late; late != 0 {
		t.Errorf("%d late records", late)
	}
}

func TestRescaleEveryKeyedOperator(t *testing.T) {
	in := rescaleInput(8000)
	want := rescaleModel(in)
	// Roundrobin partitioning with epochs of 100 records, hash
	// partitioning with epochs of 20 ms.
	for _, part := range []string{"roundrobin", "hash"} {
		for _, strat := range []weir.RescaleStrategy{weir.Batched, weir.AllAtOnce, weir.Fluid} {
			for _, c := range []struct{ from, to int }{{2, 4}, {4, 1}} {
				t.Run(fmt.Sprintf("%s/%v/%d-%d", part, strat, c.from, c.to), func(t *testing.T) {
					t.Parallel()
					epochs, want := weir.EpochRecords(100), want
					if part == "hash" {
						epochs, want = weir.BatchInterval(20*time.Millisecond), withoutTTL(want)
					}
					j := weir.NewJob("rescale-ops", weir.Workers(4), epochs, weir.ActiveInstances(c.from), weir.Partitioning(part))
					out := rescaleOps(j, in)
					rescaleDuring(t, j, 2000, c.to, weir.WithStrategy(strat))
					checkOps(t, out.Records(), want)
				})
			}
		}
	}
}

// The same with the keyed state in Pebble: the moved key groups leave one
// instance's store and enter another's.
func TestRescalePebble(t *testing.T) {
	in := rescaleInput(8000)
	want := rescaleModel(in)
	for _, c := range []struct {
		strat    weir.RescaleStrategy
		from, to int
	}{{weir.Batched, 2, 4}, {weir.AllAtOnce, 4, 2}, {weir.Fluid, 4, 1}} {
		t.Run(fmt.Sprintf("%v/%d-%d", c.strat, c.from, c.to), func(t *testing.T) {
			t.Parallel()
			j := weir.NewJob("rescale-pebble", weir.Workers(4), weir.EpochRecords(100),
				weir.ActiveInstances(c.from), pebblestate.Dir(t.TempDir()))
			out := rescaleOps(j, in)
			rescaleDuring(t, j, 2000, c.to, weir.WithStrategy(c.strat))
			checkOps(t, out.Records(), want)
		})
	}
}
