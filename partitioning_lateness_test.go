package weir_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// Under record-count epochs, which records each aligned epoch holds and
// every watermark are deterministic, so the late records and the results
// must be the same under every strategy: a micro-batch deposit consumed
// by the wrong round would show as a different late set.
func TestStrategiesSameLateRecords(t *testing.T) {
	in := genRecs(77, 4000, 17, 120) // delays up to 120 ms, slack 50 ms: real lateness
	type shape struct {
		name  string
		build func(j *weir.Job, src func(name string, recs []rec, opts ...weir.Option) weir.Stream[rec]) (weir.Stream[wres], weir.Stream[rec])
	}
	tum := func(k weir.KeyedStream[string, rec], opts ...weir.WindowOption) (weir.Stream[wres], weir.Stream[rec]) {
		ws := weir.Window(k, weir.Tumbling(40*time.Millisecond), opts...)
		return weir.Count(ws), ws.Late()
	}
	shapes := []shape{
		{"plain", func(j *weir.Job, src func(string, []rec, ...weir.Option) weir.Stream[rec]) (weir.Stream[wres], weir.Stream[rec]) {
			return tum(weir.KeyBy(weir.EventTime(src("s", in), recTS, outOfOrder), recKey))
		}},
		{"uneven-union", func(j *weir.Job, src func(string, []rec, ...weir.Option) weir.Stream[rec]) (weir.Stream[wres], weir.Stream[rec]) {
			a := weir.EventTime(src("a", in[:700], weir.Parallelism(2)), recTS, outOfOrder, weir.Parallelism(2))
			b := weir.EventTime(src("b", in[700:], weir.Parallelism(3)), recTS, outOfOrder, weir.Parallelism(3))
			return tum(weir.KeyBy(weir.Union(a, b), recKey))
		}},
		{"par3-to-win1", func(j *weir.Job, src func(string, []rec, ...weir.Option) weir.Stream[rec]) (weir.Stream[wres], weir.Stream[rec]) {
			s := weir.EventTime(src("s", in, weir.Parallelism(3)), recTS, outOfOrder, weir.Parallelism(3))
			return tum(weir.KeyBy(s, recKey), weir.WindowOptions(weir.Parallelism(1)))
		}},
		{"par2-to-win5-sliding", func(j *weir.Job, src func(string, []rec, ...weir.Option) weir.Stream[rec]) (weir.Stream[wres], weir.Stream[rec]) {
			s := weir.EventTime(src("s", in, weir.Parallelism(2)), recTS, outOfOrder, weir.Parallelism(2))
			ws := weir.Window(weir.KeyBy(s, recKey), weir.Sliding(60*time.Millisecond, 20*time.Millisecond),
				weir.AllowedLateness(10*time.Millisecond), weir.WindowOptions(weir.Parallelism(5)))
			return weir.Count(ws), ws.Late()
		}},
		{"serial-two-aggregations", func(j *weir.Job, src func(string, []rec, ...weir.Option) weir.Stream[rec]) (weir.Stream[wres], weir.Stream[rec]) {
			s := weir.EventTime(src("s", in, weir.Parallelism(3)), recTS, outOfOrder, weir.Parallelism(3))
			ws := weir.Window(weir.KeyBy(s, recKey), weir.Tumbling(20*time.Millisecond))
			c := weir.Map(weir.Count(ws), func(r wres) rec { return rec{ID: int(r.Start), Key: r.Key[:2], TS: r.End - 1, Val: r.Value} }, weir.Stateless())
			ws2 := weir.Window(weir.KeyBy(c, recKey), weir.Tumbling(80*time.Millisecond), weir.WindowOptions(weir.Parallelism(3)))
			out := weir.Aggregate(ws2, weir.Aggregator[rec, int64, int64]{
				Add:   func(a int64, r rec) int64 { return a + r.Val },
				Merge: func(a, b int64) int64 { return a + b },
			})
			return out, ws.Late()
		}},
	}
	type outcome struct {
		res  []wres
		late []int
	}
	for _, sh := range shapes {
		for _, w := range []int{1, 2, 4, 8} {
			t.Run(fmt.Sprintf("%s/w%d", sh.name, w), func(t *testing.T) {
				t.Parallel()
				var ref *outcome
				for _, strategy := range []string{"hash", "roundrobin", "pkg", "prompt"} {
					j := weir.NewJob("diff", weir.Workers(w), weir.Partitioning(strategy), weir.EpochRecords(29),
						weir.BatchSize(7), weir.QueueDepth(2))
					src := func(name string, recs []rec, opts ...weir.Option) weir.Stream[rec] {
						return weir.Source(j, name, weir.SliceSource[rec]{Records: recs, BatchSize: 11}, opts...)
					}
					res, late := sh.build(j, src)
					rb, lb := &bag[wres]{}, &bag[rec]{}
					weir.Sink(res, rb)
					weir.Sink(late, lb)
					if err := runWithin(t, j, time.Minute); err != nil {
						t.Fatalf("%s: %v", strategy, err)
					}
					o := &outcome{res: rb.out}
					for _, r := range lb.out {
						o.late = append(o.late, r.ID)
					}
					slices.Sort(o.late)
					if ref == nil {
						ref = o
						if len(o.late) == 0 {
							t.Fatal("no late records: the input is too weak")
						}
						continue
					}
					if !slices.Equal(o.late, ref.late) {
						t.Errorf("%s: %d late records, hash has %d (differ)", strategy, len(o.late), len(ref.late))
					}
					checkBag(t, o.res, ref.res)
				}
			})
		}
	}
}
