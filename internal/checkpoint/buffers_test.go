package checkpoint

import (
	"runtime/debug"
	"testing"
)

func TestSizeClass(t *testing.T) {
	for n := poolFloor; n < poolFloor<<6; n += 997 {
		class, size := sizeClass(n)
		if size < n || size > n+n/8+1 {
			t.Fatalf("sizeClass(%d) = size %d: want in [%d, %d]", n, size, n, n+n/8+1)
		}
		// A buffer of the class's size is in the same class.
		if c2, s2 := sizeClass(size); c2 != class || s2 != size {
			t.Fatalf("sizeClass(%d) = %d, %d; of its size %d: %d, %d", n, class, size, size, c2, s2)
		}
		// The largest class at most n.
		if c3, s3 := classBelow(n); s3 > n || s3 <= n-n/8-1 || (s3 == n) != (size == n) || (s3 == n && c3 != class) {
			t.Fatalf("classBelow(%d) = %d, %d (sizeClass: %d, %d)", n, c3, s3, class, size)
		}
	}
}

// fresh empties the pool for a test, and restores it after.
func fresh(t *testing.T) {
	saved := blobBuffers.free
	blobBuffers.free, blobBuffers.held = map[int][]freeBuffer{}, 0
	t.Cleanup(func() { blobBuffers.free, blobBuffers.held = saved, 0 })
}

func same(a, b []byte) bool { return &a[:1][0] == &b[:1][0] }

func TestBufferRecycle(t *testing.T) {
	fresh(t)
	data := make([]byte, 100<<10)
	for i := range data {
		data[i] = byte(i)
	}
	b := PooledBlob("op", 3, data)
	if !b.Pooled || string(b.Data) != string(data) {
		t.Fatalf("PooledBlob: pooled %v, data equal %v", b.Pooled, string(b.Data) == string(data))
	}
	buf := b.Data
	blobs := []StateBlob{b}
	Recycle(blobs)
	if blobs[0].Data != nil || blobs[0].Pooled {
		t.Fatal("Recycle left the blob its buffer")
	}
	// The next buffer of the same class is the one given back, at the
	// length asked for.
	got := Buffer(len(data) - 5)
	if len(got) != len(data)-5 || !same(got, buf) {
		t.Fatalf("Buffer after Recycle: len %d, same memory %v", len(got), same(got, buf))
	}
	// A blob not marked Pooled is never taken.
	other := StateBlob{Data: make([]byte, 100<<10)}
	Recycle([]StateBlob{other})
	if n := Buffer(100 << 10); same(n, other.Data) {
		t.Fatal("Recycle took a buffer not marked Pooled")
	}
	// Small blobs are not pooled.
	if s := PooledBlob("op", 1, []byte("abc")); s.Pooled {
		t.Fatal("a 3-byte blob is marked Pooled")
	}
}

func TestReleaseAnyCapacity(t *testing.T) {
	fresh(t)
	// A scratch buffer grown by append has any capacity: it serves
	// requests up to the largest class below it.
	b := append([]byte(nil), make([]byte, 300<<10+12345)...)
	Release(b)
	_, below := classBelow(cap(b))
	if got := Buffer(below); !same(got, b) || len(got) != below {
		t.Fatalf("Buffer(%d) after Release of cap %d: same %v", below, cap(b), same(got, b))
	}
	// A buffer of a class or two more serves a request, not one of three.
	for k, want := range []bool{true, true, true, false} {
		_, s := sizeClass(200 << 10)
		for range k {
			_, s = next(s)
		}
		x := make([]byte, s)
		Release(x)
		got := Buffer(200 << 10)
		if same(got, x) != want {
			t.Fatalf("a buffer %d classes up: taken %v, want %v", k, same(got, x), want)
		}
		if !want {
			Buffer(s) // empty the pool again
		}
	}
}

func TestReleaseEvictsOldest(t *testing.T) {
	fresh(t)
	old := debug.SetMemoryLimit(4 << 20) // the pool keeps 1 MiB
	defer debug.SetMemoryLimit(old)
	var bufs [][]byte
	for i := range 5 {
		b := make([]byte, 256<<10+i*(64<<10)) // five classes
		_, s := classBelow(cap(b))
		bufs = append(bufs, b[:0:s])
		Release(b)
	}
	if blobBuffers.held > 1<<20 {
		t.Fatalf("the pool holds %d bytes, over its limit of 1 MiB", blobBuffers.held)
	}
	// The first ones went; the last is there.
	if got := Buffer(cap(bufs[4])); !same(got, bufs[4]) {
		t.Fatal("the newest buffer is not in the pool")
	}
	if got := Buffer(cap(bufs[0])); same(got, bufs[0]) {
		t.Fatal("the oldest buffer is still in the pool")
	}
}
