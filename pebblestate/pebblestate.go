package pebblestate

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/state"
)

// Dir keeps the job's keyed state in Pebble databases under dir, one per
// operator instance of a process (see weir.KeyedStateIn). dir must not be
// empty; the databases start empty on every run.
func Dir(dir string) weir.JobOption { return weir.KeyedStateIn(backend{dir: dir}) }

type backend struct{ dir string }

func (b backend) String() string { return fmt.Sprintf("pebblestate.Dir(%q)", b.dir) }

func (b backend) Validate() error {
	if b.dir == "" {
		return errors.New("the directory is empty")
	}
	return nil
}

func (b backend) Open(name string, log *slog.Logger) (state.ByteStore, error) {
	dir := filepath.Join(b.dir, name)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	db, err := pebble.Open(dir, &pebble.Options{Logger: pebbleLogger{log: log, dir: dir}})
	if err != nil {
		return nil, fmt.Errorf("pebble: %w", err)
	}
	return store{db}, nil
}

// store is a Pebble database as a state.ByteStore. Writes are not synced:
// checkpoints, not the database, make state durable.
type store struct{ db *pebble.DB }

func (s store) Get(k []byte, f func(v []byte)) (bool, error) {
	v, closer, err := s.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	f(v)
	return true, closer.Close()
}

func (s store) Delete(k []byte) error { return s.db.Delete(k, pebble.NoSync) }

func (s store) Write(fill func(set func(k, v []byte), del func(k []byte))) error {
	b := s.db.NewBatch()
	defer b.Close()
	var err error
	fill(func(k, v []byte) {
		if e := b.Set(k, v, nil); err == nil {
			err = e
		}
	}, func(k []byte) {
		if e := b.Delete(k, nil); err == nil {
			err = e
		}
	})
	if err != nil {
		return err
	}
	return b.Commit(pebble.NoSync)
}

func (s store) Rewrite(f func(k, v []byte) ([]byte, bool, bool)) error {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	for it.First(); it.Valid(); it.Next() {
		nv, keep, stop := f(it.Key(), it.Value())
		if keep {
			err = b.Set(it.Key(), nv, nil)
		} else {
			err = b.Delete(it.Key(), nil)
		}
		if err != nil || stop {
			break
		}
	}
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return b.Commit(pebble.NoSync)
}

func (s store) Close() error { return s.db.Close() }
