package partition

import "fmt"

// Strategy is how the records of one epoch at a keyed exchange are cut into
// map blocks and how the blocks' partial aggregates are assigned to
// reducers.
type Strategy uint8

const (
	// Hash keeps every key whole: block and reducer are a function of the
	// key's hash (Flink's keyBy, Spark's hash partitioning).
	Hash Strategy = iota
	// RoundRobin cuts blocks by arrival, whatever the keys (Spark
	// Streaming's time-based blocks); reducers by key hash.
	RoundRobin
	// PKG sends each record to the less loaded of its key's two candidate
	// blocks, by the sender's own load estimate (Partial Key Grouping,
	// Nasir et al., ICDE 2015); reducers by key hash.
	PKG
	// Prompt cuts blocks with the frequency-aware greedy of Prompt
	// (Abdelhamid et al., SIGMOD 2020) and assigns reducers by load.
	Prompt
)

var strategyNames = [...]string{Hash: "hash", RoundRobin: "roundrobin", PKG: "pkg", Prompt: "prompt"}

func (s Strategy) String() string {
	if int(s) < len(strategyNames) {
		return strategyNames[s]
	}
	return fmt.Sprintf("Strategy(%d)", s)
}

// Strategies lists every strategy, in declaration order.
func Strategies() []Strategy { return []Strategy{Hash, RoundRobin, PKG, Prompt} }

// ParseStrategy parses a strategy's name.
func ParseStrategy(name string) (Strategy, error) {
	for i, n := range strategyNames {
		if n == name {
			return Strategy(i), nil
		}
	}
	return 0, fmt.Errorf("partition: unknown strategy %q (want hash, roundrobin, pkg or prompt)", name)
}
