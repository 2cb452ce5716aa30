package weir_test

import (
	"context"
	"fmt"

	"github.com/weirstream/weir"
)

// Stats gives, per operator chain, the records it took in and sent on,
// and DS2's rates; here a source of 1000 numbers feeds a filter that
// keeps the even ones.
func ExampleJob_Stats() {
	nums := make([]int, 1000)
	for i := range nums {
		nums[i] = i
	}
	j := weir.NewJob("stats", weir.Workers(2))
	src := weir.Source(j, "numbers", weir.SliceSource[int]{Records: nums})
	even := weir.Filter(src, func(n int) bool { return n%2 == 0 }, weir.Name("even"), weir.Stateless())
	weir.Sink(even, &weir.Collect[int]{}, weir.Name("collect"))
	if err := j.Run(context.Background()); err != nil {
		panic(err)
	}
	for _, o := range j.Stats().Operators() {
		fmt.Printf("%s: %d instance(s), %d in, %d out, has a processing rate: %v\n",
			o.Operator, o.Instances, o.RecordsIn, o.RecordsOut, o.Processing > 0)
	}
	// Output:
	// collect: 1 instance(s), 500 in, 0 out, has a processing rate: true
	// numbers→even: 2 instance(s), 1000 in, 500 out, has a processing rate: true
}
