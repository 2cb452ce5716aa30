package checkpoint

import (
	"bytes"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// readsFS records the files read whole and in ranges.
type readsFS struct {
	FS
	mu        sync.Mutex
	whole     []string
	ranged    []string
	partBytes int64 // asked of parts by ReadRange
}

func (r *readsFS) ReadFile(name string) ([]byte, error) {
	r.mu.Lock()
	r.whole = append(r.whole, filepath.Base(filepath.Dir(name))+"/"+filepath.Base(name))
	r.mu.Unlock()
	return r.FS.ReadFile(name)
}

func (r *readsFS) ReadRange(name string, off int64, n int) ([]byte, error) {
	r.mu.Lock()
	r.ranged = append(r.ranged, filepath.Base(filepath.Dir(name))+"/"+filepath.Base(name))
	if strings.HasSuffix(name, ".bin") {
		r.partBytes += int64(n)
	}
	r.mu.Unlock()
	return r.FS.ReadRange(name, off, n)
}

// parts returns the part files read (whole or in ranges) since the last
// call, each once, and forgets them.
func (r *readsFS) parts() (whole, ranged []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pick := func(names []string) []string {
		var out []string
		for _, n := range names {
			if strings.HasSuffix(n, ".bin") && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	whole, ranged = pick(r.whole), pick(r.ranged)
	r.whole, r.ranged = nil, nil
	return whole, ranged
}

func TestWritePartWritesEncodePartsBytes(t *testing.T) {
	forEachFS(t, func(t *testing.T, e *env) {
		p := samplePart(3, 1, 2, 40, 3000)
		p.State = append(p.State, StateBlob{Operator: "zz-big", KeyGroup: 9, Data: bytes.Repeat([]byte("0123456789"), 300_000)})
		if err := e.s.WritePart(p); err != nil {
			t.Fatal(err)
		}
		want, x, err := IndexPart(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := e.fs.ReadFile(e.path(3, partName(1))); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("the part file (%d bytes, %v) is not EncodePart's %d bytes", len(got), err, len(want))
		}
		if got := mustIndex(t, e, 3, 1); !reflect.DeepEqual(got, x) {
			t.Fatalf("index %+v, want IndexPart's %+v", got, x)
		}
	})
}

// TestWritePartHoldsNoCopy writes a part of 64 MiB: it allocates a small
// fraction of that (the write buffer), not a copy of the part.
func TestWritePartHoldsNoCopy(t *testing.T) {
	s, err := Open(OSFS(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	const size = 64 << 20
	p := Part{Checkpoint: 1, Epoch: 1, Processes: 1}
	for kg := range 16 {
		p.State = append(p.State, StateBlob{Operator: "op", KeyGroup: uint32(kg), Data: bytes.Repeat([]byte{byte(kg)}, size/16)})
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := s.WritePart(p); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > size/8 {
		t.Fatalf("WritePart of a %d-byte part allocated %d bytes", size, got)
	}
}

func TestCompleteReadsIndexesNotParts(t *testing.T) {
	m := MemFS()
	r := &readsFS{FS: m}
	e := newEnv(t, r, "/ckp", m)
	for i := range 3 {
		if err := e.s.WritePart(samplePart(1, i, 3, 4, 64)); err != nil {
			t.Fatal(err)
		}
	}
	r.parts()
	if ok, err := e.s.Complete(1, 3); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if whole, _ := r.parts(); len(whole) != 0 {
		t.Fatalf("Complete read %v whole", whole)
	}
	// The manifest records each part's size and checksum, as reading the
	// parts whole does.
	if n, ok := e.latest(t); !ok || n != 1 {
		t.Fatalf("Latest = %d, %v", n, ok)
	}
}

// TestCompleteWithoutMatchingIndex: a part whose index is missing (as an
// older version wrote them) or describes another write of the part is
// read whole, and the manifest records the part that is there.
func TestCompleteWithoutMatchingIndex(t *testing.T) {
	forEachFS(t, func(t *testing.T, e *env) {
		for i := range 3 {
			if err := e.s.WritePart(samplePart(1, i, 3, 4, 64)); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.fs.Remove(e.path(1, indexName(0))); err != nil {
			t.Fatal(err)
		}
		other := samplePart(1, 2, 3, 5, 70) // process 2's part of another run
		b, err := EncodePart(other)
		if err != nil {
			t.Fatal(err)
		}
		replace(t, e, e.path(1, partName(2)), b) // its index is the first write's
		if ok, err := e.s.Complete(1, 3); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if got, err := e.s.ReadPart(1, 2); err != nil || !reflect.DeepEqual(got, normalize(other)) {
			t.Fatalf("ReadPart of the replaced part: %v", err)
		}
		if n, ok := e.latest(t); !ok || n != 1 {
			t.Fatalf("Latest = %d, %v", n, ok)
		}
	})
}

// readsEnv returns an env over a MemFS whose reads are recorded, with
// checkpoints 1 to 3 of 2 processes written.
func readsEnv(t *testing.T) (*env, *readsFS, *Mem) {
	m := MemFS()
	r := &readsFS{FS: m}
	e := newEnv(t, r, "/ckp", m)
	for n := uint64(1); n <= 3; n++ {
		e.write(t, n, 2)
	}
	return e, r, m
}

// TestPruneVerifiesOnce: Prune reads each complete checkpoint's parts the
// first time it meets it, a piece at a time, and never again; a newer
// checkpoint whose part is damaged before that first time does not count
// as complete, so the older ones it would displace stay.
func TestPruneVerifiesOnce(t *testing.T) {
	e, r, m := readsEnv(t)
	r.parts()
	prune := func(keep int, wantRanged []string, wantLeft []uint64) {
		t.Helper()
		e.forgetWritten() // as a store that did not write them: see TestPruneTrustsOwnParts
		if err := e.s.Prune(keep); err != nil {
			t.Fatal(err)
		}
		whole, ranged := r.parts()
		if len(whole) != 0 || !slices.Equal(ranged, wantRanged) {
			t.Fatalf("Prune(%d) read %v whole and %v in pieces, want none and %v", keep, whole, ranged, wantRanged)
		}
		if ns, _ := e.s.list(); !slices.Equal(ns, wantLeft) {
			t.Fatalf("after Prune(%d): %v, want %v", keep, ns, wantLeft)
		}
	}
	parts := func(ns ...int) []string {
		var out []string
		for _, n := range ns {
			for i := range 2 {
				out = append(out, filepath.Base(e.s.chkDir(uint64(n)))+"/"+partName(i))
			}
		}
		return out
	}
	prune(2, parts(2, 3), []uint64{2, 3})
	prune(2, nil, []uint64{2, 3})
	e.write(t, 4, 2)
	r.parts()
	prune(2, parts(4), []uint64{3, 4})
	e.write(t, 5, 2)
	if err := m.FlipBit(e.path(5, partName(1)), 8*40+1); err != nil {
		t.Fatal(err)
	}
	r.parts()
	prune(2, parts(5), []uint64{3, 4, 5}) // 5 is corrupt: 3 and 4 stay
	if n, ok := e.latest(t); !ok || n != 4 {
		t.Fatalf("Latest = %d, %v", n, ok)
	}
	if len(e.s.verified) != 2 {
		t.Fatalf("%d checkpoints remembered as verified, want 2", len(e.s.verified))
	}
}

// TestPruneTrustsOwnParts: parts this store wrote, with the size and
// checksum their manifest records, are checked by their ends and length
// only, not read back whole; one that was replaced by a shorter file
// afterwards is still found and does not count.
func TestPruneTrustsOwnParts(t *testing.T) {
	e, r, m := readsEnv(t)
	var whole int64
	for n := uint64(1); n <= 3; n++ {
		for i := range 2 {
			whole += int64(e.size(t, e.path(n, partName(i))))
		}
	}
	r.partBytes = 0
	if err := e.s.Prune(3); err != nil {
		t.Fatal(err)
	}
	// Each of the 6 parts: its header's piece, its trailer and one byte
	// past its end.
	if most := int64(6 * (maxPartHeader + trailerLen + 1)); r.partBytes > most || r.partBytes*2 > whole {
		t.Fatalf("Prune read %d bytes of parts, want at most %d (they hold %d)", r.partBytes, most, whole)
	}
	e.write(t, 4, 2)
	b, err := m.ReadFile(e.path(4, partName(1)))
	if err != nil {
		t.Fatal(err)
	}
	replace(t, e, e.path(4, partName(1)), b[:len(b)-9])
	if err := e.s.Prune(2); err != nil {
		t.Fatal(err)
	}
	if ns, _ := e.s.list(); !slices.Equal(ns, []uint64{2, 3, 4}) {
		t.Fatalf("after Prune(2) with 4 truncated: %v, want [2 3 4]", ns)
	}
}
