package weir_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir"
)

// order is the record type of the aggregation examples.
type order struct {
	Shop   string
	Amount int
	At     int64 // event time, ms
}

var orders = []order{
	{"north", 10, 100}, {"south", 5, 200}, {"north", 30, 900},
	{"south", 7, 1_200}, {"north", 2, 1_500}, {"south", 9, 1_800},
}

// shopWindows is the orders keyed by shop in one-second windows.
func shopWindows(job *weir.Job) weir.WindowedStream[string, order] {
	timed := weir.EventTime(weir.Source(job, "orders", weir.SliceSource[order]{Records: orders}),
		func(o order) int64 { return o.At }, time.Second)
	return weir.Window(weir.KeyBy(timed, func(o order) string { return o.Shop }), weir.Tumbling(time.Second))
}

func ExampleReduce() {
	job := weir.NewJob("largest", weir.Workers(2))
	largest := weir.Reduce(shopWindows(job), func(a, b order) order {
		if b.Amount > a.Amount {
			return b
		}
		return a
	})
	out := &bag[weir.WindowResult[string, order]]{}
	weir.Sink(largest, out)
	runJob(job)
	printSorted(out.out)
	// Output:
	// {Key:north Start:0 End:1000 Value:{Shop:north Amount:30 At:900}}
	// {Key:north Start:1000 End:2000 Value:{Shop:north Amount:2 At:1500}}
	// {Key:south Start:0 End:1000 Value:{Shop:south Amount:5 At:200}}
	// {Key:south Start:1000 End:2000 Value:{Shop:south Amount:9 At:1800}}
}

func ExampleAggregate() {
	// The mean order amount: the accumulator (sum and count) has another
	// type than the records and the result.
	type mean struct{ sum, n int }
	job := weir.NewJob("mean", weir.Workers(2))
	means := weir.Aggregate(shopWindows(job), weir.Aggregator[order, mean, float64]{
		Add:    func(m mean, o order) mean { return mean{m.sum + o.Amount, m.n + 1} },
		Merge:  func(a, b mean) mean { return mean{a.sum + b.sum, a.n + b.n} },
		Result: func(m mean) float64 { return float64(m.sum) / float64(m.n) },
	})
	out := &bag[weir.WindowResult[string, float64]]{}
	weir.Sink(means, out)
	runJob(job)
	printSorted(out.out)
	// Output:
	// {Key:north Start:0 End:1000 Value:20}
	// {Key:north Start:1000 End:2000 Value:2}
	// {Key:south Start:0 End:1000 Value:5}
	// {Key:south Start:1000 End:2000 Value:8}
}

func ExampleCount() {
	job := weir.NewJob("count", weir.Workers(2))
	out := &bag[weir.WindowResult[string, int64]]{}
	weir.Sink(weir.Count(shopWindows(job)), out)
	runJob(job)
	printSorted(out.out)
	// Output:
	// {Key:north Start:0 End:1000 Value:2}
	// {Key:north Start:1000 End:2000 Value:1}
	// {Key:south Start:0 End:1000 Value:1}
	// {Key:south Start:1000 End:2000 Value:2}
}

func ExampleJoin() {
	// Pair each click with the orders of the same user in the same
	// 10-second window.
	type buy struct {
		User string
		What string
		At   int64
	}
	job := weir.NewJob("join", weir.Workers(2))
	buys := weir.EventTime(weir.Source(job, "buys", weir.SliceSource[buy]{Records: []buy{
		{"ann", "tea", 5_000}, {"bob", "pen", 11_000}, {"ann", "cup", 8_000},
	}}), func(b buy) int64 { return b.At }, time.Minute)
	joined := weir.Join(
		weir.KeyBy(timedClicks(job), clickUser),
		weir.KeyBy(buys, func(b buy) string { return b.User }),
		weir.Tumbling(10*time.Second),
		func(user string, c click, b buy) string { return user + " " + c.Page + " -> " + b.What },
	)
	out := &bag[string]{}
	weir.Sink(joined, out)
	runJob(job)
	printSorted(out.out)
	// Output:
	// ann cart -> cup
	// ann cart -> tea
	// ann home -> cup
	// ann home -> tea
}

func ExampleUnion() {
	job := weir.NewJob("union", weir.Workers(2))
	a := weir.Source(job, "a", weir.SliceSource[string]{Records: []string{"a1", "a2"}})
	b := weir.Source(job, "b", weir.SliceSource[string]{Records: []string{"b1"}}, weir.Parallelism(1))
	c := weir.Source(job, "c", weir.SliceSource[string]{Records: []string{"c1", "c2", "c3"}}, weir.Parallelism(3))
	out := &bag[string]{}
	weir.Sink(weir.Union(a, b, c), out)
	runJob(job)
	printSorted(out.out)
	// Output:
	// a1
	// a2
	// b1
	// c1
	// c2
	// c3
}

func ExampleSink() {
	job := weir.NewJob("sink", weir.Workers(2))
	nums := weir.Source(job, "nums", weir.SliceSource[int]{Records: []int{3, 1, 2}})
	// With Parallelism the instances share the Output, which must then be
	// safe for concurrent use, as bag is.
	out := &bag[int]{}
	weir.Sink(nums, out, weir.Parallelism(2))
	runJob(job)
	printSorted(out.out)
	fmt.Println("closed", out.closed, "times")
	// Output:
	// 1
	// 2
	// 3
	// closed 2 times
}

func ExampleSinkFunc() {
	job := weir.NewJob("sinkfunc", weir.Workers(1))
	nums := weir.Source(job, "nums", weir.SliceSource[int]{Records: []int{1, 2, 3}})
	sum := 0
	weir.Sink(nums, weir.SinkFunc[int](func(b []int) error {
		for _, n := range b {
			sum += n
		}
		return nil
	}))
	runJob(job)
	fmt.Println(sum)
	// Output: 6
}

func ExampleEventTime() {
	// Records up to 5 seconds out of order are on time; the watermark is
	// the largest time seen minus 5 s.
	job := weir.NewJob("eventtime", weir.Workers(2))
	timed := weir.EventTime(weir.Source(job, "clicks", weir.SliceSource[click]{Records: clicks}), clickTime, 5*time.Second)
	ws := weir.Window(weir.KeyBy(timed, func(click) string { return "all" }), weir.Tumbling(20*time.Second))
	out := &bag[weir.WindowResult[string, int64]]{}
	weir.Sink(weir.Count(ws), out)
	runJob(job)
	printSorted(out.out)
	fmt.Println("late:", job.Metrics().Late)
	// Output:
	// {Key:all Start:0 End:20000 Value:5}
	// {Key:all Start:20000 End:40000 Value:1}
	// late: 0
}

func ExampleWindowedStream_Late() {
	// One worker and an epoch per record make the watermark advance after
	// every record: the click at 4 s arrives after the click at 20 s has
	// moved the watermark past its window.
	job := weir.NewJob("late", weir.Workers(1), weir.EpochRecords(1))
	src := weir.Source(job, "clicks", weir.SliceSource[click]{BatchSize: 1, Records: []click{
		{"ann", "home", 1_000}, {"ann", "home", 20_000}, {"ann", "cart", 4_000}, {"ann", "pay", 21_000},
	}})
	ws := weir.Window(weir.KeyBy(weir.EventTime(src, clickTime, 0), clickUser), weir.Tumbling(10*time.Second))
	counts, late := &bag[weir.WindowResult[string, int64]]{}, &bag[click]{}
	weir.Sink(weir.Count(ws), counts)
	weir.Sink(ws.Late(), late)
	runJob(job)
	printSorted(counts.out)
	fmt.Printf("late: %+v, counted %d\n", late.out, job.Metrics().Late)
	// Output:
	// {Key:ann Start:0 End:10000 Value:1}
	// {Key:ann Start:20000 End:30000 Value:2}
	// late: [{User:ann Page:cart At:4000}], counted 1
}

func ExampleAllowedLateness() {
	// A record within the allowed lateness updates its window, which fires
	// again.
	job := weir.NewJob("lateness", weir.Workers(1), weir.EpochRecords(1))
	src := weir.Source(job, "clicks", weir.SliceSource[click]{BatchSize: 1, Records: []click{
		{"ann", "home", 1_000}, {"ann", "home", 12_000}, {"ann", "cart", 4_000},
	}})
	ws := weir.Window(weir.KeyBy(weir.EventTime(src, clickTime, 0), clickUser), weir.Tumbling(10*time.Second),
		weir.AllowedLateness(5*time.Second))
	out := &bag[weir.WindowResult[string, int64]]{}
	weir.Sink(weir.Count(ws), out)
	runJob(job)
	for _, r := range out.out { // one worker: in order of firing
		fmt.Println(r.Start, r.End, r.Value)
	}
	// Output:
	// 0 10000 1
	// 0 10000 2
	// 10000 20000 1
}

func ExampleJob_Explain() {
	job := weir.NewJob("explain", weir.Workers(2), weir.EpochRecords(1000))
	src := weir.Source(job, "clicks", weir.SliceSource[click]{Records: clicks})
	views := weir.Filter(src, func(c click) bool { return c.Page == "home" }, weir.Name("views"), weir.Stateless())
	timed := weir.EventTime(views, clickTime, time.Second, weir.Name("timed"))
	counts := weir.Count(weir.Window(weir.KeyBy(timed, clickUser, weir.Name("user")), weir.Tumbling(10*time.Second),
		weir.WindowOptions(weir.Name("per-user"))))
	weir.Sink(counts, &bag[weir.WindowResult[string, int64]]{}, weir.Name("out"))
	plan, err := job.Explain()
	if err != nil {
		fmt.Println(err)
	}
	fmt.Print(plan)
	// Output:
	// job explain: 2 workers, 128 key groups, epochs every 1000 records, unordered
	// graph
	//   clicks
	//   views <- clicks
	//   timed <- views
	//   per-user <- timed by key
	//   out <- per-user
	// region 0  x2  stateless
	//   task 0
	//     ■  clicks [source]
	//     ├─ views [filter; stateless 1:0..1]
	//     ├─ timed [eventtime; stateless 1:1]
	// region 1  x2  keyed by user(string)
	//   task 1
	//     ■  per-user [window(tumbling 10s) roundrobin; keyed by user(string) 1:n]  <- keygroup shuffle from timed
	// region 2  x1  serial
	//   task 2
	//     ■  out [sink]  <- gather from per-user
}

func ExampleJob_Metrics() {
	job := weir.NewJob("metrics", weir.Workers(2), weir.EpochRecords(2))
	nums := weir.Source(job, "nums", weir.SliceSource[int]{Records: make([]int, 10)})
	weir.Sink(nums, weir.SinkFunc[int](func([]int) error { return nil }))
	runJob(job)
	fmt.Println("records:", job.Metrics().Records)
	// Output: records: 10
}

func ExampleCollect() {
	job := weir.NewJob("collect", weir.Workers(2))
	out := &weir.Collect[int]{}
	weir.Sink(weir.Source(job, "numbers", weir.SliceSource[int]{Records: []int{3, 1, 2}}), out)
	if err := job.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	got := out.Records()
	slices.Sort(got)
	fmt.Println(got)
	// Output: [1 2 3]
}
