package checkpoint

import (
	"math"
	"math/bits"
	"runtime/debug"
	"sync"
)

// Keyed state is saved and handed over by key group, in blobs that live
// from a snapshot until the part holding them is written (or until the
// new owner has read them). Allocated afresh each time, a checkpoint of a
// large state takes as much new memory as the state, and the pages the
// collector gave back to the system fault in again on every checkpoint:
// on a 2-core virtual machine, copying 1 GiB into new memory took 5 s
// and into memory in use 80 ms. So the buffers come from a pool: Buffer
// takes one, PooledBlob marks the blob that holds one, and Recycle (or
// Release, for a scratch buffer) gives it back.

// bufferPool holds free buffers by size class.
type bufferPool struct {
	mu   sync.Mutex
	free map[int][]freeBuffer
	held int64
	seq  uint64
}

// freeBuffer is a buffer in the pool, with the order it came back in.
type freeBuffer struct {
	b   []byte
	seq uint64
}

var blobBuffers = bufferPool{free: map[int][]freeBuffer{}}

// poolFloor is the smallest buffer worth pooling: smaller ones come from
// the allocator's caches, which are warm.
const poolFloor = 32 << 10

// nearClasses is how many classes above a request's Buffer also takes
// from: a key group's blob varies in size from one checkpoint to the next,
// and a buffer of a class or two more wastes at most a quarter.
const nearClasses = 2

// sizeClass returns n's class and the capacity of the class's buffers:
// classes are a sixteenth of a power of two apart, so a buffer holds
// at most an eighth more than asked for.
func sizeClass(n int) (class, size int) {
	shift := max(0, bits.Len(uint(n-1))-4)
	top := (n - 1) >> shift
	return shift<<4 | top&15, (top + 1) << shift
}

// classBelow returns the class and size of the largest class whose size
// is at most c.
func classBelow(c int) (class, size int) {
	shift := max(0, bits.Len(uint(c))-4)
	return sizeClass((c >> shift) << shift)
}

// next returns the class and size of the class after the one of size s.
func next(s int) (class, size int) { return sizeClass(s + 1) }

// Buffer returns a buffer of length n: a free one of n's class, or of one
// of the nearClasses above it, if the pool has one, else a new one.
func Buffer(n int) []byte {
	if n < poolFloor {
		return make([]byte, n)
	}
	class, size := sizeClass(n)
	p := &blobBuffers
	p.mu.Lock()
	c, s := class, size
	for range nearClasses + 1 {
		if l := p.free[c]; len(l) > 0 {
			b := l[len(l)-1].b
			l[len(l)-1] = freeBuffer{}
			p.free[c] = l[:len(l)-1]
			p.held -= int64(cap(b))
			p.mu.Unlock()
			return b[:n]
		}
		c, s = next(s)
	}
	p.mu.Unlock()
	return make([]byte, n, size)
}

// PooledBlob returns a blob of op's key group kg holding a copy of data in
// a buffer of the pool.
func PooledBlob(op string, kg uint32, data []byte) StateBlob {
	b := Buffer(len(data))
	copy(b, data)
	return StateBlob{Operator: op, KeyGroup: kg, Data: b, Pooled: len(b) >= poolFloor}
}

// OwnedBlob returns a blob of op's key group kg whose data is b, a
// buffer of the pool (Buffer) that the blob holds from now on: the blob
// is marked Pooled if b is large enough to go back.
func OwnedBlob(op string, kg uint32, b []byte) StateBlob {
	return StateBlob{Operator: op, KeyGroup: kg, Data: b, Pooled: cap(b) >= poolFloor}
}

// Fits reports whether b fills enough of its capacity to be kept as a
// blob (OwnedBlob) rather than copied out at its size (PooledBlob): at
// most a quarter of it would be idle.
func Fits(b []byte) bool { return len(b) >= cap(b)-cap(b)/4 }

// Recycle gives the buffers of blobs marked Pooled back to the pool and
// unmarks them; the caller must hold no other reference to them.
func Recycle(blobs []StateBlob) {
	for i := range blobs {
		if blobs[i].Pooled {
			Release(blobs[i].Data)
			blobs[i].Data, blobs[i].Pooled = nil, false
		}
	}
}

// Release gives buffer b back to the pool; the caller must hold no other
// reference to it. The pool keeps at most a quarter of the process's soft
// memory limit (a quarter of 4 GiB when there is none): past it, the
// buffers that came back first go to the collector.
func Release(b []byte) {
	if cap(b) < poolFloor {
		return
	}
	class, size := classBelow(cap(b))
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 {
		limit = 4 << 30
	}
	limit /= 4
	if int64(size) > limit {
		return
	}
	p := &blobBuffers
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.held+int64(size) > limit {
		p.evictOldest()
	}
	p.seq++
	p.free[class] = append(p.free[class], freeBuffer{b: b[:0:size], seq: p.seq})
	p.held += int64(size)
}

// evictOldest drops the free buffer that came back first. Each class's
// list is in the order its buffers came back.
func (p *bufferPool) evictOldest() {
	oldest := -1
	for c, l := range p.free {
		if len(l) > 0 && (oldest < 0 || l[0].seq < p.free[oldest][0].seq) {
			oldest = c
		}
	}
	l := p.free[oldest]
	p.held -= int64(cap(l[0].b))
	l[0] = freeBuffer{}
	if len(l) == 1 {
		delete(p.free, oldest)
	} else {
		p.free[oldest] = l[1:]
	}
}
