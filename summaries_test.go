package weir_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// sevensInput counts, for the job's summary, the records it reads whose
// ID is a multiple of 7.
type sevensInput struct {
	src weir.SliceSource[rec]
	n   *atomic.Int64
}

func (c sevensInput) Open(ctx weir.SourceContext) (weir.Reader[rec], error) {
	r, err := c.src.Open(ctx)
	return sevensReader{r, c.n}, err
}

func (c sevensInput) Counters() map[string]int64 { return map[string]int64{"sevens": c.n.Load()} }

type sevensReader struct {
	weir.Reader[rec]
	n *atomic.Int64
}

func (r sevensReader) Read() ([]rec, error) {
	b, err := r.Reader.Read()
	for _, x := range b {
		if x.ID%7 == 0 {
			r.n.Add(1)
		}
	}
	return b, err
}

// A distributed job's summary counts records, late records and what its
// inputs count over every process, on every process.
func TestDistributedSummaryTotals(t *testing.T) {
	const share, tail = 600, 100
	for _, procs := range []int{1, 3} {
		// Every reader's share is in event-time order but for its last
		// tail records, which lie far behind: they are late whatever the
		// process, since every reader has passed its ordered part by the
		// epoch they are read in.
		in := make([]rec, procs*share)
		late, sevens := 0, int64(0)
		for i := range in {
			ts := int64(i%share) * 10
			if i%share >= share-tail {
				ts = 0
				late++
			}
			in[i] = rec{ID: i, Key: []string{"a", "b", "c", "d"}[i%4], TS: ts}
			if i%7 == 0 {
				sevens++
			}
		}
		opts := []weir.JobOption{weir.Workers(1), weir.EpochRecords(100)}
		var jobs []*weir.Job
		_, errs := runProcesses(t, procs, opts, func(j *weir.Job) *weir.Collect[distWindow] {
			jobs = append(jobs, j)
			s := weir.Source(j, "src", sevensInput{weir.SliceSource[rec]{Records: in, BatchSize: 50}, new(atomic.Int64)})
			timed := weir.EventTime(s, func(r rec) int64 { return r.TS }, 10*time.Millisecond)
			out := &weir.Collect[distWindow]{}
			weir.Sink(weir.Count(weir.Window(weir.KeyBy(timed, func(r rec) string { return r.Key }), weir.Tumbling(100*time.Millisecond))), out)
			return out
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%d processes: process %d: %v", procs, i, err)
			}
		}
		for i, j := range jobs {
			m := j.Metrics()
			if m.Records != int64(len(in)) || m.Late != int64(late) || m.Counters["sevens"] != sevens || len(m.Missing) > 0 {
				t.Errorf("%d processes: process %d's metrics: %d records, %d late, %d sevens, missing %v; want %d, %d, %d, none",
					procs, i, m.Records, m.Late, m.Counters["sevens"], m.Missing, len(in), late, sevens)
			}
		}
	}
}
