package weir_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir"
)

// visit is the record type of the process examples.
type visit struct {
	User string
	At   int64 // event time, ms
}

// A key's count of visits, emitted 10 s of event time after its first
// visit by a timer, after which the key starts again.
func ExampleKeyedProcess() {
	visits := []visit{{"ann", 1_000}, {"bob", 2_000}, {"ann", 5_000}, {"ann", 9_000},
		{"cid", 13_500}, {"bob", 15_000}, {"ann", 40_000}}
	job := weir.NewJob("visits", weir.Workers(1), weir.EpochRecords(1))
	src := weir.Source(job, "visits", weir.SliceSource[visit]{Records: visits})
	timed := weir.EventTime(src, func(v visit) int64 { return v.At }, time.Second)

	type period struct {
		Start int64
		N     int
	}
	type ctx = weir.ProcessContext[string, period, string]
	counts := weir.KeyedProcess(weir.KeyBy(timed, func(v visit) string { return v.User }), weir.ProcessFunc[string, visit, period, string]{
		OnRecord: func(c *ctx, v visit) {
			p := c.State()
			if p.N == 0 {
				p.Start = c.Timestamp()
				c.RegisterEventTimer(p.Start + 10_000)
			}
			p.N++
		},
		OnTimer: func(c *ctx, t weir.Timer) {
			c.Emit(fmt.Sprintf("%s: %d visits from %d (emitted at %d)", c.Key(), c.State().N, c.State().Start, c.Timestamp()))
			c.ClearState()
		},
	})
	out := &weir.Collect[string]{}
	weir.Sink(counts, out)
	if err := job.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	lines := out.Records()
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// ann: 1 visits from 40000 (emitted at 50000)
	// ann: 3 visits from 1000 (emitted at 11000)
	// bob: 1 visits from 15000 (emitted at 25000)
	// bob: 1 visits from 2000 (emitted at 12000)
	// cid: 1 visits from 13500 (emitted at 23500)
}

// Orders and payments keyed by order: an order is paid if its payment's
// event time is within 5 s of it, whichever input brings its record
// first; a timer gives the verdict.
func ExampleCoProcess() {
	type event struct {
		Order string
		At    int64
	}
	orders := []event{{"o1", 1_000}, {"o2", 2_000}, {"o3", 3_000}}
	payments := []event{{"o1", 1_500}, {"o2", 6_500}, {"o3", 9_000}}
	job := weir.NewJob("payments", weir.Workers(2))
	at := func(e event) int64 { return e.At }
	byOrder := func(e event) string { return e.Order }
	os := weir.KeyBy(weir.EventTime(weir.Source(job, "orders", weir.SliceSource[event]{Records: orders}), at, time.Second), byOrder)
	ps := weir.KeyBy(weir.EventTime(weir.Source(job, "payments", weir.SliceSource[event]{Records: payments}), at, time.Second), byOrder)

	type seen struct{ OrderAt, PaidAt int64 }
	type ctx = weir.ProcessContext[string, seen, string]
	verdicts := weir.CoProcess(os, ps, weir.CoProcessFunc[string, event, event, seen, string]{
		OnLeft: func(c *ctx, o event) {
			c.State().OrderAt = o.At
			c.RegisterEventTimer(o.At + 5_000)
		},
		OnRight: func(c *ctx, p event) { c.State().PaidAt = p.At },
		OnTimer: func(c *ctx, t weir.Timer) {
			s := c.State()
			if s.PaidAt != 0 && s.PaidAt <= s.OrderAt+5_000 {
				c.Emit(c.Key() + ": paid")
			} else {
				c.Emit(c.Key() + ": not paid within 5 s")
			}
			c.ClearState()
		},
	}, weir.StateTTL(time.Minute, weir.EventTimeDomain)) // a payment without an order is forgotten
	out := &weir.Collect[string]{}
	weir.Sink(verdicts, out)
	if err := job.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	lines := out.Records()
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// o1: paid
	// o2: paid
	// o3: not paid within 5 s
}

// Running totals per user on the main output, and the large purchases on
// a side output of their own type.
func ExampleSide() {
	type buy struct {
		User   string
		Amount int
	}
	buys := []buy{{"ann", 20}, {"bob", 500}, {"ann", 700}, {"ann", 5}, {"bob", 10}}
	job := weir.NewJob("totals", weir.Workers(1))
	src := weir.Source(job, "buys", weir.SliceSource[buy]{Records: buys})

	large := weir.NewSideOutput[buy]("large")
	totals := weir.KeyedProcess(weir.KeyBy(src, func(b buy) string { return b.User }), weir.ProcessFunc[string, buy, int, string]{
		OnRecord: func(c *weir.ProcessContext[string, int, string], b buy) {
			total := c.State()
			*total += b.Amount
			c.Emit(fmt.Sprintf("%s: %d", c.Key(), *total))
			if b.Amount >= 100 {
				large.Emit(c, b)
			}
		},
		Sides: []weir.SideTag{large},
	})
	out, big := &weir.Collect[string]{}, &weir.Collect[buy]{}
	weir.Sink(totals, out)
	weir.Sink(weir.Side(totals, large), big)
	if err := job.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	lines := out.Records()
	slices.Sort(lines)
	fmt.Println(lines)
	larges := big.Records()
	slices.SortFunc(larges, func(a, b buy) int { return a.Amount - b.Amount })
	fmt.Println(larges)
	// Output:
	// [ann: 20 ann: 720 ann: 725 bob: 500 bob: 510]
	// [{bob 500} {ann 700}]
}

// A count of visits per user whose state expires 10 s of event time after
// its last visit: a user who comes back later counts from 1 again.
func ExampleStateTTL() {
	visits := []visit{{"ann", 1_000}, {"ann", 4_000}, {"bob", 5_000}, {"cid", 20_000},
		{"ann", 30_000}, {"bob", 31_000}, {"ann", 33_000}}
	job := weir.NewJob("returns", weir.Workers(1), weir.EpochRecords(1))
	src := weir.Source(job, "visits", weir.SliceSource[visit]{Records: visits})
	timed := weir.EventTime(src, func(v visit) int64 { return v.At }, time.Second)
	counts := weir.Process(weir.KeyBy(timed, func(v visit) string { return v.User }), func(user string, n *int, v visit, out []string) []string {
		*n++
		return append(out, fmt.Sprintf("%s at %d: visit %d", user, v.At, *n))
	}, weir.StateTTL(10*time.Second, weir.EventTimeDomain))
	out := &weir.Collect[string]{}
	weir.Sink(counts, out)
	if err := job.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	for _, l := range out.Records() { // one worker: in input order
		fmt.Println(l)
	}
	// Output:
	// ann at 1000: visit 1
	// ann at 4000: visit 2
	// bob at 5000: visit 1
	// cid at 20000: visit 1
	// ann at 30000: visit 1
	// bob at 31000: visit 1
	// ann at 33000: visit 2
}
