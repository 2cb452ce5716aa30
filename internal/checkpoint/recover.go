package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// list returns the numbers of the checkpoint directories, ascending.
// Other entries are ignored.
func (s *Store) list() ([]uint64, error) {
	es, err := s.fs.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: list %s: %w", s.dir, err)
	}
	var ns []uint64
	for _, e := range es {
		if n, ok := parseDir(e.Name); ok && e.IsDir {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns, nil
}

// scan checks every part of checkpoint n against its manifest, reading
// each a piece at a time (scanPart).
func (s *Store) scan(n uint64) error {
	m, err := s.readManifest(n)
	if err != nil {
		return err
	}
	for i := range m.Parts {
		if err := s.scanPart(n, i, &m); err != nil {
			return err
		}
	}
	return nil
}

// Unusable reports whether err, from reading a checkpoint, says it is
// missing a file or is corrupt (unusable), rather than that a read
// failed.
func Unusable(err error) bool { return unusable(err) }

// unusable reports whether err says a checkpoint is missing a file or is
// corrupt, as opposed to an I/O failure that may read differently on
// another process or a second try.
func unusable(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, fs.ErrNotExist)
}

// Latest returns the newest complete checkpoint whose manifest and parts
// all verify. It skips, logging a warning that names the file and the
// problem, every newer one whose manifest or a part is missing, truncated
// or corrupt. ok is false if there is none. Any other error (a read that
// fails for another reason) is returned rather than skipped, so that
// processes sharing the directory cannot pick different checkpoints
// because of a transient fault.
//
// Latest reads every byte of the checkpoint it returns, a piece at a
// time into little memory (scan, which checks each part's size, checksum
// and header against the manifest, whoever wrote it), so that restoring 1 GiB of
// state does not first hold the whole checkpoint in memory once more;
// reading its parts afterwards reads them again, checking each frame.
func (s *Store) Latest() (n uint64, ok bool, err error) {
	return s.LatestBefore(math.MaxUint64)
}

// LatestBefore is Latest among the checkpoints before limit: a restore
// that finds the newest unusable once it reads it whole (a part whose
// checksum matches but that does not decode) goes back to the one
// before.
func (s *Store) LatestBefore(limit uint64) (n uint64, ok bool, err error) {
	ns, err := s.list()
	if err != nil {
		return 0, false, err
	}
	for _, n := range slices.Backward(ns) {
		if n >= limit {
			continue
		}
		err := s.scan(n)
		if err == nil {
			return n, true, nil
		}
		if !unusable(err) {
			return 0, false, err
		}
		s.log.Warn("checkpoint: skipping unusable checkpoint", "checkpoint", n, "file", fileOf(err), "err", err)
	}
	return 0, false, nil
}

// Prune removes all but the newest keep complete checkpoints, and every
// incomplete or corrupt one older than the newest complete one. It keeps
// the ones newer than the newest complete one (they may be in progress),
// and removes stale temporary files from the complete ones it keeps.
// A checkpoint counts as complete only if its parts verify (their sizes
// and checksums, read a piece at a time, and headers; see verifyOnce), so
// a corrupt one never displaces a good one; a checkpoint this store
// verified so before is not read again. keep must be at least 1.
//
// Prunes may race each other. A Prune racing a Complete of a checkpoint
// older than the newest complete one can make that Complete fail.
func (s *Store) Prune(keep int) error {
	if keep < 1 {
		return fmt.Errorf("checkpoint: prune: keep is %d, want at least 1", keep)
	}
	ns, err := s.list()
	if err != nil {
		return err
	}
	s.keepVerified(ns)
	complete := 0
	for _, n := range slices.Backward(ns) {
		if complete >= keep {
			if err := s.remove(n); err != nil {
				return err
			}
			continue
		}
		switch err := s.verifyOnce(n); {
		case err == nil:
			complete++
			if err := s.removeTemps(n); err != nil {
				return err
			}
		case !unusable(err):
			return err
		case complete > 0:
			s.log.Debug("checkpoint: pruning unusable checkpoint", "checkpoint", n, "err", err)
			if err := s.remove(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// DiscardAfter removes every checkpoint newer than n, complete or not. A
// restart from checkpoint n calls it (from one process, before any process
// writes a newer checkpoint), so that parts left by the failed run are not
// mixed with the new run's parts of the same checkpoint.
func (s *Store) DiscardAfter(n uint64) error {
	ns, err := s.list()
	if err != nil {
		return err
	}
	for _, m := range ns {
		if m > n {
			if err := s.remove(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// remove deletes checkpoint n, manifest first, so that a crash halfway
// leaves an incomplete checkpoint rather than a complete one with parts
// missing.
func (s *Store) remove(n uint64) error {
	s.forget(n)
	dir := s.chkDir(n)
	if err := s.fs.Remove(filepath.Join(dir, manifestName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoint: remove checkpoint %d: %w", n, err)
	}
	if err := s.fs.SyncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoint: remove checkpoint %d: %w", n, err)
	}
	if err := s.removeAll(dir); err != nil {
		return fmt.Errorf("checkpoint: remove checkpoint %d: %w", n, err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return fmt.Errorf("checkpoint: remove checkpoint %d: %w", n, err)
	}
	s.log.Debug("checkpoint: removed", "checkpoint", n, "dir", dir)
	return nil
}

// removeAll removes dir and what it holds. Another process may write
// into it meanwhile (process 0 an empty part for a process that left,
// say), which makes the removal find the directory not empty: it tries
// again, a few times.
func (s *Store) removeAll(dir string) error {
	var err error
	for range 5 {
		if err = s.fs.RemoveAll(dir); err == nil || !notEmpty(err) {
			return err
		}
	}
	return err
}

// notEmpty says whether err is a removal's "directory not empty".
func notEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || strings.Contains(err.Error(), "directory not empty")
}

// removeTemps deletes temporary files left in checkpoint n's directory by
// writes that failed or crashed. A directory already gone was pruned by
// another process between this one's check and now: nothing is left to
// clean.
func (s *Store) removeTemps(n uint64) error {
	dir := s.chkDir(n)
	es, err := s.fs.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint: clean %s: %w", dir, err)
	}
	removed := false
	for _, e := range es {
		if e.IsDir || !strings.HasPrefix(e.Name, tempPrefix) {
			continue
		}
		path := filepath.Join(dir, e.Name)
		if err := s.fs.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("checkpoint: remove stale temporary file: %w", err)
		}
		removed = true
		s.log.Debug("checkpoint: removed stale temporary file", "file", path)
	}
	if removed {
		if err := s.fs.SyncDir(dir); err != nil {
			return fmt.Errorf("checkpoint: clean %s: %w", dir, err)
		}
	}
	return nil
}
