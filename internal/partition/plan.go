package partition

import (
	"fmt"
	"math"
)

// Frag is one fragment of a key in an epoch: Count of the key's records go
// to map block Block, and the partial aggregate that block makes of them
// goes to reducer Reducer.
type Frag struct {
	Block, Count, Reducer int32
}

// Plan is how one epoch's records are cut into map blocks and how the
// blocks' partials are assigned to reducers. Keys are numbered 0..len-1 by
// the caller (the epoch's distinct keys over all senders).
type Plan struct {
	Strategy Strategy
	Blocks   int
	Reducers int
	// The fragments of key g are Frags[Index[g]:Index[g+1]]: the key's
	// records, taken sender by sender and in arrival order within each
	// sender, fill them in that order. No two fragments of a key share a
	// block. len(Index) is the number of keys plus one.
	Index []int32
	Frags []Frag
	// SplitKeys is the number of keys with more than one fragment.
	SplitKeys int
	// BlockRecords and BlockKeys are the records and the distinct keys of
	// each block.
	BlockRecords []int64
	BlockKeys    []int64
	// ReducerLoad is what each reducer receives: one partial per fragment
	// when blocks pre-aggregate (Prompt), the raw records for Hash (which
	// does not pre-aggregate).
	ReducerLoad []int64
}

// Fragments returns the fragments of key g.
func (p *Plan) Fragments(g int) []Frag { return p.Frags[p.Index[g]:p.Index[g+1]] }

// Planner makes plans, reusing its memory from one epoch to the next. The
// Plan it returns is valid until its next call.
type Planner struct {
	plan Plan

	order, sortTmp, hist []int32 // sortByCount
	where                []int32 // per key: where it goes (see place)
	nfrag                []int32 // per hot key: its fragments
	hot                  []Frag  // the hot keys' fragments, key after key
	heap                 minHeap
	nextB, prevB         []int32 // the blocks with room, for the zig-zag
	multi                []int32 // keys with more than one fragment
	byLoad               []int32 // reducers by load
}

// Prompt plans an epoch with the frequency-aware greedy. counts[g] is the
// number of records of key g (all > 0). byCount, if not nil, lists the
// keys in non-increasing order of count (a Buffer's ByCount when there is
// a single sender); if nil the planner orders them itself in linear time
// (a counting sort on the counts; no comparison sort). blocks and
// reducers are at least 1.
func (p *Planner) Prompt(counts []int32, byCount []int32, blocks, reducers int) *Plan {
	return p.prompt(counts, byCount, nil, blocks, reducers)
}

// PromptOver plans the keys of counts as Prompt does, over blocks that
// already hold base[b] records each (records of other keys that go to
// block b's receiver as they are): the target of a block counts them,
// every key of counts is taken as hot (spread over the blocks with the
// most room, split when it does not fit), and BlockRecords includes base.
func (p *Planner) PromptOver(counts, byCount []int32, base []int64, blocks, reducers int) *Plan {
	if len(base) != blocks {
		panic(fmt.Sprintf("partition: Prompt plan over %d blocks with %d base loads", blocks, len(base)))
	}
	return p.prompt(counts, byCount, base, blocks, reducers)
}

// Hash plans an epoch by key hash: every key whole, in block
// HashIndex(hash, blocks), its partial to reducer HashIndex(hash,
// reducers). ReducerLoad counts raw records.
func (p *Planner) Hash(counts []int32, hashes []uint64, blocks, reducers int) *Plan {
	if len(hashes) != len(counts) {
		panic(fmt.Sprintf("partition: Hash plan with %d counts and %d hashes", len(counts), len(hashes)))
	}
	pl := p.begin(Hash, len(counts), blocks, reducers)
	pl.Frags = resize(pl.Frags, len(counts))
	for g, c := range counts {
		checkCount(g, c)
		h := hashes[g]
		b, r := HashIndex(h, blocks), HashIndex(h, reducers)
		pl.Index[g] = int32(g)
		pl.Frags[g] = Frag{Block: int32(b), Count: c, Reducer: int32(r)}
		pl.BlockRecords[b] += int64(c)
		pl.BlockKeys[b]++
		pl.ReducerLoad[r] += int64(c)
	}
	pl.Index[len(counts)] = int32(len(counts))
	return pl
}

// begin resets the planner's plan for an epoch of keys keys.
func (p *Planner) begin(s Strategy, keys, blocks, reducers int) *Plan {
	if blocks < 1 || reducers < 1 {
		panic(fmt.Sprintf("partition: plan with %d blocks and %d reducers", blocks, reducers))
	}
	if keys >= math.MaxInt32 {
		panic(fmt.Sprintf("partition: plan with %d keys", keys))
	}
	pl := &p.plan
	pl.Strategy, pl.Blocks, pl.Reducers = s, blocks, reducers
	pl.Index = resize(pl.Index, keys+1)
	pl.Index[0] = 0
	pl.Frags = pl.Frags[:0]
	pl.SplitKeys = 0
	pl.BlockRecords = zeroed(pl.BlockRecords, blocks)
	pl.BlockKeys = zeroed(pl.BlockKeys, blocks)
	pl.ReducerLoad = zeroed(pl.ReducerLoad, reducers)
	return pl
}

func zeroed(s []int64, n int) []int64 {
	s = resize(s, n)
	clear(s)
	return s
}

func checkCount(g int, c int32) {
	if c <= 0 {
		panic(fmt.Sprintf("partition: key %d has %d records; want > 0", g, c))
	}
}

// HashIndex maps a key hash to one of n: the owner of the key's key group
// among n instances, for the default number of key groups, so that Hash
// agrees with the engine's key-group routing.
func HashIndex(h uint64, n int) int {
	return Owner(KeyGroupOf(h, DefaultKeyGroups), DefaultKeyGroups, n)
}

// RoundRobinBlock returns the block of the record at position pos (0-based,
// in arrival order over the whole epoch) of an epoch of n records cut into
// blocks of consecutive records.
func RoundRobinBlock(pos, n int64, blocks int) int {
	if n <= 0 {
		return 0
	}
	return int(pos * int64(blocks) / n)
}

// TwoChoices chooses blocks with two choices per key, from the sender's own count
// of the records it has sent to each block.
type TwoChoices struct {
	load []int64
}

// NewTwoChoices returns a chooser over blocks.
func NewTwoChoices(blocks int) *TwoChoices {
	p := &TwoChoices{}
	p.Reset(blocks)
	return p
}

// Reset forgets the loads and sets the number of blocks.
func (p *TwoChoices) Reset(blocks int) {
	if blocks < 1 {
		panic(fmt.Sprintf("partition: TwoChoices over %d blocks", blocks))
	}
	p.load = zeroed(p.load, blocks)
}

// Choose returns the block of a record whose key has hash h: the less
// loaded of the key's two candidates (two independent functions of h,
// distinct when blocks > 1), and counts the record there.
func (p *TwoChoices) Choose(h uint64) int {
	a, b := candidates(h, len(p.load))
	if p.load[b] < p.load[a] {
		a = b
	}
	p.load[a]++
	return a
}

// candidates returns a key's two blocks among n: the first by range
// reduction of h (over all n blocks, unlike HashIndex, which is limited to
// the default number of key groups), the second likewise from a remix of
// h over the n-1 other blocks, so that the two differ when n > 1 and the
// second is uniform over the rest.
func candidates(h uint64, n int) (a, b int) {
	if n == 1 {
		return 0, 0
	}
	a = int(KeyGroupOf(h, n))
	b = int(KeyGroupOf(mix(h^prime3, prime4), n-1))
	if b >= a {
		b++
	}
	return a, b
}
