package transport

import (
	"math/bits"
	"sync"
)

// Buffers are pooled by size class: class k holds buffers of capacity at
// least 1<<k, from 64 bytes to MaxPayload. A class keeps at most
// poolBytes of buffers (at least one, at most poolCount), so an idle pool
// holds a bounded amount of memory.
const (
	minClass  = 6
	maxClass  = 26 // 1<<26 == MaxPayload
	poolBytes = 16 << 20
	poolCount = 512
)

// pool is shared by all networks of the process: the in-process network
// hands buffers from one "process" to another.
var pool bufPool

type bufPool struct {
	classes [maxClass + 1]freeList
}

// freeList is a stack of buffers. Unlike sync.Pool it stores slices
// without boxing them, so Put does not allocate.
type freeList struct {
	mu   sync.Mutex
	bufs [][]byte
}

// getBuf returns a buffer of length n from the pool.
func getBuf(n int) []byte {
	k := classOf(n)
	if k > maxClass {
		return make([]byte, n)
	}
	l := &pool.classes[k]
	l.mu.Lock()
	if last := len(l.bufs) - 1; last >= 0 {
		b := l.bufs[last]
		l.bufs[last] = nil
		l.bufs = l.bufs[:last]
		l.mu.Unlock()
		return b[:n]
	}
	l.mu.Unlock()
	return make([]byte, n, 1<<k)
}

// putBuf gives b back to the pool. b must not be used afterwards.
func putBuf(b []byte) {
	c := cap(b)
	if c < 1<<minClass {
		return
	}
	k := bits.Len(uint(c)) - 1 // the largest class b can serve
	if k > maxClass {
		k = maxClass
	}
	keep := min(max(poolBytes>>k, 1), poolCount)
	l := &pool.classes[k]
	l.mu.Lock()
	if len(l.bufs) < keep {
		l.bufs = append(l.bufs, b[:0])
	}
	l.mu.Unlock()
}

// classOf returns the smallest class whose buffers hold n bytes.
func classOf(n int) int {
	if n <= 1<<minClass {
		return minClass
	}
	return bits.Len(uint(n - 1))
}
