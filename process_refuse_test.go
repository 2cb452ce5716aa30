package weir_test

import (
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// Settings that cannot work are refused when the job runs, with an error
// that names the operator and what is wrong; none panics.
func TestKeyedProcessRefusals(t *testing.T) {
	type ctx = weir.ProcessContext[string, int, int]
	tag := weir.NewSideOutput[int]("odd")
	counter := weir.ProcessFunc[string, rec, int, int]{
		OnRecord: func(c *ctx, r rec) { *c.State()++ },
		Sides:    []weir.SideTag{tag},
	}
	recs := []rec{{ID: 1, Key: "a", TS: 1}, {ID: 2, Key: "b", TS: 2}}
	for _, c := range []struct {
		name  string
		build func(j *weir.Job, s weir.Stream[rec])
		want  string
	}{
		{"ttl on map", func(j *weir.Job, s weir.Stream[rec]) {
			weir.Sink(weir.Map(s, func(r rec) rec { return r }, weir.Stateless(), weir.Name("double"), weir.StateTTL(time.Second, weir.EventTimeDomain)), &weir.Collect[rec]{})
		}, "weir: double: StateTTL does not apply to this operator"},
		{"ttl on a window", func(j *weir.Job, s weir.Stream[rec]) {
			w := weir.Window(weir.KeyBy(s, recKey), weir.Tumbling(time.Second), weir.WindowOptions(weir.Name("win"), weir.StateTTL(time.Second, weir.ProcessingTimeDomain)))
			weir.Sink(weir.Count(w), &weir.Collect[weir.WindowResult[string, int64]]{})
		}, "weir: win: StateTTL does not apply to this operator"},
		{"ttl on a sink", func(j *weir.Job, s weir.Stream[rec]) {
			weir.Sink(s, &weir.Collect[rec]{}, weir.Name("out"), weir.StateTTL(time.Second, weir.EventTimeDomain))
		}, "weir: out: StateTTL does not apply to this operator"},
		{"ttl too short", func(j *weir.Job, s weir.Stream[rec]) {
			weir.Sink(weir.KeyedProcess(weir.KeyBy(s, recKey), counter, weir.Name("count"), weir.StateTTL(time.Microsecond, weir.EventTimeDomain)), &weir.Collect[int]{})
		}, "weir: count: StateTTL(1µs): the time-to-live must be at least 1ms"},
		{"event-time ttl without event time", func(j *weir.Job, s weir.Stream[rec]) {
			raw := weir.Source(j, "raw", weir.SliceSource[rec]{Records: recs})
			weir.Sink(weir.KeyedProcess(weir.KeyBy(raw, recKey), counter, weir.Name("count"), weir.StateTTL(time.Second, weir.EventTimeDomain)), &weir.Collect[int]{})
		}, "weir: count: StateTTL in event time needs event time on the input"},
		{"side of a map", func(j *weir.Job, s weir.Stream[rec]) {
			weir.Sink(weir.Side(weir.Map(s, func(r rec) int { return r.ID }, weir.Stateless()), tag), &weir.Collect[int]{})
		}, `weir: Side("odd"): the stream is not the output of a KeyedProcess or CoProcess`},
		{"side not declared", func(j *weir.Job, s weir.Stream[rec]) {
			out := weir.KeyedProcess(weir.KeyBy(s, recKey), counter, weir.Name("count"))
			weir.Sink(weir.Side(out, weir.NewSideOutput[int]("even")), &weir.Collect[int]{})
		}, `weir: Side("even"): count declares no side output "even" in its function's Sides (it declares "odd")`},
		{"side of another type", func(j *weir.Job, s weir.Stream[rec]) {
			out := weir.KeyedProcess(weir.KeyBy(s, recKey), counter, weir.Name("count"))
			weir.Sink(weir.Side(out, weir.NewSideOutput[string]("odd")), &weir.Collect[string]{})
		}, `weir: Side("odd"): count declares side output "odd" of int, not string`},
		{"side declared twice", func(j *weir.Job, s weir.Stream[rec]) {
			f := counter
			f.Sides = []weir.SideTag{tag, weir.NewSideOutput[string]("odd")}
			weir.Sink(weir.KeyedProcess(weir.KeyBy(s, recKey), f, weir.Name("count")), &weir.Collect[int]{})
		}, `weir: count: side output "odd" is declared twice in Sides`},
		{"no OnRecord", func(j *weir.Job, s weir.Stream[rec]) {
			weir.Sink(weir.KeyedProcess(weir.KeyBy(s, recKey), weir.ProcessFunc[string, rec, int, int]{}, weir.Name("count")), &weir.Collect[int]{})
		}, "weir: count: its ProcessFunc has no OnRecord"},
		{"timer without OnTimer", func(j *weir.Job, s weir.Stream[rec]) {
			f := counter
			f.OnRecord = func(c *ctx, r rec) { c.RegisterEventTimer(r.TS + 10) }
			weir.Sink(weir.KeyedProcess(weir.KeyBy(s, recKey), f, weir.Name("count")), &weir.Collect[int]{})
		}, "weir: count: its function registers a timer but has no OnTimer"},
		{"undeclared side output", func(j *weir.Job, s weir.Stream[rec]) {
			f := counter
			f.OnRecord = func(c *ctx, r rec) { weir.NewSideOutput[int]("even").Emit(c, r.ID) }
			weir.Sink(weir.KeyedProcess(weir.KeyBy(s, recKey), f, weir.Name("count")), &weir.Collect[int]{})
		}, `weir: count: its function emits to side output "even", which it does not declare in Sides`},
		{"co-process of timed and untimed", func(j *weir.Job, s weir.Stream[rec]) {
			raw := weir.Source(j, "raw", weir.SliceSource[rec]{Records: recs})
			weir.Sink(weir.CoProcess(weir.KeyBy(s, recKey), weir.KeyBy(raw, recKey), weir.CoProcessFunc[string, rec, rec, int, int]{
				OnLeft: func(*ctx, rec) {}, OnRight: func(*ctx, rec) {},
			}, weir.Name("both")), &weir.Collect[int]{})
		}, "weir: both: one input has event time and the other has not"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := weir.NewJob("refuse", weir.Workers(2))
			c.build(j, weir.EventTime(weir.Source(j, "src", weir.SliceSource[rec]{Records: recs}), recTS, 0))
			err := runErr(t, j)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Run = %v; want an error saying %q", err, c.want)
			}
		})
	}
}
