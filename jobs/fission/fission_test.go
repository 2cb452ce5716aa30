package fission_test

import (
	"context"
	"testing"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/jobs/fission"
)

func run(t testing.TB, recs []fission.Record, c fission.Config, opts ...weir.JobOption) *fission.Checksum {
	job := weir.NewJob("fission", opts...)
	sum := &fission.Checksum{}
	src := weir.Source(job, "records", weir.SliceSource[fission.Record]{Records: recs, BatchSize: 256})
	weir.Sink(fission.Query(src, c), sum)
	if err := job.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return sum
}

// The job equals its plain loop: in order with Ordered, as a multiset
// without, at every parallelism, in both shapes.
func TestQueryMatchesReference(t *testing.T) {
	recs := fission.Generate(50_000, 300)
	for _, keyed := range []bool{false, true} {
		c := fission.Config{Rounds: 20, Keyed: keyed}
		want := fission.Reference(recs, c)
		for _, w := range []int{1, 2, 3, 8} {
			got := run(t, recs, c, weir.Workers(w), weir.Ordered(), weir.EpochRecords(5000))
			if got.Records != want.Records || got.Ordered != want.Ordered {
				t.Errorf("keyed=%v workers %d ordered: %d records digest %x; want %d %x", keyed, w, got.Records, got.Ordered, want.Records, want.Ordered)
			}
			// Unordered, a user's records reach the running total in
			// another order (the source is read in parallel), so the
			// totals along the way differ; only the count is fixed.
			got = run(t, recs, c, weir.Workers(w), weir.EpochRecords(5000))
			if got.Records != want.Records || (!keyed && got.Unordered != want.Unordered) {
				t.Errorf("keyed=%v workers %d unordered: %d records digest %x; want %d %x", keyed, w, got.Records, got.Unordered, want.Records, want.Unordered)
			}
		}
	}
}

// The digests tell order apart, or the test above could not fail.
func TestChecksumSeesOrder(t *testing.T) {
	a, b := fission.Scored{ID: 1, Score: 5}, fission.Scored{ID: 2, Score: 7}
	x, y := &fission.Checksum{}, &fission.Checksum{}
	x.Write([]fission.Scored{a, b})
	y.Write([]fission.Scored{b, a})
	if x.Ordered == y.Ordered || x.Unordered != y.Unordered {
		t.Errorf("digests of a,b and b,a: ordered %x %x, unordered %x %x", x.Ordered, y.Ordered, x.Unordered, y.Unordered)
	}
}
