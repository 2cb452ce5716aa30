package weir_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weirstream/weir"
)

// printSorted prints one record a line, in sorted order: the instances of a
// job run concurrently, so a sink sees records in no fixed order.
func printSorted[T any](v []T) {
	lines := make([]string, len(v))
	for i, x := range v {
		lines[i] = fmt.Sprintf("%+v", x)
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
}

// click is the record type of the event-time examples.
type click struct {
	User string
	Page string
	At   int64 // event time, ms
}

var clicks = []click{
	{"ann", "home", 1_000}, {"bob", "home", 1_500}, {"ann", "cart", 4_000},
	{"ann", "home", 12_000}, {"bob", "pay", 9_500}, {"cid", "home", 21_000},
}

func clickTime(c click) int64  { return c.At }
func clickUser(c click) string { return c.User }
func runJob(j *weir.Job) {
	if err := j.Run(context.Background()); err != nil {
		fmt.Println("error:", err)
	}
}

// timedClicks is the clicks as a stream with event time.
func timedClicks(j *weir.Job) weir.Stream[click] {
	return weir.EventTime(weir.Source(j, "clicks", weir.SliceSource[click]{Records: clicks}), clickTime, time.Minute)
}

func ExampleNewJob() {
	job := weir.NewJob("squares", weir.Workers(2))
	nums := weir.Source(job, "nums", weir.SliceSource[int]{Records: []int{1, 2, 3, 4}})
	out := &bag[int]{}
	weir.Sink(weir.Map(nums, func(n int) int { return n * n }, weir.Stateless()), out)
	if err := job.Run(context.Background()); err != nil {
		fmt.Println(err)
	}
	printSorted(out.out)
	// Output:
	// 1
	// 16
	// 4
	// 9
}

func ExampleSource() {
	job := weir.NewJob("source", weir.Workers(2))
	words := weir.Source(job, "words", weir.SliceSource[string]{Records: []string{"a", "b", "c"}}, weir.Parallelism(3))
	out := &bag[string]{}
	weir.Sink(words, out)
	runJob(job)
	printSorted(out.out)
	// Output:
	// a
	// b
	// c
}

func ExampleSliceSource() {
	src := weir.SliceSource[int]{Records: []int{1, 2, 3, 4, 5}, BatchSize: 2}
	// Instance i of n reads the i-th contiguous share, in batches.
	for i := range 2 {
		r, _ := src.Open(weir.SourceContext{Instance: i, Parallelism: 2})
		for {
			b, err := r.Read()
			if err != nil {
				break
			}
			fmt.Println(i, b)
		}
	}
	// Output:
	// 0 [1 2]
	// 1 [3 4]
	// 1 [5]
}

func ExampleMap() {
	job := weir.NewJob("map", weir.Workers(2))
	words := weir.Source(job, "words", weir.SliceSource[string]{Records: []string{"weir", "go", "stream"}})
	out := &bag[int]{}
	weir.Sink(weir.Map(words, func(w string) int { return len(w) }, weir.Stateless()), out)
	runJob(job)
	printSorted(out.out)
	// Output:
	// 2
	// 4
	// 6
}

func ExampleMapRef() {
	job := weir.NewJob("mapref", weir.Workers(2))
	src := weir.Source(job, "clicks", weir.SliceSource[click]{Records: clicks})
	out := &bag[string]{}
	weir.Sink(weir.MapRef(src, func(c *click) string { return c.User + "@" + c.Page }, weir.Stateless()), out)
	runJob(job)
	printSorted(out.out)
	// Output:
	// ann@cart
	// ann@home
	// ann@home
	// bob@home
	// bob@pay
	// cid@home
}

func ExampleFilter() {
	job := weir.NewJob("filter", weir.Workers(2))
	nums := weir.Source(job, "nums", weir.SliceSource[int]{Records: []int{1, 2, 3, 4, 5, 6}})
	out := &bag[int]{}
	weir.Sink(weir.Filter(nums, func(n int) bool { return n%2 == 0 }, weir.Stateless()), out)
	runJob(job)
	printSorted(out.out)
	// Output:
	// 2
	// 4
	// 6
}

func ExampleFilterRef() {
	job := weir.NewJob("filterref", weir.Workers(2))
	src := weir.Source(job, "clicks", weir.SliceSource[click]{Records: clicks})
	out := &bag[click]{}
	weir.Sink(weir.FilterRef(src, func(c *click) bool { return c.Page != "home" }, weir.Stateless()), out)
	runJob(job)
	printSorted(out.out)
	// Output:
	// {User:ann Page:cart At:4000}
	// {User:bob Page:pay At:9500}
}

func ExampleFlatMap() {
	job := weir.NewJob("flatmap", weir.Workers(2))
	lines := weir.Source(job, "lines", weir.SliceSource[string]{Records: []string{"to be", "or not"}})
	words := weir.FlatMap(lines, func(l string, out []string) []string { return append(out, strings.Fields(l)...) }, weir.Stateless())
	out := &bag[string]{}
	weir.Sink(words, out)
	runJob(job)
	printSorted(out.out)
	// Output:
	// be
	// not
	// or
	// to
}

func ExampleKeyBy() {
	job := weir.NewJob("wordcount", weir.Workers(2))
	words := weir.Source(job, "words", weir.SliceSource[string]{Records: strings.Fields("a rose is a rose is a rose")})
	byWord := weir.KeyBy(words, func(w string) string { return w })
	out := &bag[weir.WindowResult[string, int64]]{}
	weir.Sink(weir.Count(weir.Window(byWord, weir.Global())), out)
	runJob(job)
	for _, r := range sortedBy(out.out, func(r weir.WindowResult[string, int64]) string { return r.Key }) {
		fmt.Println(r.Key, r.Value)
	}
	// Output:
	// a 3
	// is 2
	// rose 3
}

// sortedBy sorts window results for printing.
func sortedBy[T any](v []T, key func(T) string) []T {
	slices.SortFunc(v, func(a, b T) int { return strings.Compare(key(a), key(b)) })
	return v
}

// countClicks counts the clicks of each user in windows of w and prints
// them.
func countClicks(w weir.WindowSpec) {
	job := weir.NewJob("windows", weir.Workers(2))
	ws := weir.Window(weir.KeyBy(timedClicks(job), clickUser), w)
	out := &bag[weir.WindowResult[string, int64]]{}
	weir.Sink(weir.Count(ws), out)
	runJob(job)
	for _, r := range sortedBy(out.out, func(r weir.WindowResult[string, int64]) string {
		return fmt.Sprintf("%s %08d", r.Key, r.Start)
	}) {
		fmt.Printf("%s [%d,%d) %d\n", r.Key, r.Start, r.End, r.Value)
	}
}

func ExampleWindow() {
	// Clicks per user per 10 seconds of event time.
	countClicks(weir.Tumbling(10 * time.Second))
	// Output:
	// ann [0,10000) 2
	// ann [10000,20000) 1
	// bob [0,10000) 2
	// cid [20000,30000) 1
}

func ExampleTumbling() {
	countClicks(weir.Tumbling(5 * time.Second))
	// Output:
	// ann [0,5000) 2
	// ann [10000,15000) 1
	// bob [0,5000) 1
	// bob [5000,10000) 1
	// cid [20000,25000) 1
}

func ExampleSliding() {
	countClicks(weir.Sliding(10*time.Second, 5*time.Second))
	// Output:
	// ann [-5000,5000) 2
	// ann [0,10000) 2
	// ann [5000,15000) 1
	// ann [10000,20000) 1
	// bob [-5000,5000) 1
	// bob [0,10000) 2
	// bob [5000,15000) 1
	// cid [15000,25000) 1
	// cid [20000,30000) 1
}

func ExampleSession() {
	// A session ends after 5 seconds without a click of the user.
	countClicks(weir.Session(5 * time.Second))
	// Output:
	// ann [1000,9000) 2
	// ann [12000,17000) 1
	// bob [1500,6500) 1
	// bob [9500,14500) 1
	// cid [21000,26000) 1
}

func ExampleGlobal() {
	countClicks(weir.Global())
	// Output:
	// ann [-9223372036854775808,9223372036854775807) 3
	// bob [-9223372036854775808,9223372036854775807) 2
	// cid [-9223372036854775808,9223372036854775807) 1
}
