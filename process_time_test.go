package weir_test

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/pebblestate"
)

// phased is a source that one reader reads in phases, with a clock the
// test owns: before phase p it waits until ready(p) (returning empty
// batches, so that epochs still end by time), then sets the clock to
// clocks[p] and returns the phase's records. The job's functions poke
// notify when they make progress.
type phased struct {
	phases [][]rec
	clocks []int64
	clock  *atomic.Int64
	ready  func(p int) bool
	notify chan struct{}
}

func newPhased(phases [][]rec, clocks []int64) *phased {
	return &phased{phases: phases, clocks: clocks, clock: &atomic.Int64{}, notify: make(chan struct{}, 1)}
}

func (s *phased) Open(ctx weir.SourceContext) (weir.Reader[rec], error) {
	r := &phasedReader{s: s}
	if ctx.Instance > 0 {
		r.p = len(s.phases)
	}
	return r, nil
}

// poke tells the reader that the job made progress.
func (s *phased) poke() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// opt is the job's clock.
func (s *phased) opt() weir.JobOption {
	return weir.WithClock(func() time.Time { return time.UnixMilli(s.clock.Load()) })
}

type phasedReader struct {
	s *phased
	p int
}

func (r *phasedReader) Read() ([]rec, error) {
	if r.p == len(r.s.phases) {
		return nil, io.EOF
	}
	if !r.s.ready(r.p) {
		select {
		case <-r.s.notify:
		case <-time.After(2 * time.Millisecond):
		}
		return nil, nil
	}
	r.s.clock.Store(r.s.clocks[r.p])
	r.p++
	return r.s.phases[r.p-1], nil
}

func (r *phasedReader) Close() error { return nil }

// phaseRecs makes n records a phase over keys k0..k(keys-1), with Val
// from 1 to 400 and the phase's index in TS.
func phaseRecs(phases, n, keys int) [][]rec {
	out := make([][]rec, phases)
	id := 0
	for p := range out {
		for i := range n {
			if (i+p)%5 == 0 {
				continue // keys skip phases, at random
			}
			out[p] = append(out[p], rec{ID: id, Key: fmt.Sprintf("k%d", (i*7+p*3)%keys), TS: int64(p), Val: 1 + int64(id*37%400)})
			id++
		}
	}
	return out
}

// ptOut is a fired processing-time timer: its key, time and the clock
// when it fired; Bad marks a record that saw another clock than its
// phase's.
type ptOut struct {
	Key     string
	T, At   int64
	BadTime bool
}

// ptModel fires the timers that phases register at clock + Val: pending
// timers due at a phase's clock fire at it, before the next phase; those
// not due at the end are dropped. firedBefore[p] counts the firings
// before phase p.
func ptModel(phases [][]rec, clocks []int64) (out []ptOut, firedBefore []int) {
	type timer struct {
		key string
		t   int64
	}
	pending := map[timer]bool{}
	fire := func(now int64) {
		for tm := range pending {
			if tm.t <= now {
				out = append(out, ptOut{Key: tm.key, T: tm.t, At: now})
				delete(pending, tm)
			}
		}
	}
	for p, recs := range phases {
		if p > 0 {
			fire(clocks[p-1])
		}
		firedBefore = append(firedBefore, len(out))
		for _, r := range recs {
			pending[timer{r.Key, clocks[p] + r.Val}] = true
		}
	}
	fire(clocks[len(clocks)-1])
	return out, firedBefore
}

// Processing-time timers fire at the first epoch end at which the
// injected clock has reached them, without records to carry them, and
// those not due when the input ends are dropped.
func TestKeyedProcessProcessingTimers(t *testing.T) {
	phases, clocks := phaseRecs(5, 40, 8), []int64{1000, 1100, 1250, 1600, 1700}
	want, firedBefore := ptModel(phases, clocks)
	for _, w := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			src := newPhased(phases, clocks)
			var processed, fired atomic.Int64
			src.ready = func(p int) bool {
				return processed.Load() >= int64(seenBefore(phases, p)) && fired.Load() >= int64(firedBefore[p])
			}
			j := weir.NewJob("ptimers", weir.Workers(w), weir.BatchInterval(2*time.Millisecond), src.opt())
			s := weir.Source(j, "src", src, weir.Parallelism(1))
			type ctx = weir.ProcessContext[string, struct{}, ptOut]
			out := weir.KeyedProcess(weir.KeyBy(s, recKey), weir.ProcessFunc[string, rec, struct{}, ptOut]{
				OnRecord: func(c *ctx, r rec) {
					if now := c.ProcessingTime(); now != clocks[r.TS] {
						c.Emit(ptOut{Key: c.Key(), At: now, BadTime: true})
					}
					c.RegisterProcessingTimer(c.ProcessingTime() + r.Val)
					processed.Add(1)
					src.poke()
				},
				OnTimer: func(c *ctx, tm weir.Timer) {
					c.Emit(ptOut{Key: c.Key(), T: tm.Time, At: c.ProcessingTime(), BadTime: tm.Domain != weir.ProcessingTimeDomain})
					fired.Add(1)
					src.poke()
				},
			})
			got := &weir.Collect[ptOut]{}
			weir.Sink(out, got)
			if err := runErr(t, j); err != nil {
				t.Fatal(err)
			}
			checkBag(t, got.Records(), want)
		})
	}
}

// seenBefore is the number of records in the phases before p.
func seenBefore(phases [][]rec, p int) int {
	n := 0
	for _, recs := range phases[:p] {
		n += len(recs)
	}
	return n
}

// ttlOut is a record's key, phase (or event time) and the count of its
// key's records that its state holds.
type ttlOut struct {
	Key   string
	TS, N int64
}

// countTTL counts each key's records in KeyedProcess and in Process, with
// StateTTL(ttl, dom): two outputs of the same records.
func countTTL(s weir.Stream[rec], ttl time.Duration, dom weir.TimeDomain, seen func()) weir.Stream[ttlOut] {
	kp := weir.KeyedProcess(weir.KeyBy(s, recKey), weir.ProcessFunc[string, rec, int64, ttlOut]{
		OnRecord: func(c *weir.ProcessContext[string, int64, ttlOut], r rec) {
			n := c.State()
			*n++
			c.Emit(ttlOut{c.Key(), r.TS, *n})
			seen()
		},
	}, weir.StateTTL(ttl, dom))
	p := weir.Process(weir.KeyBy(s, recKey), func(k string, n *int64, r rec, out []ttlOut) []ttlOut {
		*n++
		seen()
		return append(out, ttlOut{k, r.TS, *n})
	}, weir.StateTTL(ttl, dom))
	return weir.Union(kp, p)
}

// ttlModel counts each key's records, from 1 again after a gap of at
// least ttl in at's time; twice, for the two operators.
func ttlModel(in []rec, ttl int64, at func(rec) int64) []ttlOut {
	last, n := map[string]int64{}, map[string]int64{}
	var out []ttlOut
	for _, r := range in {
		if l, ok := last[r.Key]; ok && l+ttl <= at(r) {
			n[r.Key] = 0
		}
		last[r.Key] = at(r)
		n[r.Key]++
		out = append(out, ttlOut{r.Key, r.TS, n[r.Key]}, ttlOut{r.Key, r.TS, n[r.Key]})
	}
	return out
}

// State expires 300 ms of event time after its last touch: keys that
// skip 1000 ms start again from zero, the others keep counting, at 1-8
// workers with count and time epochs. (One source split, so that the
// watermark passes a key's expiry well before its next record.)
func TestStateTTLEventTime(t *testing.T) {
	in := make([]rec, 6000)
	for i := range in {
		key := fmt.Sprintf("k%d", i%10)
		if (i/1000+i%10)%3 == 0 {
			key = "busy" // k(i%10) skips a thousand records
		}
		in[i] = rec{ID: i, Key: key, TS: 1_000_000 + int64(i)}
	}
	want := ttlModel(in, 300, func(r rec) int64 { return r.TS })
	for _, c := range runCfgs() {
		t.Run(c.name, func(t *testing.T) {
			j := c.job()
			out := &weir.Collect[ttlOut]{}
			weir.Sink(countTTL(timedSource(c, j, "src", in, weir.Parallelism(1)), 300*time.Millisecond, weir.EventTimeDomain, func() {}), out)
			run(t, j)
			checkBag(t, out.Records(), want)
		})
	}
	for _, pebble := range []bool{false, true} {
		t.Run(fmt.Sprintf("restored at other workers, pebble %v", pebble), func(t *testing.T) {
			dir := t.TempDir()
			build := func(j *weir.Job, crashAt int) *weir.Collect[ttlOut] {
				s := crashMap(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 50}, weir.Parallelism(1)), crashAt)
				out := &weir.Collect[ttlOut]{}
				timed := weir.EventTime(s, recTS, outOfOrder, weir.Parallelism(1))
				weir.Sink(countTTL(timed, 300*time.Millisecond, weir.EventTimeDomain, func() {}), out, weir.Name("out"))
				return out
			}
			opts := func(w int) []weir.JobOption {
				o := []weir.JobOption{weir.Workers(w), weir.EpochRecords(100), weir.QueueDepth(2), weir.Checkpoints(filepath.Join(dir, "ckpt"), 2, 2)}
				if pebble {
					o = append(o, pebblestate.Dir(filepath.Join(dir, "state")))
				}
				return o
			}
			first := weir.NewJob("first", opts(2)...)
			build(first, 5500)
			if err := runErr(t, first); err == nil || !strings.Contains(err.Error(), "crash") {
				t.Fatalf("first run: %v; want the crash", err)
			}
			second := weir.NewJob("second", opts(3)...)
			out := build(second, -1)
			if err := runErr(t, second); err != nil {
				t.Fatal(err)
			}
			if second.Metrics().RestoredFrom == 0 {
				t.Fatal("no checkpoint restored")
			}
			checkBag(t, out.Records(), want)
		})
	}
}

// State expires 100 ms of the injected processing-time clock after its
// last touch, read per batch. (Epochs end by time, so that a phase's
// last records leave the exchange while the source waits.)
func TestStateTTLProcessingTime(t *testing.T) {
	phases, clocks := phaseRecs(6, 60, 10), []int64{0, 50, 120, 400, 450, 600}
	var all []rec
	for _, recs := range phases {
		all = append(all, recs...)
	}
	want := ttlModel(all, 100, func(r rec) int64 { return clocks[r.TS] })
	for _, w := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			src := newPhased(phases, clocks)
			var processed atomic.Int64
			src.ready = func(p int) bool { return processed.Load() >= 2*int64(seenBefore(phases, p)) }
			j := weir.NewJob("pttl", weir.Workers(w), weir.BatchInterval(2*time.Millisecond), src.opt())
			out := &weir.Collect[ttlOut]{}
			weir.Sink(countTTL(weir.Source(j, "src", src, weir.Parallelism(1)), 100*time.Millisecond, weir.ProcessingTimeDomain, func() {
				processed.Add(1)
				src.poke()
			}), out)
			if err := runErr(t, j); err != nil {
				t.Fatal(err)
			}
			checkBag(t, out.Records(), want)
		})
	}
}
