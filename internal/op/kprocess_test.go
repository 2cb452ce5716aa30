package op

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
)

// gather is a terminal pusher that keeps what it receives, records with
// their event times.
type gather[T any] struct {
	v     []T
	ts    []int64
	marks int
}

func (g *gather[T]) Push(b *dataflow.Batch[T]) error {
	v, ts := b.Dense(&dataflow.Batch[T]{})
	g.v = append(g.v, v...)
	g.ts = append(g.ts, ts...)
	return nil
}

func (g *gather[T]) Mark(progress.Marker) error { g.marks++; return nil }

func (g *gather[T]) take() []T {
	v := g.v
	g.v, g.ts = nil, nil
	return v
}

// harness runs one KeyedProcess instance by hand: records in, markers in,
// outputs out, with a clock the test sets.
type harness[T, S, U any] struct {
	t     *testing.T
	task  *keyedProcTask[string, T, S, U]
	out   *gather[U]
	clock int64
	h     func(string) uint64
}

type hopts struct {
	ttl   dataflow.TTL
	sides map[string]any // side output name -> its pusher (a *gather)
}

func newHarness[T, S, U any](t *testing.T, f ProcessFunc[string, T, S, U], o hopts) *harness[T, S, U] {
	t.Helper()
	hs := &harness[T, S, U]{t: t, out: &gather[U]{}}
	hs.h, _ = partition.Hasher[string]()
	j := &dataflow.Graph{Cfg: dataflow.DefaultJobConfig()}
	j.Cfg.BatchSize = 4
	j.Cfg.Clock = func() time.Time { return time.UnixMilli(hs.clock) }
	n := &dataflow.Node{Name: "proc", Ports: singlePort[U]()}
	sp := &procSpec[string, S, U]{onTimer: f.OnTimer, timed: true, ttl: o.ttl}
	sp.sides = newSideReg(j, n, f.Sides, true)
	outs := []any{dataflow.Pusher[U](hs.out)}
	for name, p := range o.sides {
		sp.sides.port[name] = len(outs)
		outs = append(outs, p)
	}
	if j.Err != nil {
		t.Fatal(j.Err)
	}
	p, err := sp.instance(j, n, dataflow.TaskCtx{}, outs)
	if err != nil {
		t.Fatal(err)
	}
	hs.task = &keyedProcTask[string, T, S, U]{procCore: p, f: f.OnRecord}
	return hs
}

// krec is a record of key k at event time ts.
type krec[T any] struct {
	k  string
	ts int64
	v  T
}

func (hs *harness[T, S, U]) batch(recs ...krec[T]) error {
	kb := &dataflow.Kbatch[string, T]{Pool: &sync.Pool{}}
	for _, r := range recs {
		kb.Recs = append(kb.Recs, dataflow.Krec[string, T]{H: hs.h(r.k), Ts: r.ts, K: r.k, V: r.v})
	}
	return hs.task.Batch(0, kb)
}

func (hs *harness[T, S, U]) mark(wm int64) error {
	return hs.task.Mark(progress.Marker{Watermark: wm, Final: wm == progress.MaxWatermark})
}

func (hs *harness[T, S, U]) must(err error) {
	hs.t.Helper()
	if err != nil {
		hs.t.Fatal(err)
	}
}

// fired is what the timer tests' functions emit.
type fired struct {
	Key       string
	Time, TS  int64
	Domain    dataflow.TimeDomain
	ProcTime  int64
	Watermark int64
}

// Event-time timers: one per key and time, fired in time order when the
// watermark reaches them and before the marker goes on, a due timer that
// a firing one registers fires in the same pass, a deleted one never, and
// all fire at the end of the input.
func TestKeyedProcessEventTimers(t *testing.T) {
	var hs *harness[int64, int, fired]
	hs = newHarness(t, ProcessFunc[string, int64, int, fired]{
		OnRecord: func(c *ProcessContext[string, int, fired], v int64) {
			switch {
			case v < 0:
				c.DeleteEventTimer(-v)
			default:
				c.RegisterEventTimer(v)
				c.RegisterEventTimer(v) // one timer
			}
		},
		OnTimer: func(c *ProcessContext[string, int, fired], tm Timer) {
			if hs.out.marks != 0 {
				t.Errorf("timer %v fired after the marker went on", tm)
			}
			c.Emit(fired{Key: c.Key(), Time: tm.Time, TS: c.Timestamp(), Domain: tm.Domain, Watermark: c.Watermark()})
			if tm.Time%10 == 5 {
				c.RegisterEventTimer(tm.Time + 1) // due now: fires in this pass
			}
		},
	}, hopts{})
	hs.must(hs.batch(krec[int64]{"a", 1, 30}, krec[int64]{"b", 2, 15}, krec[int64]{"a", 3, 20}, krec[int64]{"b", 4, 40},
		krec[int64]{"a", 5, 30}, krec[int64]{"c", 6, 50}, krec[int64]{"c", 7, -50}, krec[int64]{"c", 8, 100}))
	hs.must(hs.mark(10))
	if got := hs.out.take(); len(got) != 0 {
		t.Fatalf("timers fired before the watermark reached them: %v", got)
	}
	hs.out.marks = 0
	hs.must(hs.mark(30))
	got := hs.out.take()
	want := []fired{{"b", 15, 15, 0, 0, 30}, {"b", 16, 16, 0, 0, 30}, {"a", 20, 20, 0, 0, 30}, {"a", 30, 30, 0, 0, 30}}
	if !slices.Equal(got, want) {
		t.Fatalf("at watermark 30 fired %v; want %v", got, want)
	}
	if hs.out.marks != 1 {
		t.Fatalf("%d markers passed on; want 1", hs.out.marks)
	}
	hs.out.marks = 0
	hs.must(hs.mark(progress.MaxWatermark))
	got = hs.out.take()
	want = []fired{{"b", 40, 40, 0, 0, math.MaxInt64}, {"c", 100, 100, 0, 0, math.MaxInt64}}
	if !slices.Equal(got, want) {
		t.Fatalf("at the end fired %v; want %v (the deleted timer at 50 never)", got, want)
	}
	if n := hs.task.table.(*keyedTable[string, procEntry[int]]).Len(); n != 0 {
		t.Errorf("%d entries left after every timer fired; want 0", n)
	}
}

// Processing-time timers fire at the first epoch end at which the clock
// has reached them, with the watermark as Timestamp; those not due at the
// end are dropped.
func TestKeyedProcessProcessingTimers(t *testing.T) {
	hs := newHarness(t, ProcessFunc[string, int64, int, fired]{
		OnRecord: func(c *ProcessContext[string, int, fired], v int64) {
			c.RegisterProcessingTimer(c.ProcessingTime() + v)
			if v == 7 {
				c.DeleteProcessingTimer(c.ProcessingTime() + v)
			}
		},
		OnTimer: func(c *ProcessContext[string, int, fired], tm Timer) {
			c.Emit(fired{Key: c.Key(), Time: tm.Time, TS: c.Timestamp(), Domain: tm.Domain, ProcTime: c.ProcessingTime()})
		},
	}, hopts{})
	hs.clock = 1000
	hs.must(hs.batch(krec[int64]{"a", 1, 50}, krec[int64]{"b", 2, 100}, krec[int64]{"c", 3, 7}, krec[int64]{"d", 4, 500}))
	hs.clock = 1049
	hs.must(hs.mark(5))
	if got := hs.out.take(); len(got) != 0 {
		t.Fatalf("fired before the clock reached the timers: %v", got)
	}
	hs.clock = 1120
	hs.must(hs.mark(6))
	want := []fired{{"a", 1050, 6, 1, 1120, 0}, {"b", 1100, 6, 1, 1120, 0}}
	if got := hs.out.take(); !slices.Equal(got, want) {
		t.Fatalf("at clock 1120 fired %v; want %v", got, want)
	}
	hs.must(hs.mark(progress.MaxWatermark))
	if got := hs.out.take(); len(got) != 0 {
		t.Fatalf("at the end fired %v; want none (the timer at 1500 is not due and is dropped)", got)
	}
}

// A function that registers a timer without OnTimer fails the job,
// naming the operator.
func TestKeyedProcessTimerWithoutOnTimer(t *testing.T) {
	hs := newHarness(t, ProcessFunc[string, int64, int, int]{
		OnRecord: func(c *ProcessContext[string, int, int], v int64) { c.RegisterEventTimer(v) },
	}, hopts{})
	err := hs.batch(krec[int64]{"a", 1, 5})
	if err == nil || !strings.Contains(err.Error(), "proc: its function registers a timer but has no OnTimer") {
		t.Fatalf("Batch = %v; want the missing OnTimer named", err)
	}
}

// State expires TTL after its last touch in event time (the watermark, or
// in OnTimer the timer's time) or processing time (the clock): dropped at
// epoch ends or found expired when touched, while the key's timers stay.
func TestKeyedProcessTTL(t *testing.T) {
	for _, c := range []struct {
		dom  dataflow.TimeDomain
		want []string
	}{
		{dataflow.EventTime, []string{"a=1", "a=2", "a=3", "a=4", "b=1", "a=1", "timer 450 a=1", "timer 1000 a=0"}},
		{dataflow.ProcessingTime, []string{"a=1", "a=2", "a=3", "a=4", "b=1", "a=1", "timer 450 a=1", "timer 1000 a=1"}},
	} {
		t.Run(c.dom.String(), func(t *testing.T) {
			hs := newHarness(t, ProcessFunc[string, int64, int64, string]{
				OnRecord: func(c *ProcessContext[string, int64, string], v int64) {
					s := c.State()
					*s++
					c.Emit(fmt.Sprintf("%s=%d", c.Key(), *s))
					if v > 0 {
						c.RegisterEventTimer(v)
					}
				},
				OnTimer: func(c *ProcessContext[string, int64, string], tm Timer) {
					c.Emit(fmt.Sprintf("timer %d %s=%d", tm.Time, c.Key(), *c.State()))
				},
			}, hopts{ttl: dataflow.OpOptions([]dataflow.Option{dataflow.StateTTL(100*time.Millisecond, c.dom)}).TTL})
			// The clock follows the records' event times, but for the
			// batch at 248.
			at := func(ts, v int64) krec[int64] { hs.clock = ts; return krec[int64]{"a", ts, v} }
			hs.must(hs.batch(at(10, 0), at(50, 0)))
			hs.must(hs.mark(100))
			hs.must(hs.batch(at(149, 1000)))                                      // alive: 50 + 100 > 149
			hs.must(hs.mark(248))                                                 // expires at 249
			hs.must(hs.batch(krec[int64]{"a", 248, 0}, krec[int64]{"b", 248, 0})) // still alive
			hs.clock = 400
			hs.must(hs.mark(400)) // both expired; a's timer at 1000 stays
			if n := hs.task.table.(*keyedTable[string, procEntry[int64]]).Len(); n != 1 {
				t.Errorf("%d entries after expiry; want 1 (a's timer)", n)
			}
			hs.must(hs.batch(at(401, 450)))
			hs.must(hs.mark(progress.MaxWatermark))
			if got := hs.out.take(); !slices.Equal(got, c.want) {
				t.Fatalf("outputs %v; want %v", got, c.want)
			}
		})
	}
}

// Entries and timers are saved by key group and restored into instances
// that own other ranges of groups: each fires its own keys' timers.
func TestKeyedProcessRestore(t *testing.T) {
	f := ProcessFunc[string, int64, int64, fired]{
		OnRecord: func(c *ProcessContext[string, int64, fired], v int64) {
			*c.State() += v
			c.RegisterEventTimer(c.Timestamp() + 100)
			c.RegisterProcessingTimer(5000)
		},
		OnTimer: func(c *ProcessContext[string, int64, fired], tm Timer) {
			c.Emit(fired{Key: c.Key(), Time: tm.Time, TS: *c.State(), Domain: tm.Domain})
		},
	}
	old := newHarness(t, f, hopts{})
	var recs []krec[int64]
	for i := range 40 {
		recs = append(recs, krec[int64]{fmt.Sprintf("k%d", i%20), int64(i), int64(i)})
	}
	old.must(old.batch(recs...))
	old.must(old.mark(50))
	blobs, err := old.task.SnapshotKeyed("proc", partition.DefaultKeyGroups, nil)
	if err != nil {
		t.Fatal(err)
	}
	old.must(old.mark(progress.MaxWatermark))
	old.clock = 5000
	old.must(old.mark(progress.MaxWatermark))
	want := old.out.take()
	var got []fired
	rt := partition.Contiguous(partition.DefaultKeyGroups, 3)
	for inst := range 3 {
		hs := newHarness(t, f, hopts{})
		var mine [][]byte
		for _, b := range blobs {
			if rt.Owns(inst, partition.KeyGroup(b.KeyGroup)) {
				mine = append(mine, b.Data)
			}
		}
		hs.must(hs.task.RestoreKeyed(mine))
		if hs.task.Watermark() != 50 {
			t.Errorf("instance %d restored watermark %d; want 50", inst, hs.task.Watermark())
		}
		hs.must(hs.mark(progress.MaxWatermark))
		hs.clock = 5000
		hs.must(hs.mark(progress.MaxWatermark))
		got = append(got, hs.out.take()...)
	}
	less := func(a, b fired) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) }
	slices.SortFunc(want, less)
	slices.SortFunc(got, less)
	if len(want) != 60 || !slices.Equal(got, want) {
		t.Fatalf("restored over 3 instances fired %d timers %v; the original %d %v", len(got), got, len(want), want)
	}
}

// Side outputs carry their own types and the records' event times;
// records of a side output no Side took are dropped, and emitting to an
// undeclared one, or with another type, fails naming the operator.
func TestKeyedProcessSides(t *testing.T) {
	small, words := NewSideOutput[int64]("small"), NewSideOutput[string]("words")
	other, wrong := NewSideOutput[int64]("other"), NewSideOutput[string]("small")
	f := ProcessFunc[string, int64, int, int64]{
		OnRecord: func(c *ProcessContext[string, int, int64], v int64) {
			switch {
			case v < 10:
				small.Emit(c, v)
			case v == 99:
				other.Emit(c, v)
			case v == 98:
				wrong.Emit(c, "x")
			default:
				c.Emit(v)
			}
			words.Emit(c, fmt.Sprint(v))
		},
		Sides: []SideTag{small, words},
	}
	side := &gather[int64]{}
	hs := newHarness(t, f, hopts{sides: map[string]any{"small": dataflow.Pusher[int64](side)}})
	var recs []krec[int64]
	for i := range 20 {
		recs = append(recs, krec[int64]{"k", int64(100 + i), int64(i)})
	}
	hs.must(hs.batch(recs...))
	hs.must(hs.mark(progress.MaxWatermark))
	if got, want := side.v, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(got, want) {
		t.Errorf("side output %v; want %v", got, want)
	}
	if got, want := side.ts, []int64{100, 101, 102, 103, 104, 105, 106, 107, 108, 109}; !slices.Equal(got, want) {
		t.Errorf("side output times %v; want %v", got, want)
	}
	if len(hs.out.v) != 10 || side.marks != 1 {
		t.Errorf("%d main outputs and %d side markers; want 10 and 1", len(hs.out.v), side.marks)
	}
	for v, want := range map[int64]string{
		99: `proc: its function emits to side output "other", which it does not declare in Sides`,
		98: `proc: its function emits string to side output "small", which it declares for another type`,
	} {
		hs := newHarness(t, f, hopts{})
		if err := hs.batch(krec[int64]{"k", 1, v}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("emitting %d: %v; want %q", v, err, want)
		}
	}
}
