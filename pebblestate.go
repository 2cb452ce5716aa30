package weir

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/weirstream/weir/internal/codec"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/state"
)

// PebbleState keeps the keyed state of windows and Process on disk, in a
// Pebble database per operator instance under dir, instead of in memory:
// for state larger than memory. An instance keeps in memory only the keys
// its current epoch touches, and writes them back at the epoch's end; a
// window firing reads its keys from disk. Checkpoints save and restore the
// state by key group as with the default in-memory tables (the databases
// themselves start empty on every run). Keys, values and accumulators
// must have codecs (see Codec). dir must not be empty.
func PebbleState(dir string) JobOption {
	return func(c *jobConfig) { c.pebbleDir, c.pebbleSet = dir, true }
}

// keyedStore is where a keyed operator instance keeps its state: a table in
// memory (*state.Table) or a Pebble database (*pebbleStore).
type keyedStore[K comparable, V any] interface {
	Upsert(h uint64, k K) *V
	Delete(h uint64, k K)
	Range(f func(h uint64, k K, v *V) bool)
	DeleteFunc(del func(k K, v *V) bool)
}

// flusher is a store that writes what an epoch changed at its end.
type flusher interface{ flush() error }

// newStore makes the state store of operator op's instance inst: Pebble if
// the job asks for it, else a table in memory.
func newStore[K comparable, V any](j *Job, op string, inst int) (keyedStore[K, V], error) {
	if j.cfg.pebbleDir == "" {
		return newKeyedTable[K, V](), nil
	}
	name := strings.NewReplacer("/", "_", string(filepath.Separator), "_").Replace(op)
	s, err := openPebbleStore[K, V](filepath.Join(j.cfg.pebbleDir, fmt.Sprintf("%s-%d-process-%d", name, inst, j.Process())), j.logger())
	if err != nil {
		return nil, fmt.Errorf("weir: %s#%d: %w", op, inst, err)
	}
	j.closeAtEnd(s)
	return s, nil
}

// pebbleStore is a keyed state table in a Pebble database. Keys are laid
// out as the key group (4 bytes, big-endian), the key's hash (8 bytes) and
// the key's encoding, so a key group is a contiguous range. Values are
// encoded with their codec. It is used by one goroutine.
type pebbleStore[K comparable, V any] struct {
	db    *pebble.DB
	kc    codec.Codec[K]
	vc    codec.Codec[V]
	cache *state.Table[K, V] // what this epoch touched
	kbuf  []byte
	one   [1]K
	onev  [1]V
	close sync.Once
}

func openPebbleStore[K comparable, V any](dir string, log *slog.Logger) (*pebbleStore[K, V], error) {
	kc, err := codec.For[K]()
	if err != nil {
		return nil, err
	}
	vc, err := codec.For[V]()
	if err != nil {
		return nil, err
	}
	// Each run starts empty: checkpoints, not the database, carry state
	// across runs.
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	db, err := pebble.Open(dir, &pebble.Options{Logger: pebbleLogger{log: log, dir: dir}})
	if err != nil {
		return nil, fmt.Errorf("pebble: %w", err)
	}
	return &pebbleStore[K, V]{db: db, kc: kc, vc: vc, cache: newKeyedTable[K, V]()}, nil
}

func (s *pebbleStore[K, V]) key(h uint64, k K) []byte {
	b := binary.BigEndian.AppendUint32(s.kbuf[:0], uint32(partition.KeyGroupOf(h, 1<<15)))
	b = binary.BigEndian.AppendUint64(b, h)
	s.one[0] = k
	b = s.kc.Append(b, s.one[:])
	s.kbuf = b
	return b
}

// Upsert returns the value of k, read from disk into the epoch's cache the
// first time the epoch touches it.
func (s *pebbleStore[K, V]) Upsert(h uint64, k K) *V {
	if v := s.cache.Get(h, k); v != nil {
		return v
	}
	v := s.cache.Upsert(h, k)
	data, closer, err := s.db.Get(s.key(h, k))
	if err == nil {
		if vs, derr := s.vc.Decode(data, nil); derr == nil && len(vs) == 1 {
			*v = vs[0]
		} else {
			panic(fmt.Sprintf("weir: pebble state: a stored value does not decode: %v", derr))
		}
		closer.Close()
	} else if err != pebble.ErrNotFound {
		panic(fmt.Sprintf("weir: pebble state: %v", err))
	}
	return v
}

func (s *pebbleStore[K, V]) Delete(h uint64, k K) {
	s.cache.Delete(h, k)
	if err := s.db.Delete(s.key(h, k), pebble.NoSync); err != nil {
		panic(fmt.Sprintf("weir: pebble state: %v", err))
	}
}

// flush writes the epoch's values and forgets them.
func (s *pebbleStore[K, V]) flush() error {
	if s.cache.Len() == 0 {
		return nil
	}
	b := s.db.NewBatch()
	var err error
	s.cache.Range(func(h uint64, k K, v *V) bool {
		s.onev[0] = *v
		err = b.Set(s.key(h, k), s.vc.Append(nil, s.onev[:]), nil)
		return err == nil
	})
	if err == nil {
		err = b.Commit(pebble.NoSync)
	}
	b.Close()
	s.cache.Clear()
	return err
}

// scan calls f with every stored entry, after writing the epoch's cache;
// keep says whether to keep an entry (its value re-written) or delete it.
func (s *pebbleStore[K, V]) scan(f func(h uint64, k K, v *V) (keep, stop bool)) {
	if err := s.flush(); err != nil {
		panic(fmt.Sprintf("weir: pebble state: %v", err))
	}
	it, err := s.db.NewIter(nil)
	if err != nil {
		panic(fmt.Sprintf("weir: pebble state: %v", err))
	}
	b := s.db.NewBatch()
	for it.First(); it.Valid(); it.Next() {
		key := it.Key()
		h := binary.BigEndian.Uint64(key[4:12])
		ks, err1 := s.kc.Decode(key[12:], nil)
		vs, err2 := s.vc.Decode(it.Value(), nil)
		if err1 != nil || err2 != nil || len(ks) != 1 || len(vs) != 1 {
			panic(fmt.Sprintf("weir: pebble state: a stored entry does not decode: %v %v", err1, err2))
		}
		keep, stop := f(h, ks[0], &vs[0])
		if keep {
			s.onev[0] = vs[0]
			b.Set(append([]byte(nil), key...), s.vc.Append(nil, s.onev[:]), nil)
		} else {
			b.Delete(append([]byte(nil), key...), nil)
		}
		if stop {
			break
		}
	}
	it.Close()
	if err := b.Commit(pebble.NoSync); err != nil {
		panic(fmt.Sprintf("weir: pebble state: %v", err))
	}
	b.Close()
}

func (s *pebbleStore[K, V]) Range(f func(h uint64, k K, v *V) bool) {
	s.scan(func(h uint64, k K, v *V) (bool, bool) { return true, !f(h, k, v) })
}

func (s *pebbleStore[K, V]) DeleteFunc(del func(k K, v *V) bool) {
	s.scan(func(_ uint64, k K, v *V) (bool, bool) { return !del(k, v), false })
}

// Close closes the database.
func (s *pebbleStore[K, V]) Close() error {
	var err error
	s.close.Do(func() { err = s.db.Close() })
	return err
}
