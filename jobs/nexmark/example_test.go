package nexmark_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

// Run q2 (the bids on every 123rd auction) over generated events, write
// its rows as CSV and check the result against the hand-written loop.
func Example() {
	g := gen.Nexmark{Events: 20_000, Seed: 1, StartTime: 1_700_000_000_000}
	job := weir.NewJob("q2", weir.Workers(2))
	var rows weir.Collect[string]
	var sum nexmark.Checksum
	if err := nexmark.Add("q2", weir.Source(job, "events", g), nexmark.Sinks{CSV: &rows, Sum: &sum}); err != nil {
		panic(err)
	}
	if err := job.Run(context.Background()); err != nil {
		panic(err)
	}
	lines := rows.Records()
	slices.Sort(lines)
	fmt.Println(nexmark.Header("q2"))
	for _, l := range lines[:3] {
		fmt.Println(l)
	}
	want, _, err := nexmark.Baseline("q2", g)
	fmt.Println(len(lines), "rows; as the loop computes:", err == nil && sum.Equal(&want))
	// Output:
	// auction,price
	// 1107,1136028
	// 1107,137
	// 1107,25948333
	// 66 rows; as the loop computes: true
}
