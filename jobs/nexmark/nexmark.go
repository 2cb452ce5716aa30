package nexmark

import (
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// MaxOutOfOrder is how far behind the latest event time seen (by its
// source reader) an event may arrive and still count: none. The
// generator's events come in time order, and so do those of a file it
// wrote, split by readers; an event behind the watermark is late: windows
// drop it and count it in Metrics().Late. (The Flink suite allows 4 s; at
// the generator's default of a million events per second of event time,
// that would keep 4 million events' worth of windows and auctions open.)
const MaxOutOfOrder = 0 * time.Second

// Sinks says where a query's results go. Each result is one CSV line
// (no newline; the header's columns, times as integer milliseconds).
type Sinks struct {
	CSV weir.Output[string] // nil: no CSV
	Sum *Checksum           // nil: no checksum; read after Run returns
}

// query is one Nexmark query: its result columns, how the engine computes
// it, and the two sequential computations it is checked against.
type query struct {
	header string
	cols   []col
	// updating: rows update a value per key (column 0); the final result
	// is the last row of each key.
	updating bool
	add      func(events weir.Stream[gen.NexmarkEvent], sk Sinks)
	// costed, for the queries that take Service (instead of add), adds
	// the query with cost, if not nil, called for every record its first
	// keyed aggregation folds.
	costed func(events weir.Stream[gen.NexmarkEvent], sk Sinks, cost func())
	ref    func(events []gen.NexmarkEvent) []string
	base   func(g gen.Nexmark) (Checksum, int64, error)
}

var queries = map[string]*query{}

// register adds a query; each query's file calls it from init.
func register(name string, q *query) {
	if queries[name] != nil || len(q.cols) != len(splitHeader(q.header)) {
		panic("nexmark: bad registration of " + name)
	}
	queries[name] = q
}

// Names returns the query names in order: "q0" "q1" "q2" "q3" "q4" "q5"
// "q7" "q8" "q9" "q11" (and any more that are built).
func Names() []string {
	names := make([]string, 0, len(queries))
	for n := range queries {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		if a < b {
			return -1
		}
		if a > b {
			return 1
		}
		return 0
	})
	return names
}

// Header returns query name's CSV header line, no newline; "" if unknown.
func Header(name string) string {
	if q := queries[name]; q != nil {
		return q.header
	}
	return ""
}

func lookup(name string) (*query, error) {
	q := queries[name]
	if q == nil {
		return nil, fmt.Errorf("nexmark: unknown query %q (known: %v)", name, Names())
	}
	return q, nil
}

// Add adds query name over events to events' job, with its results going
// to sinks. events are the raw events (gen.Nexmark or a decoded JSON-lines
// file), no event time assigned yet: a query that needs event time assigns
// it from DateTime (after its filters, so that its watermark follows the
// records it keeps) with MaxOutOfOrder. An unknown name is an error.
//
// Sinks.Sum is written by one sink instance, on process 0 of a distributed
// job; in the other processes it stays empty.
func Add(name string, events weir.Stream[gen.NexmarkEvent], sinks Sinks, opts ...Option) error {
	q, err := lookup(name)
	if err != nil {
		return err
	}
	var o options
	for _, f := range opts {
		f(&o)
	}
	var cost func()
	if d := o.service; d > 0 {
		cost = func() { time.Sleep(d) }
	}
	switch {
	case q.costed != nil:
		q.costed(events, sinks, cost)
	case cost != nil:
		return fmt.Errorf("nexmark: query %s takes no service time (q5, q8 and q11 do)", name)
	default:
		q.add(events, sinks)
	}
	return nil
}

// Option changes how Add builds a query.
type Option func(*options)

type options struct{ service time.Duration }

// Service makes every record the query's first keyed aggregation folds
// (q5's bids per auction and pane, q8's persons and auctions per person
// and window, q11's bids per bidder and session) take d more, a sleep (a
// short one takes longer than d): an instance's rate then depends on the
// sleep, not on the machine's cores, so the fewest instances that keep
// up with a rate follow from arithmetic, as in the autoscaling
// experiments of DS2. The results do not change. Only
// q5, q8 and q11 take it; build such a job with Partitioning("hash"), so
// that the records are folded at their key's instance (pre-aggregation
// would fold them at the senders).
func Service(d time.Duration) Option { return func(o *options) { o.service = d } }

// Reference computes query name over events in a plain sequential loop,
// returning its final result as CSV lines, sorted. It reads the events in
// any order: its result does not depend on it.
func Reference(name string, events []gen.NexmarkEvent) ([]string, error) {
	q, err := lookup(name)
	if err != nil {
		return nil, err
	}
	lines := q.ref(events)
	slices.Sort(lines)
	return lines, nil
}

// Baseline is the hand-written single-threaded loop: it generates g's
// events inline (g.Events of them, read from one reader of g, the same
// generator as the engine's source, so that generation is timed on both
// sides) and computes query name, returning the checksum of its final
// result and the number of events read. g must be bounded (Events > 0)
// and unpaced; its results equal the engine's over g when g.StartTime is
// set (with StartTime 0, event times follow the wall clock at Open).
func Baseline(name string, g gen.Nexmark) (Checksum, int64, error) {
	q, err := lookup(name)
	if err != nil {
		return Checksum{}, 0, err
	}
	if g.Events <= 0 || g.Rate != 0 || g.Duration != 0 {
		return Checksum{}, 0, fmt.Errorf("nexmark: Baseline needs a bounded, unpaced generator (Events %d, Rate %v, Duration %v)", g.Events, g.Rate, g.Duration)
	}
	return q.base(g)
}

// timedEvents assigns event time to every event, before any filter: a
// query over two kinds of events then has a watermark that advances on
// every source instance, whatever kinds of events it reads (instance i of
// p reads events i, i+p, ...: with p = 2, all the persons go to one).
func timedEvents(ev weir.Stream[gen.NexmarkEvent]) weir.Stream[gen.NexmarkEvent] {
	return weir.EventTime(ev, func(e gen.NexmarkEvent) int64 { return e.Time() }, MaxOutOfOrder, weir.Name("event-time"))
}
