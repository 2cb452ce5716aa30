package weir_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// irec is a record of the idleness tests. Records that are not Live are
// filler, which keeps count epochs going while a split has nothing to say;
// the job filters them out before EventTime.
type irec struct {
	Key  string
	TS   int64
	Live bool
}

// scriptInput is an unbounded source in phases: split i reads parts[i][k],
// then waits for gates[k] to close before it reads parts[i][k+1]; after the
// last gate it ends. While it waits it reads nothing or, with fill, filler.
// Splits without parts read nothing but wait for the gates alike.
type scriptInput struct {
	parts [][][]irec
	gates []chan struct{}
	fill  bool
	live  atomic.Int64 // live records read so far
}

func newScript(phases int, fill bool, parts ...[][]irec) *scriptInput {
	in := &scriptInput{parts: parts, fill: fill}
	for range phases {
		in.gates = append(in.gates, make(chan struct{}))
	}
	return in
}

// open lets every split read the next phase.
func (in *scriptInput) open(k int) { close(in.gates[k]) }

func (in *scriptInput) Open(ctx weir.SourceContext) (weir.Reader[irec], error) {
	r := &scriptReader{in: in}
	if ctx.Instance < len(in.parts) {
		r.parts = in.parts[ctx.Instance]
	}
	return r, nil
}

type scriptReader struct {
	in     *scriptInput
	parts  [][]irec
	phase  int
	pos    int
	last   int // live records the last Read returned
	filler [8]irec
}

// Position implements weir.Seekable: the phase and the records of it read.
func (r *scriptReader) Position(used int) ([]byte, error) {
	b := binary.AppendUvarint(nil, uint64(r.phase))
	return binary.AppendUvarint(b, uint64(r.pos-r.last+min(used, r.last))), nil
}

// Seek implements weir.Seekable.
func (r *scriptReader) Seek(pos []byte) error {
	phase, n := binary.Uvarint(pos)
	at, m := binary.Uvarint(pos[max(n, 0):])
	if n <= 0 || m <= 0 {
		return fmt.Errorf("bad position %x", pos)
	}
	r.phase, r.pos, r.last = int(phase), int(at), 0
	return nil
}

func (r *scriptReader) Read() ([]irec, error) {
	r.last = 0
	for {
		if r.phase < len(r.parts) && r.pos < len(r.parts[r.phase]) {
			cur := r.parts[r.phase]
			n := min(64, len(cur)-r.pos)
			b := cur[r.pos : r.pos+n]
			r.pos += n
			r.last = n
			r.in.live.Add(int64(n))
			return b, nil
		}
		if r.phase >= len(r.in.gates) {
			return nil, io.EOF
		}
		select {
		case <-r.in.gates[r.phase]:
			r.phase, r.pos = r.phase+1, 0
			continue
		default:
		}
		if r.in.fill {
			time.Sleep(100 * time.Microsecond)
			return r.filler[:], nil
		}
		time.Sleep(time.Millisecond)
		return nil, nil
	}
}

func (r *scriptReader) Close() error { return nil }

// tickClock is a clock that moves one second on every reading, so that an
// EventTime instance with IdleAfter(3s) goes idle after at most three epoch
// ends without a record, and one with records in every epoch never does.
func tickClock() func() time.Time {
	var n atomic.Int64
	return func() time.Time { return time.Unix(n.Add(1), 0) }
}

// idleCount is the tests' job: live records, EventTime (idle after 3s of
// the clock, if idle), a count per key and 1-second window, and the late
// records, each as a result with key "late:KEY", start its time and value
// -1.
// With rebalance, the source is read by one instance and EventTime has
// four, fed batches in turn.
func idleCount(in *scriptInput, idle, rebalance bool) func(j *weir.Job) *weir.Collect[distWindow] {
	return func(j *weir.Job) *weir.Collect[distWindow] {
		var opts, src []weir.Option
		if idle {
			opts = append(opts, weir.IdleAfterClock(3*time.Second, tickClock()))
		}
		if rebalance {
			src, opts = append(src, weir.Parallelism(1)), append(opts, weir.Parallelism(4))
		}
		live := weir.Filter(weir.Source(j, "src", in, src...), func(r irec) bool { return r.Live }, weir.Stateless())
		timed := weir.EventTime(live, func(r irec) int64 { return r.TS }, 0, opts...)
		win := weir.Window(weir.KeyBy(timed, func(r irec) string { return r.Key }), weir.Tumbling(time.Second))
		counts := weir.Count(win)
		late := weir.Map(win.Late(), func(r irec) distWindow { return distWindow{Key: "late:" + r.Key, Start: r.TS, Value: -1} }, weir.Stateless())
		out := &weir.Collect[distWindow]{}
		weir.Sink(weir.Union(counts, late), out)
		return out
	}
}

// idleRun runs build in one process (procs 0) or as procs processes over
// an in-process network. For each gate k of the input, once until[k] holds
// of the highest watermark an epoch ended with so far and of the number of
// epochs, it notes the results so far in snaps[k] and opens the gate. It
// returns the notes and all the results.
func idleRun(t *testing.T, procs int, opts []weir.JobOption, in *scriptInput, build func(*weir.Job) *weir.Collect[distWindow],
	until ...func(wm int64, epochs int) bool) (snaps [][]distWindow, all []distWindow) {
	t.Helper()
	var wm, epochs atomic.Int64
	wm.Store(math.MinInt64)
	opts = append(slices.Clone(opts), weir.OnEpoch(func(st weir.EpochStats) {
		epochs.Add(1)
		if !st.Final && st.Watermark > wm.Load() {
			wm.Store(st.Watermark)
		}
	}))
	first := make(chan *weir.Collect[distWindow], 1)
	var once sync.Once
	b := func(j *weir.Job) *weir.Collect[distWindow] {
		out := build(j)
		once.Do(func() { first <- out })
		return out
	}
	done := make(chan []error, 1)
	go func() {
		if procs > 0 {
			_, errs := runProcesses(t, procs, opts, b)
			done <- errs
			return
		}
		j := weir.NewJob("idle", opts...)
		b(j)
		done <- []error{runErr(t, j)}
	}()
	out := <-first
	deadline := time.Now().Add(30 * time.Second)
	var errs []error
	for k, u := range until {
		for errs == nil && !u(wm.Load(), int(epochs.Load())) {
			if time.Now().After(deadline) {
				t.Errorf("gate %d: gave up waiting: watermark %d after %d epochs", k, wm.Load(), epochs.Load())
				break
			}
			select {
			case errs = <-done: // ended before its input did
			case <-time.After(time.Millisecond):
			}
		}
		snaps = append(snaps, sortedWindows(out.Records()))
		in.open(k)
	}
	if errs == nil {
		errs = <-done
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	return snaps, sortedWindows(out.Records())
}

// idleModel counts the live records per key and 1-second window, leaving
// out those in late, which it lists as idleCount does.
func idleModel(recs []irec, late []irec) []distWindow {
	counts := map[distWindow]int64{}
	for _, r := range recs {
		if !r.Live || slices.Contains(late, r) {
			continue
		}
		start := r.TS - r.TS%1000
		counts[distWindow{Key: r.Key, Start: start, End: start + 1000}]++
	}
	var out []distWindow
	for w, n := range counts {
		w.Value = n
		out = append(out, w)
	}
	for _, r := range late {
		out = append(out, distWindow{Key: "late:" + r.Key, Start: r.TS, Value: -1})
	}
	return sortedWindows(out)
}

// upTo is the windows of ws that end at or before end.
func upTo(ws []distWindow, end int64) []distWindow {
	var out []distWindow
	for _, w := range ws {
		if w.End <= end {
			out = append(out, w)
		}
	}
	return out
}

// steady is split 0's records: three keys, one record every 10 ms of
// event time over [0, 10s), in order.
func steady() []irec {
	recs := make([]irec, 1000)
	for i := range recs {
		recs[i] = irec{Key: fmt.Sprintf("k%d", i%3), TS: int64(i) * 10, Live: true}
	}
	return recs
}

// An EventTime instance without records (a split with nothing to read, or
// more instances than splits) holds every window back until the input
// ends; with IdleAfter it is left out, and the windows fire while the
// input runs. Either way the results are the sequential model's, at 1, 2
// and 4 workers, with time and count epochs.
func TestIdleAfterFiresWhileRunning(t *testing.T) {
	recs := steady()
	want := idleModel(recs, nil)
	early := upTo(want, 9000) // the watermark stops at 9989 until the end
	for _, count := range []bool{false, true} {
		for _, workers := range []int{1, 2, 4} {
			for _, tc := range []struct{ idle, rebalance bool }{{true, false}, {false, false}, {true, true}} {
				if workers == 1 && !tc.idle {
					continue // no instance without records
				}
				name := fmt.Sprintf("count %v, %d workers, idle %v, rebalance %v", count, workers, tc.idle, tc.rebalance)
				opts := []weir.JobOption{weir.Workers(workers), weir.BatchInterval(5 * time.Millisecond)}
				if count {
					opts = append(opts, weir.EpochRecords(40))
				}
				in := newScript(1, count, [][]irec{recs})
				until := func(wm int64, _ int) bool { return wm >= 9989 }
				if !tc.idle {
					until = quietFor(in, int64(len(recs)), 30)
				}
				snaps, all := idleRun(t, 0, opts, in, idleCount(in, tc.idle, tc.rebalance), until)
				if !slices.Equal(all, want) {
					t.Errorf("%s: %d results; want %d:\n%v\nwant\n%v", name, len(all), len(want), all, want)
				}
				wantEarly := early
				if !tc.idle {
					wantEarly = nil
				}
				if !slices.Equal(snaps[0], wantEarly) {
					t.Errorf("%s: %d results while the input ran; want %d:\n%v", name, len(snaps[0]), len(wantEarly), snaps[0])
				}
			}
		}
	}
}

// quietFor holds once n live records have been read and then epochs more
// epochs have ended: long enough for an idle instance to have been left
// out, had it been.
func quietFor(in *scriptInput, n int64, epochs int) func(int64, int) bool {
	after := -1
	return func(_ int64, e int) bool {
		if in.live.Load() < n {
			return false
		}
		if after < 0 {
			after = e
		}
		return e >= after+epochs
	}
}

// A split that was idle and resumes behind the watermark the others
// advanced has its records late, counted and sent to Late(); the others
// on time. In one process and across two (the idle flag crosses the
// wire), with both partitionings a window may be given: a sender may not
// pre-aggregate for a window whose watermark may be ahead of its own.
func TestIdleAfterResumesLate(t *testing.T) {
	back := []irec{{"b", 500, true}, {"b", 9500, true}, {"b", 12000, true}}
	late := back[:1]
	recs := append(steady(), back...)
	want := idleModel(recs, late)
	early := upTo(idleModel(steady(), nil), 9000)
	for _, count := range []bool{false, true} {
		for _, run := range []struct{ procs, workers int }{{0, 2}, {0, 4}, {2, 1}, {2, 2}} {
			for _, part := range []string{"auto", "roundrobin", "hash", "prompt", "pkg"} {
				name := fmt.Sprintf("count %v, %d processes, %d workers, %s", count, run.procs, run.workers, part)
				opts := []weir.JobOption{weir.Workers(run.workers), weir.BatchInterval(5 * time.Millisecond), weir.Partitioning(part)}
				if count {
					opts = append(opts, weir.EpochRecords(40))
				}
				in := newScript(2, count, [][]irec{steady(), nil}, [][]irec{nil, back})
				snaps, all := idleRun(t, run.procs, opts, in, idleCount(in, true, false),
					func(wm int64, _ int) bool { return wm >= 9989 },
					func(int64, int) bool { return in.live.Load() == int64(len(recs)) })
				if !slices.Equal(all, want) {
					t.Errorf("%s: %d results; want %d:\n%v\nwant\n%v", name, len(all), len(want), all, want)
				}
				if !slices.Equal(snaps[0], early) {
					t.Errorf("%s: %d results before the split resumed; want %d:\n%v", name, len(snaps[0]), len(early), snaps[0])
				}
			}
		}
	}
}
