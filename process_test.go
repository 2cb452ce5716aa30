package weir_test

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/weirstream/weir"
)

// The model tests of KeyedProcess run one function twice: in the engine,
// and in a plain loop over the records in event-time order that fires a
// key's timers before the first record past them (the watermark of a
// perfectly ordered input). The function counts each key's records per
// 40 ms window of event time with timers: a window's timer fires at its
// end - 1, but every third window is postponed by one window (its timer
// registered, deleted and registered later); a count that is odd echoes
// 7 ms later through a timer the firing timer registers. Records whose
// Val is a multiple of 97 are emitted at once, and those whose Val is a
// multiple of 13 go to a side output by ID. None of this depends on the
// order in which a key's records arrive within the watermark's slack.

// pout is an output of the model function.
type pout struct {
	Key  string
	At   int64 // event time
	N    int64
	Kind int8 // 0 a window's count, 1 a record at once, 2 an echo, 3 a side output's ID, 9 a wrong event time
}

type pstate struct {
	Win  map[int64]int64 // window end -> records
	Echo map[int64]int64 // echo time -> count
}

const pw = 40 // the model's window, ms

// procCtx is what the model function uses of a *weir.ProcessContext.
type procCtx interface {
	Key() string
	State() *pstate
	ClearState()
	Timestamp() int64
	Emit(pout)
	RegisterEventTimer(int64)
	DeleteEventTimer(int64)
}

func postponed(end int64) bool { return (end/pw)%3 == 0 }

func modelOnRecord(c procCtx, r rec, side func(id int)) {
	st := c.State()
	if st.Win == nil {
		st.Win = map[int64]int64{}
	}
	end := (r.TS/pw + 1) * pw
	st.Win[end]++
	if postponed(end) {
		c.RegisterEventTimer(end - 1)
		c.DeleteEventTimer(end - 1)
		c.RegisterEventTimer(end - 1 + pw)
	} else {
		c.RegisterEventTimer(end - 1)
		c.RegisterEventTimer(end - 1) // the same timer
	}
	if r.Val%97 == 0 {
		c.Emit(pout{c.Key(), c.Timestamp(), r.Val, 1})
	}
	if r.Val%13 == 0 {
		side(r.ID)
	}
}

func modelOnTimer(c procCtx, t int64) {
	st := c.State()
	if n := st.Echo[t]; n > 0 {
		c.Emit(pout{c.Key(), t, n, 2})
		delete(st.Echo, t)
	}
	for _, end := range []int64{t + 1, t + 1 - pw} {
		if (end == t+1) == postponed(end) {
			continue // not this window's timer
		}
		n, ok := st.Win[end]
		if !ok {
			continue
		}
		c.Emit(pout{c.Key(), t, n, 0})
		delete(st.Win, end)
		if n%2 == 1 {
			if st.Echo == nil {
				st.Echo = map[int64]int64{}
			}
			st.Echo[t+7] += n
			c.RegisterEventTimer(t + 7) // off the windows' grid, so no window deletes it
		}
	}
	if len(st.Win) == 0 && len(st.Echo) == 0 {
		c.ClearState()
	}
}

// seqProc runs the model function in a plain loop: state and timers in
// maps.
type seqProc struct {
	states map[string]*pstate
	timers map[string]map[int64]bool
	key    string
	ts     int64
	out    []pout
}

func (s *seqProc) Key() string      { return s.key }
func (s *seqProc) Timestamp() int64 { return s.ts }
func (s *seqProc) Emit(o pout)      { s.out = append(s.out, o) }
func (s *seqProc) ClearState()      { delete(s.states, s.key) }
func (s *seqProc) State() *pstate {
	if s.states[s.key] == nil {
		s.states[s.key] = &pstate{}
	}
	return s.states[s.key]
}
func (s *seqProc) RegisterEventTimer(t int64) {
	if s.timers[s.key] == nil {
		s.timers[s.key] = map[int64]bool{}
	}
	s.timers[s.key][t] = true
}
func (s *seqProc) DeleteEventTimer(t int64) { delete(s.timers[s.key], t) }

// fireUpTo fires the timers at or below wm, earliest first, those that
// firing registers included.
func (s *seqProc) fireUpTo(wm int64) {
	for {
		key, at, found := "", int64(0), false
		for k, ts := range s.timers {
			for t := range ts {
				if t <= wm && (!found || t < at || t == at && k < key) {
					key, at, found = k, t, true
				}
			}
		}
		if !found {
			return
		}
		delete(s.timers[key], at)
		s.key, s.ts = key, at
		modelOnTimer(s, at)
	}
}

// modelProcess is the model's output over in, side outputs included.
func modelProcess(in []rec) []pout {
	recs := slices.Clone(in)
	slices.SortStableFunc(recs, func(a, b rec) int { return cmp.Compare(a.TS, b.TS) })
	s := &seqProc{states: map[string]*pstate{}, timers: map[string]map[int64]bool{}}
	for _, r := range recs {
		s.fireUpTo(r.TS - 1)
		s.key, s.ts = r.Key, r.TS
		modelOnRecord(s, r, func(id int) { s.out = append(s.out, pout{r.Key, r.TS, int64(id), 3}) })
	}
	s.fireUpTo(math.MaxInt64)
	return s.out
}

var modelSide = weir.NewSideOutput[rec]("multiples of 13")

// processJob adds the model function over the timed stream s to its job:
// its outputs, the side output's records as pouts, and a check downstream
// that every output carries its At as event time.
func processJob(s weir.Stream[rec], opts ...weir.Option) weir.Stream[pout] {
	type ctx = weir.ProcessContext[string, pstate, pout]
	main := weir.KeyedProcess(weir.KeyBy(s, recKey), weir.ProcessFunc[string, rec, pstate, pout]{
		OnRecord: func(c *ctx, r rec) {
			modelOnRecord(c, r, func(int) { modelSide.Emit(c, r) })
		},
		OnTimer: func(c *ctx, t weir.Timer) { modelOnTimer(c, t.Time) },
		Sides:   []weir.SideTag{modelSide},
	}, append([]weir.Option{weir.Name("model")}, opts...)...)
	side := weir.Map(weir.Side(main, modelSide), func(r rec) pout { return pout{r.Key, r.TS, int64(r.ID), 3} }, weir.Stateless())
	all := weir.Union(main, side)
	return weir.KeyedProcess(weir.KeyBy(all, func(o pout) string { return o.Key }), weir.ProcessFunc[string, pout, struct{}, pout]{
		OnRecord: func(c *weir.ProcessContext[string, struct{}, pout], o pout) {
			if c.Timestamp() != o.At {
				o.Kind = 9
			}
			c.Emit(o)
		},
	}, weir.Name("check-times"))
}

// KeyedProcess with timers, deleted and chained timers, state cleared and
// a side output equals the plain loop at 1-8 workers, with count and time
// epochs.
func TestKeyedProcessModel(t *testing.T) {
	in := genRecs(3, 6000, 20, maxDelay)
	want := modelProcess(in)
	for _, c := range runCfgs() {
		t.Run(c.name, func(t *testing.T) {
			j := c.job()
			out := &weir.Collect[pout]{}
			weir.Sink(processJob(timedSource(c, j, "src", in)), out)
			run(t, j)
			checkBag(t, out.Records(), want)
		})
	}
}

// Over 2 and 3 processes (an in-process network), the model's result.
func TestKeyedProcessDistributed(t *testing.T) {
	in := genRecs(4, 6000, 20, maxDelay)
	want := modelProcess(in)
	for procs := 2; procs <= 3; procs++ {
		got, errs := runProcesses(t, procs, []weir.JobOption{weir.Workers(2), weir.EpochRecords(300)}, func(j *weir.Job) *weir.Collect[pout] {
			s := weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 64}), recTS, outOfOrder)
			out := &weir.Collect[pout]{}
			weir.Sink(processJob(s), out)
			return out
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%d processes: process %d: %v", procs, i, err)
			}
		}
		checkBag(t, got, want)
	}
}

func init() {
	procScenarios["keyedprocess"] = func(j *weir.Job) func() []string {
		in := genRecs(5, 6000, 20, maxDelay)
		s := weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 64}), recTS, outOfOrder)
		out := &weir.Collect[pout]{}
		weir.Sink(processJob(s), out)
		return func() []string { return poutLines(out.Records()) }
	}
}

func poutLines(v []pout) []string {
	var l []string
	for _, o := range v {
		l = append(l, fmt.Sprintf("%+v", o))
	}
	slices.Sort(l)
	return l
}

// As 2 OS processes over TCP, the model's result.
func TestKeyedProcessProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	want := poutLines(modelProcess(genRecs(5, 6000, 20, maxDelay)))
	got, errs := runAsProcesses(t, "keyedprocess", 2, "WEIR_TEST_PARTITIONING=hash")
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("2 processes: %d outputs; want %d", len(got), len(want))
	}
}

// A job that crashed restarts from its checkpoint, with timers pending in
// it, at the same or another worker count or process count, and gives
// the model's result.
func TestKeyedProcessRecovery(t *testing.T) {
	in := genRecs(6, 12000, 30, maxDelay)
	want := modelProcess(in)
	build := func(crashAt int) func(j *weir.Job) *weir.Collect[pout] {
		return func(j *weir.Job) *weir.Collect[pout] {
			s := crashMap(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 64}), crashAt)
			out := &weir.Collect[pout]{}
			weir.Sink(processJob(weir.EventTime(s, recTS, outOfOrder, weir.Name("time"))), out, weir.Name("out"))
			return out
		}
	}
	for _, c := range []struct{ before, after int }{{2, 2}, {2, 3}, {4, 1}, {1, 4}} {
		dir := t.TempDir()
		opts := func(w int) []weir.JobOption {
			return []weir.JobOption{weir.Workers(w), weir.EpochRecords(150), weir.QueueDepth(2), weir.Checkpoints(dir, 2, 2)}
		}
		first := weir.NewJob("first", opts(c.before)...)
		build(11000)(first)
		if err := runErr(t, first); err == nil {
			t.Fatalf("workers %d: the first run did not crash", c.before)
		} else {
			t.Logf("complete after the crash: %v", completeCkpts(t, dir))
		}
		second := weir.NewJob("second", opts(c.after)...)
		out := build(-1)(second)
		if err := runErr(t, second); err != nil {
			t.Fatalf("workers %d -> %d: %v", c.before, c.after, err)
		}
		if second.Metrics().RestoredFrom == 0 {
			t.Fatalf("workers %d -> %d: no checkpoint restored", c.before, c.after)
		}
		t.Run(fmt.Sprintf("workers %d to %d", c.before, c.after), func(t *testing.T) { checkBag(t, out.Records(), want) })
	}
	dir := t.TempDir()
	opts := []weir.JobOption{weir.Workers(1), weir.EpochRecords(150), weir.QueueDepth(2), weir.Checkpoints(dir, 2, 2)}
	if _, errs := runProcesses(t, 2, opts, build(11000)); errs[0] == nil && errs[1] == nil {
		t.Fatal("2 processes: the first run did not crash")
	}
	got, errs := runProcesses(t, 3, opts, build(-1))
	for i, err := range errs {
		if err != nil {
			t.Fatalf("3 processes: process %d: %v", i, err)
		}
	}
	t.Run("2 to 3 processes", func(t *testing.T) { checkBag(t, got, want) })
}
