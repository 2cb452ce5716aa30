package engine

import (
	"bytes"
	"cmp"
	"log/slog"
	"math"
	"slices"
	"sync"
)

// ackBook holds this process's source positions that checkpoints saved
// and that their readers want acknowledged (dataflow.Acknowledged) once
// a checkpoint holding them is complete.
type ackBook struct {
	mu      sync.Mutex
	pending []ackEntry
	failed  map[ackKey]string // per share, the last failure's error, logged once
}

// ackEntry is one saved position: checkpoint n holds pos, the position
// of share (or instance) at of source op, which ack acknowledges.
type ackEntry struct {
	n   uint64
	key ackKey
	ack func([]byte) error
	pos []byte
}

type ackKey struct {
	op string
	at int
}

// add notes that checkpoint n holds pos.
func (b *ackBook) add(n uint64, op string, at int, ack func([]byte) error, pos []byte) {
	b.mu.Lock()
	b.pending = append(b.pending, ackEntry{n: n, key: ackKey{op, at}, ack: ack, pos: bytes.Clone(pos)})
	b.mu.Unlock()
}

// due removes the entries of checkpoints up to n and returns, per share,
// the newest of them, in checkpoint order.
func (b *ackBook) due(n uint64) []ackEntry {
	b.mu.Lock()
	defer b.mu.Unlock()
	newest := map[ackKey]int{}
	kept := b.pending[:0]
	var out []ackEntry
	for _, e := range b.pending {
		if e.n > n {
			kept = append(kept, e)
			continue
		}
		if i, ok := newest[e.key]; !ok {
			newest[e.key] = len(out)
			out = append(out, e)
		} else if e.n >= out[i].n {
			out[i] = e
		}
	}
	clear(b.pending[len(kept):])
	b.pending = kept
	// Oldest first: a share that moved between instances is acknowledged
	// last where it stands last.
	slices.SortStableFunc(out, func(a, b ackEntry) int { return cmp.Compare(a.n, b.n) })
	return out
}

// acknowledge acknowledges the positions checkpoints up to n saved (all
// of them if n is MaxUint64, at the end of a job that finished).
func (b *ackBook) acknowledge(n uint64, log *slog.Logger) {
	for _, e := range b.due(n) {
		err := e.ack(e.pos)
		b.mu.Lock()
		switch {
		case err == nil:
			delete(b.failed, e.key)
		case err.Error() != b.failed[e.key]:
			if b.failed == nil {
				b.failed = map[ackKey]string{}
			}
			b.failed[e.key] = err.Error()
			if n == math.MaxUint64 {
				log.Warn("weir: a source could not acknowledge what it read by the job's end", "source", e.key.op, "err", err)
			} else {
				log.Warn("weir: a source could not acknowledge what it read by a checkpoint", "source", e.key.op, "checkpoint", n, "err", err)
			}
		}
		b.mu.Unlock()
	}
}
