package skew

import (
	"fmt"
	"io"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/internal/partition"
)

// SimCost is the cost model of Simulate, in nanoseconds.
//
// A map task that pre-aggregates its block (RoundRobin, PKG, Prompt) costs
// Fold per record plus PerKey per distinct key of the block (a slot in its
// hash table, and the partial it emits); a reducer costs Merge per partial
// it receives. Under Hash nothing is pre-aggregated: the map tasks only
// route their arrival blocks (Route per record), and each reducer folds
// the raw records of its keys (Fold per record plus PerKey per distinct
// key). An epoch takes its slowest map task plus its slowest reducer, as
// when a reduce stage starts after the map stage; the implied throughput
// is the records over the sum of the epochs' times.
type SimCost struct {
	Fold, PerKey, Merge, Route float64
}

// DefaultSimCost is the default cost model.
var DefaultSimCost = SimCost{Fold: 20, PerKey: 40, Merge: 40, Route: 5}

// SimConfig describes a simulation.
type SimConfig struct {
	// Partitions is the number of map blocks and of reducers (default 8).
	Partitions int
	// Epochs of EpochRecords records each (defaults 5 and 200,000).
	Epochs       int
	EpochRecords int
	// Dist, S, Keys and Seed draw the keys as Generate does (defaults
	// "zipf", 1.5, 100,000), unless Tokens is set.
	Dist string
	S    float64
	Keys int
	Seed uint64
	// Tokens, if not nil, are the keys in arrival order (natural text,
	// for instance GoWords), taken from the start and from the start again
	// when they run out.
	Tokens []string
	// Cost is the cost model; the zero value means DefaultSimCost.
	Cost SimCost
	// Strategies to simulate (default all, hash first).
	Strategies []partition.Strategy
}

// SimResult is the outcome of one strategy.
type SimResult struct {
	Strategy   string `json:"strategy"`
	Partitions int    `json:"partitions"`
	Epochs     int    `json:"epochs"`
	Records    int64  `json:"records"`
	// MapImbalance is over the records of the map blocks (under Hash, the
	// arrival blocks the map tasks route), ReduceImbalance over what the
	// reducers receive (partials, or raw records under Hash): the largest
	// over the mean, weighted over the epochs (partition.Imbalance).
	MapImbalance    float64 `json:"map_imbalance"`
	ReduceImbalance float64 `json:"reduce_imbalance"`
	// SplitKeys and Fragments are summed over the epochs: keys cut into
	// more than one partial, and the partials of all keys; Keys is the
	// sum of the epochs' distinct keys.
	SplitKeys int64 `json:"split_keys"`
	Fragments int64 `json:"fragments"`
	Keys      int64 `json:"keys"`
	// MapSeconds and ReduceSeconds sum the slowest map task and the
	// slowest reducer of each epoch under the cost model; Seconds is their
	// sum and EventsPerS the records over it.
	MapSeconds    float64 `json:"map_seconds"`
	ReduceSeconds float64 `json:"reduce_seconds"`
	Seconds       float64 `json:"seconds"`
	EventsPerS    float64 `json:"events_per_s"`
	// RatioToHash is EventsPerS over Hash's (0 when Hash is not simulated).
	RatioToHash float64 `json:"ratio_to_hash"`
}

func (c SimConfig) withDefaults() SimConfig {
	if c.Partitions == 0 {
		c.Partitions = 8
	}
	if c.Epochs == 0 {
		c.Epochs = 5
	}
	if c.EpochRecords == 0 {
		c.EpochRecords = 200_000
	}
	if c.Cost == (SimCost{}) {
		c.Cost = DefaultSimCost
	}
	if c.Strategies == nil {
		c.Strategies = partition.Strategies()
	}
	return c
}

// Simulate runs every strategy's partitioning over the same epochs of keys
// and returns one result per strategy, in the order of cfg.Strategies.
// It is deterministic.
func Simulate(cfg SimConfig) ([]SimResult, error) {
	cfg = cfg.withDefaults()
	switch {
	case cfg.Partitions < 1:
		return nil, fmt.Errorf("skew: %d partitions, want at least 1", cfg.Partitions)
	case cfg.Epochs < 1 || cfg.EpochRecords < 1:
		return nil, fmt.Errorf("skew: %d epochs of %d records, want at least 1 of at least 1", cfg.Epochs, cfg.EpochRecords)
	case cfg.Tokens != nil && len(cfg.Tokens) == 0:
		return nil, fmt.Errorf("skew: no tokens")
	}
	src, err := newKeySource(cfg)
	if err != nil {
		return nil, err
	}
	defer src.close()
	sims := make([]*strategySim, len(cfg.Strategies))
	for i, s := range cfg.Strategies {
		sims[i] = newStrategySim(s, cfg.Partitions, cfg.Cost)
	}
	var ep epoch
	ep.slotOf = make([]int32, len(src.hashes))
	for i := range ep.slotOf {
		ep.slotOf[i] = -1
	}
	ids := make([]int32, cfg.EpochRecords)
	for range cfg.Epochs {
		if err := src.next(ids); err != nil {
			return nil, err
		}
		ep.load(ids, src.hashes)
		for _, s := range sims {
			s.run(&ep)
		}
	}
	out := make([]SimResult, len(sims))
	var hash float64
	for i, s := range sims {
		out[i] = s.result(cfg.Epochs)
		if s.strategy == partition.Hash {
			hash = out[i].EventsPerS
		}
	}
	if hash > 0 {
		for i := range out {
			out[i].RatioToHash = out[i].EventsPerS / hash
		}
	}
	return out, nil
}

// epoch is one epoch's keys, numbered 0..n-1 by first appearance.
type epoch struct {
	seq    []int32  // the slot of each record, in arrival order
	counts []int32  // per slot
	hashes []uint64 // per slot
	ids    []int32  // the key id of each slot
	slotOf []int32  // key id → slot, -1 when absent
}

func (e *epoch) load(ids []int32, hashes []uint64) {
	for _, id := range e.ids {
		e.slotOf[id] = -1
	}
	e.seq, e.counts, e.hashes, e.ids = e.seq[:0], e.counts[:0], e.hashes[:0], e.ids[:0]
	for _, id := range ids {
		s := e.slotOf[id]
		if s < 0 {
			s = int32(len(e.counts))
			e.slotOf[id] = s
			e.counts = append(e.counts, 0)
			e.hashes = append(e.hashes, hashes[id])
			e.ids = append(e.ids, id)
		}
		e.counts[s]++
		e.seq = append(e.seq, s)
	}
}

// keySource yields key ids; hashes[id] is the key's hash.
type keySource struct {
	hashes []uint64
	next   func(ids []int32) error
	close  func()
}

func newKeySource(cfg SimConfig) (*keySource, error) {
	if cfg.Tokens != nil {
		return tokenSource(cfg.Tokens), nil
	}
	c := Config{Dist: cfg.Dist, S: cfg.S, Keys: cfg.Keys, Seed: cfg.Seed}.withDefaults()
	if c.Dist != "zipf" && c.Dist != "uniform" {
		return nil, fmt.Errorf("skew: unknown distribution %q (want zipf or uniform)", c.Dist)
	}
	if c.Keys < 1 || c.Keys > 1<<31-1 {
		return nil, fmt.Errorf("skew: %d keys, want 1 to 2^31-1", c.Keys)
	}
	c.Events = cfg.Epochs * cfg.EpochRecords
	r, err := c.Zipf().Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		return nil, fmt.Errorf("skew: %w", err)
	}
	ks := &keySource{hashes: make([]uint64, c.Keys), close: func() { r.Close() }}
	for k := range ks.hashes {
		ks.hashes[k] = partition.HashUint64(uint64(k))
	}
	var pending []gen.ZipfRecord
	ks.next = func(ids []int32) error {
		for i := range ids {
			if len(pending) == 0 {
				b, err := r.Read()
				if err != nil && err != io.EOF {
					return fmt.Errorf("skew: %w", err)
				}
				if len(b) == 0 {
					return fmt.Errorf("skew: the generator ended early")
				}
				pending = b
			}
			k := pending[0].Key
			if c.Dist == "uniform" {
				k = uniformKey(c.Seed, uint64(pending[0].Value), c.Keys)
			}
			ids[i] = int32(k)
			pending = pending[1:]
		}
		return nil
	}
	return ks, nil
}

// tokenSource numbers the distinct tokens by first appearance and yields
// them in order, cycling.
func tokenSource(tokens []string) *keySource {
	idOf := make(map[string]int32)
	ids := make([]int32, len(tokens))
	var hashes []uint64
	for i, t := range tokens {
		id, ok := idOf[t]
		if !ok {
			id = int32(len(hashes))
			idOf[t] = id
			hashes = append(hashes, partition.HashString(t))
		}
		ids[i] = id
	}
	pos := 0
	return &keySource{
		hashes: hashes,
		next: func(out []int32) error {
			for i := range out {
				out[i] = ids[pos]
				if pos++; pos == len(ids) {
					pos = 0
				}
			}
			return nil
		},
		close: func() {},
	}
}
