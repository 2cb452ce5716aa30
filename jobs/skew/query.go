package skew

import (
	"cmp"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// WindowMillis is the size of the tumbling event-time window.
const WindowMillis = 1_000

// DefaultStart is the event time of the first generated record when a
// Config does not choose: not on a window boundary, so that the first and
// last windows are partial.
const DefaultStart = gen.YSBEventsStart + 317

// Record is one keyed record: its key, its event time in milliseconds and
// its sequence number.
type Record = gen.ZipfRecord

// Result is the count of one key in one window.
type Result = weir.WindowResult[uint64, int64]

// Config describes generated input.
type Config struct {
	// Dist is "zipf" (the default) or "uniform".
	Dist string
	// S is the Zipf exponent, any finite S > 0 (default 1.5).
	S float64
	// Keys is the number of distinct keys (default 100,000).
	Keys int
	// Events is the number of records.
	Events int
	// Seed determines the keys.
	Seed uint64
	// Start is the event time of record 0 in ms (default DefaultStart).
	Start int64
	// EventsPerSecond is the number of records per second of event time
	// (default 1,000,000), so a window holds that many records.
	EventsPerSecond float64
}

func (c Config) withDefaults() Config {
	if c.Dist == "" {
		c.Dist = "zipf"
	}
	if c.S == 0 {
		c.S = 1.5
	}
	if c.Keys == 0 {
		c.Keys = 100_000
	}
	if c.Start == 0 {
		c.Start = DefaultStart
	}
	if c.EventsPerSecond == 0 {
		c.EventsPerSecond = 1_000_000
	}
	return c
}

// Zipf returns the generator source of the configuration's Zipf records
// (Dist must be "zipf"): a weir.Input whose instances together emit
// exactly the records Generate returns.
func (c Config) Zipf() gen.Zipf {
	c = c.withDefaults()
	return gen.Zipf{
		Keys: c.Keys, S: c.S, Events: int64(c.Events), Seed: c.Seed,
		StartTime: c.Start, EventTimeRate: c.EventsPerSecond, BatchSize: 4096,
	}
}

// Generate returns the configuration's records in sequence order. Keys
// come from the gen.Zipf generator; for the uniform distribution each
// record's key is instead a uniform function of the seed and its sequence
// number.
func Generate(c Config) ([]Record, error) {
	c = c.withDefaults()
	if c.Events < 0 {
		return nil, fmt.Errorf("skew: Events is %d, want ≥ 0", c.Events)
	}
	if c.Dist != "zipf" && c.Dist != "uniform" {
		return nil, fmt.Errorf("skew: unknown distribution %q (want zipf or uniform)", c.Dist)
	}
	out := make([]Record, 0, c.Events)
	if c.Events == 0 {
		return out, nil
	}
	r, err := c.Zipf().Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		return nil, fmt.Errorf("skew: %w", err)
	}
	defer r.Close()
	for {
		b, err := r.Read()
		out = append(out, b...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("skew: %w", err)
		}
	}
	if c.Dist == "uniform" {
		for i := range out {
			out[i].Key = uniformKey(c.Seed, uint64(out[i].Value), c.Keys)
		}
	}
	return out, nil
}

// uniformKey is key number seq of a uniform sequence over [0, keys).
func uniformKey(seed, seq uint64, keys int) uint64 {
	z := seed*0x9e3779b97f4a7c15 + (seq+1)*0xbf58476d1ce4e5b9
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	hi, _ := bits.Mul64(z, uint64(keys))
	return hi
}

// Query counts the records of each key in one-second tumbling windows of
// event time, with maxDelay of allowed disorder.
func Query(records weir.Stream[Record], maxDelay time.Duration) weir.Stream[Result] {
	timed := weir.EventTime(records, func(r Record) int64 { return r.EventTime }, maxDelay, weir.Name("eventtime"))
	keyed := weir.KeyBy(timed, func(r Record) uint64 { return r.Key })
	return weir.Count(weir.Window(keyed, weir.Tumbling(WindowMillis*time.Millisecond),
		weir.WindowOptions(weir.Name("count(1s)"))))
}

// Reference computes the query plainly: a map from (key, window start) to
// count, over the records in any order.
func Reference(records []Record) []Result {
	type kw struct {
		key   uint64
		start int64
	}
	counts := map[kw]int64{}
	for _, r := range records {
		counts[kw{r.Key, WindowStart(r.EventTime)}]++
	}
	out := make([]Result, 0, len(counts))
	for k, n := range counts {
		out = append(out, Result{Key: k.key, Start: k.start, End: k.start + WindowMillis, Value: n})
	}
	Sort(out)
	return out
}

// WindowStart is the start of the window of an event time, rounding down
// (also before 1970).
func WindowStart(t int64) int64 {
	s := t - t%WindowMillis
	if t%WindowMillis < 0 {
		s -= WindowMillis
	}
	return s
}

// Sort orders results by window start, then key.
func Sort(rs []Result) {
	slices.SortFunc(rs, func(a, b Result) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
}

// Collector keeps the results of a job; it is safe for concurrent use.
type Collector struct {
	weir.Collect[Result]
}

// Sorted returns the results in the order of Sort.
func (c *Collector) Sorted() []Result {
	out := c.Records()
	Sort(out)
	return out
}
