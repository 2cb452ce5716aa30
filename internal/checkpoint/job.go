package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
)

// The files a checkpoint directory holds besides its checkpoints: what
// job writes there, and whether that job ran to its end.
const (
	JobFile      = "JOB"
	FinishedFile = "FINISHED"
)

// ReadMeta returns the contents of the directory's file name (JobFile,
// FinishedFile), and false if there is none.
func (s *Store) ReadMeta(name string) ([]byte, bool, error) {
	b, err := s.fs.ReadFile(filepath.Join(s.dir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("checkpoint: read %s: %w", filepath.Join(s.dir, name), err)
	}
	return b, true, nil
}

// WriteMeta makes the directory's file name hold data, atomically.
// Processes may race to write the same bytes.
func (s *Store) WriteMeta(name string, data []byte) error {
	if err := s.writeAtomic(s.dir, name, data); err != nil {
		return fmt.Errorf("checkpoint: write %s: %w", filepath.Join(s.dir, name), err)
	}
	return nil
}

// RemoveMeta removes the directory's file name, if there is one.
func (s *Store) RemoveMeta(name string) error {
	if err := s.fs.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoint: remove %s: %w", filepath.Join(s.dir, name), err)
	}
	return s.fs.SyncDir(s.dir)
}

// Count returns the number of checkpoint directories, complete or not.
func (s *Store) Count() (int, error) {
	ns, err := s.list()
	return len(ns), err
}

// Has reports whether process's part of checkpoint n is in the
// directory, or the checkpoint is complete (or removed, having been).
func (s *Store) Has(n uint64, process int) (bool, error) {
	for _, name := range []string{manifestName, partName(process)} {
		_, err := s.fs.ReadFile(filepath.Join(s.chkDir(n), name))
		switch {
		case err == nil:
			return true, nil
		case !errors.Is(err, fs.ErrNotExist):
			return false, fmt.Errorf("checkpoint: read %s of checkpoint %d: %w", name, n, err)
		}
	}
	if es, err := s.fs.ReadDir(s.chkDir(n)); errors.Is(err, fs.ErrNotExist) || err == nil && len(es) == 0 {
		return true, nil // pruned: it was there
	}
	return false, nil
}

// TrimIncomplete removes the incomplete checkpoints newer than the newest
// complete one but for the newest keep of them: checkpoints that never
// complete (a directory that the processes do not share) do not pile up.
func (s *Store) TrimIncomplete(keep int) error {
	ns, err := s.list()
	if err != nil {
		return err
	}
	var incomplete []uint64
	for _, n := range slices.Backward(ns) {
		if _, err := s.readManifest(n); err == nil {
			break
		}
		incomplete = append(incomplete, n)
	}
	for i := keep; i < len(incomplete); i++ {
		if err := s.remove(incomplete[i]); err != nil {
			return err
		}
	}
	return nil
}

// NewestComplete returns the newest checkpoint whose manifest is in place
// and decodes, and false if there is none. Unlike Latest it reads no part:
// it is as cheap as a listing and a manifest, for a caller that reads
// blobs with ReadBlob, which verifies what it reads.
func (s *Store) NewestComplete() (uint64, bool, error) {
	ns, err := s.list()
	if err != nil {
		return 0, false, err
	}
	for _, n := range slices.Backward(ns) {
		switch _, err := s.readManifest(n); {
		case err == nil:
			return n, true, nil
		case !unusable(err):
			return 0, false, err
		}
	}
	return 0, false, nil
}

// CompletedAfter reports whether a checkpoint newer than n has a
// manifest: then n is no longer needed, and may have been pruned.
func (s *Store) CompletedAfter(n uint64) (bool, error) {
	ns, err := s.list()
	if err != nil {
		return false, err
	}
	for _, m := range slices.Backward(ns) {
		if m <= n {
			break
		}
		if _, err := s.readManifest(m); err == nil {
			return true, nil
		}
	}
	return false, nil
}
