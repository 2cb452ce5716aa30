package weir_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weirstream/weir"
)

// partitions is an input that never ends, as a message queue's topic: its
// first partition holds the clicks, the others have none yet.
type partitions struct{ clicks []click }

func (p partitions) Open(ctx weir.SourceContext) (weir.Reader[click], error) {
	r := &partition{}
	if ctx.Instance == 0 {
		r.clicks = p.clicks
	}
	return r, nil
}

type partition struct{ clicks []click }

func (r *partition) Read() ([]click, error) {
	if len(r.clicks) == 0 {
		time.Sleep(time.Millisecond) // nothing yet; more may come
		return nil, nil
	}
	b := r.clicks
	r.clicks = nil
	return b, nil
}

func (r *partition) Close() error { return nil }

// Two partitions, one of them empty: without IdleAfter the empty one
// would hold back every window for as long as the input runs. With it,
// the windows fire once it has been quiet for 20 ms, and the job stops
// when it has what it wants.
func ExampleIdleAfter() {
	stop := make(chan struct{})
	job := weir.NewJob("clicks", weir.Workers(2), weir.BatchInterval(5*time.Millisecond), weir.StopOn(stop))
	src := weir.Source(job, "clicks", partitions{clicks: clicks})
	timed := weir.EventTime(src, clickTime, 0, weir.IdleAfter(20*time.Millisecond))
	counts := weir.Count(weir.Window(weir.KeyBy(timed, clickUser), weir.Tumbling(10*time.Second)))
	var (
		mu  sync.Mutex
		got []weir.WindowResult[string, int64]
	)
	weir.Sink(counts, weir.SinkFunc[weir.WindowResult[string, int64]](func(rs []weir.WindowResult[string, int64]) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, rs...)
		if len(got) == 3 { // the windows before 20s; cid's [20s, 30s) waits for later clicks
			close(stop)
		}
		return nil
	}))
	err := job.Run(context.Background())
	fmt.Println("stopped:", errors.Is(err, weir.ErrStopped))
	mu.Lock()
	printSorted(got)
	mu.Unlock()
	// Output:
	// stopped: true
	// {Key:ann Start:0 End:10000 Value:2}
	// {Key:ann Start:10000 End:20000 Value:1}
	// {Key:bob Start:0 End:10000 Value:2}
}
