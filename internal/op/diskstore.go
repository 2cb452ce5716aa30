package op

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/weirstream/weir/internal/codec"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/state"
)

// keyedStore is where a keyed operator instance keeps its state: a table in
// memory (*state.Table) or a backend's store (*diskStore).
type keyedStore[K comparable, V any] interface {
	Upsert(h uint64, k K) *V
	Delete(h uint64, k K)
	Range(f func(h uint64, k K, v *V) bool)
	DeleteFunc(del func(k K, v *V) bool)
}

// flusher is a store that writes what an epoch changed at its end.
type flusher interface{ Flush() error }

// StoreName is what the stores of operator op's instances are named
// after in a state backend: two keyed operators whose StoreNames are the
// same cannot keep their state in one.
func StoreName(op string) string {
	return strings.NewReplacer("/", "_", string(filepath.Separator), "_").Replace(op)
}

// newStore makes the state store of operator op's instance inst: the
// job's backend if it has one, else a table in memory.
func newStore[K comparable, V any](j *dataflow.Graph, op string, inst int) (keyedStore[K, V], error) {
	if j.Cfg.Backend == nil {
		return newKeyedTable[K, V](), nil
	}
	name := fmt.Sprintf("%s-%d-process-%d", StoreName(op), inst, j.Process())
	// An instance that starts again opens its store again: its earlier
	// run's, which handed every key group over, is closed first.
	if err := j.ClosePrevious(name); err != nil {
		return nil, fmt.Errorf("weir: %s#%d: closing its earlier store: %w", op, inst, err)
	}
	s, err := openDiskStore[K, V](j.Cfg.Backend, name, j)
	if err != nil {
		return nil, fmt.Errorf("weir: %s#%d: %w", op, inst, err)
	}
	j.CloseAtEndNamed(name, s)
	return s, nil
}

// diskStore is a keyed state table in a backend's byte store. Keys are
// laid out as the key group (4 bytes, big-endian), the key's hash (8
// bytes) and the key's encoding, so a key group is a contiguous range.
// Values are encoded with their codec. It is used by one goroutine; a
// store's failure panics, which fails the job naming the operator.
type diskStore[K comparable, V any] struct {
	db    state.ByteStore
	what  string
	kc    codec.Codec[K]
	vc    codec.Codec[V]
	cache *state.Table[K, V] // what this epoch touched
	kbuf  []byte
	vbuf  []byte
	one   [1]K
	onev  [1]V
	close sync.Once
}

func openDiskStore[K comparable, V any](b state.Backend, name string, j *dataflow.Graph) (*diskStore[K, V], error) {
	kc, err := codec.For[K]()
	if err != nil {
		return nil, err
	}
	vc, err := codec.For[V]()
	if err != nil {
		return nil, err
	}
	db, err := b.Open(name, j.Logger())
	if err != nil {
		return nil, err
	}
	return &diskStore[K, V]{db: db, what: b.String(), kc: kc, vc: vc, cache: newKeyedTable[K, V]()}, nil
}

func (s *diskStore[K, V]) Fail(err error) {
	panic(fmt.Sprintf("weir: keyed state in %s: %v", s.what, err))
}

func (s *diskStore[K, V]) key(h uint64, k K) []byte {
	b := binary.BigEndian.AppendUint32(s.kbuf[:0], uint32(partition.KeyGroupOf(h, 1<<15)))
	b = binary.BigEndian.AppendUint64(b, h)
	s.one[0] = k
	b = s.kc.Append(b, s.one[:])
	s.kbuf = b
	return b
}

// Upsert returns the value of k, read from the store into the epoch's
// cache the first time the epoch touches it.
func (s *diskStore[K, V]) Upsert(h uint64, k K) *V {
	v, _ := s.UpsertKey(h, k)
	return v
}

// UpsertKey is Upsert that also returns the key as the epoch's cache
// stores it (see state.Table.UpsertKey).
func (s *diskStore[K, V]) UpsertKey(h uint64, k K) (*V, K) {
	n := s.cache.Len()
	v, sk := s.cache.UpsertKey(h, k)
	if s.cache.Len() == n {
		return v, sk // touched already this epoch
	}
	_, err := s.db.Get(s.key(h, k), func(data []byte) {
		vs, derr := s.vc.Decode(data, nil)
		if derr != nil || len(vs) != 1 {
			s.Fail(fmt.Errorf("a stored value does not decode: %v", derr))
		}
		*v = vs[0]
	})
	if err != nil {
		s.Fail(err)
	}
	return v, sk
}

func (s *diskStore[K, V]) Delete(h uint64, k K) {
	s.cache.Delete(h, k)
	if err := s.db.Delete(s.key(h, k)); err != nil {
		s.Fail(err)
	}
}

// Flush writes the epoch's values and forgets them.
func (s *diskStore[K, V]) Flush() error {
	if s.cache.Len() == 0 {
		return nil
	}
	err := s.db.Write(func(set func(k, v []byte), _ func(k []byte)) {
		s.cache.Range(func(h uint64, k K, v *V) bool {
			s.onev[0] = *v
			s.vbuf = s.vc.Append(s.vbuf[:0], s.onev[:])
			set(s.key(h, k), s.vbuf)
			return true
		})
	})
	s.cache.Clear()
	return err
}

// scan calls f with every stored entry, after writing the epoch's cache;
// keep says whether to keep an entry (its value re-written) or delete it.
func (s *diskStore[K, V]) scan(f func(h uint64, k K, v *V) (keep, stop bool)) {
	if err := s.Flush(); err != nil {
		s.Fail(err)
	}
	err := s.db.Rewrite(func(key, val []byte) ([]byte, bool, bool) {
		h := binary.BigEndian.Uint64(key[4:12])
		ks, err1 := s.kc.Decode(key[12:], nil)
		vs, err2 := s.vc.Decode(val, nil)
		if err1 != nil || err2 != nil || len(ks) != 1 || len(vs) != 1 {
			s.Fail(fmt.Errorf("a stored entry does not decode: %v %v", err1, err2))
		}
		keep, stop := f(h, ks[0], &vs[0])
		if !keep {
			return nil, false, stop
		}
		s.onev[0] = vs[0]
		s.vbuf = s.vc.Append(s.vbuf[:0], s.onev[:])
		return s.vbuf, true, stop
	})
	if err != nil {
		s.Fail(err)
	}
}

func (s *diskStore[K, V]) Range(f func(h uint64, k K, v *V) bool) {
	s.scan(func(h uint64, k K, v *V) (bool, bool) { return true, !f(h, k, v) })
}

func (s *diskStore[K, V]) DeleteFunc(del func(k K, v *V) bool) {
	s.scan(func(_ uint64, k K, v *V) (bool, bool) { return !del(k, v), false })
}

// Close closes the store.
func (s *diskStore[K, V]) Close() error {
	var err error
	s.close.Do(func() { err = s.db.Close() })
	return err
}
