package weir_test

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir"
)

// Process keeps state per key for you: here a running total per user,
// computed in parallel (each instance owns some users) and, with Ordered,
// emitted in the input's order.
func ExampleProcess() {
	type payment struct {
		User   string
		Amount int
	}
	job := weir.NewJob("totals", weir.Workers(3), weir.Ordered())
	pays := weir.Source(job, "payments", weir.SliceSource[payment]{Records: []payment{
		{"ann", 5}, {"bob", 2}, {"ann", 1}, {"cat", 7}, {"bob", 4},
	}, BatchSize: 2})
	byUser := weir.KeyBy(pays, func(p payment) string { return p.User }, weir.Name("user"))
	totals := weir.Process(byUser, func(user string, total *int, p payment, out []string) []string {
		*total += p.Amount
		return append(out, fmt.Sprintf("%s %d", user, *total))
	}, weir.Selectivity(weir.ExactlyOne))
	out := &weir.Collect[string]{}
	weir.Sink(totals, out)
	runJob(job)
	for _, line := range out.Records() {
		fmt.Println(line)
	}
	// Output:
	// ann 5
	// bob 2
	// ann 6
	// cat 7
	// bob 6
}

// A function that declares nothing runs in one instance: the planner
// cannot know it keeps no state. Stateless lets it run in every worker.
func ExampleStateless() {
	job := weir.NewJob("squares", weir.Workers(4), weir.Ordered())
	nums := weir.Source(job, "nums", weir.SliceSource[int]{Records: []int{1, 2, 3, 4, 5, 6}, BatchSize: 1})
	squares := weir.Map(nums, func(n int) int { return n * n }, weir.Stateless(), weir.Name("square"))
	counter := 0
	numbered := weir.Map(squares, func(n int) string { counter++; return fmt.Sprintf("%d:%d", counter, n) }, weir.Name("number"))
	out := &weir.Collect[string]{}
	weir.Sink(numbered, out)
	runJob(job)
	fmt.Println(out.Records())
	plan, _ := job.Explain()
	for _, want := range []string{"region 1  x4  stateless", "region 2  x1  serial"} {
		fmt.Println(want, containsLine(plan, want))
	}
	// Output:
	// [1:1 2:4 3:9 4:16 5:25 6:36]
	// region 1  x4  stateless true
	// region 2  x1  serial true
}

func containsLine(text, prefix string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
