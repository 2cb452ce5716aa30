package checkpoint

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

const (
	manifestName = "MANIFEST"
	tempPrefix   = ".tmp-"
	dirPrefix    = "chk-"
)

// Store is a checkpoint directory: one subdirectory per checkpoint, holding
// one part and its index per process and, once complete, a MANIFEST. A
// Store's only mutable state is its cache of the indexes of complete
// checkpoints (ReadBlob); it is safe for concurrent use, and several
// processes may share one directory.
type Store struct {
	fs  FS
	dir string
	log *slog.Logger

	mu       sync.Mutex
	indexes  map[uint64]*chkIndex // of complete checkpoints, at most maxIndexes
	verified map[uint64]Manifest  // complete checkpoints Prune verified, by their manifests
	// written are the parts this store wrote, by checkpoint and process:
	// their size, checksum and header are known without reading them.
	written map[partKey]PartIndex
}

// partKey names process's part of checkpoint n.
type partKey struct {
	n       uint64
	process int
}

// Open opens (creating if needed) the checkpoint directory dir. A nil
// logger discards warnings.
func Open(fsys FS, dir string, logger *slog.Logger) (*Store, error) {
	if fsys == nil {
		return nil, errors.New("checkpoint: open: nil FS")
	}
	if dir == "" {
		return nil, errors.New("checkpoint: open: empty directory name")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dir = filepath.Clean(dir)
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("checkpoint: open %s: %w", dir, err)
	}
	return &Store{fs: fsys, dir: dir, log: logger}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) chkDir(n uint64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%s%012d", dirPrefix, n))
}

func partName(process int) string { return fmt.Sprintf("part-%04d.bin", process) }

func indexName(process int) string { return fmt.Sprintf("part-%04d.idx", process) }

// ParseDir returns the checkpoint number a checkpoint directory's name
// (its last path element, such as chk-000000000042) stands for.
func ParseDir(name string) (uint64, bool) { return parseDir(name) }

// parseDir returns the checkpoint number a directory name stands for.
func parseDir(name string) (uint64, bool) {
	digits, ok := strings.CutPrefix(name, dirPrefix)
	if !ok || len(digits) < 12 || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || fmt.Sprintf("%s%012d", dirPrefix, n) != name {
		return 0, false
	}
	return n, true
}

// WritePart writes p as process p.Process's part of checkpoint
// p.Checkpoint, atomically: to a temporary file that is synced, renamed
// into place, and made durable by syncing the directory. Rewriting a part
// replaces it; writing a part of a complete checkpoint is an error. The
// part is encoded straight into the file, a buffer at a time: writing it
// holds no copy of its blobs.
//
// The part's index (part-P.idx, see ReadBlob) is written the same way
// once the part's temporary file is synced and before it is renamed, so
// that a part in place has its index beside it.
func (s *Store) WritePart(p Part) error {
	what := fmt.Sprintf("write part %d of checkpoint %d", p.Process, p.Checkpoint)
	if err := checkPart(&p); err != nil {
		return fmt.Errorf("checkpoint: encode part: %w", err)
	}
	dir := s.chkDir(p.Checkpoint)
	mpath := filepath.Join(dir, manifestName)
	switch _, err := s.fs.ReadFile(mpath); {
	case err == nil:
		return fmt.Errorf("checkpoint: %s: %s exists: the checkpoint is complete (DiscardAfter removes it)", what, mpath)
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("checkpoint: %s: %w", what, err)
	}
	if err := s.fs.MkdirAll(dir); err != nil {
		return fmt.Errorf("checkpoint: %s: %w", what, err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return fmt.Errorf("checkpoint: %s: %w", what, err)
	}
	var x PartIndex
	tmp, err := s.writeTemp(dir, partName(p.Process), func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, writeBuffer)
		var err error
		if x, err = writePart(bw, p); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("checkpoint: %s: %w", what, err)
	}
	ib, err := EncodeIndex(x)
	if err == nil {
		err = s.writeAtomic(dir, indexName(p.Process), ib)
	}
	if err != nil {
		_ = s.fs.Remove(tmp) // best effort: Prune removes what is left
		return fmt.Errorf("checkpoint: %s: index: %w", what, err)
	}
	if err := s.install(tmp, dir, partName(p.Process)); err != nil {
		return fmt.Errorf("checkpoint: %s: %w", what, err)
	}
	s.mu.Lock()
	if s.written == nil {
		s.written = map[partKey]PartIndex{}
	}
	s.written[partKey{p.Checkpoint, p.Process}] = PartIndex{Checkpoint: p.Checkpoint, Process: p.Process, PartSize: x.PartSize, PartCRC: x.PartCRC}
	s.mu.Unlock()
	return nil
}

// writeBuffer is how much of a part WritePart gathers before it writes.
const writeBuffer = 1 << 20

// writeAtomic makes dir/name hold data, or leaves it as it was.
func (s *Store) writeAtomic(dir, name string, data []byte) error {
	tmp, err := s.writeTemp(dir, name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	return s.install(tmp, dir, name)
}

// writeTemp writes a temporary file in dir for name with fill, syncs and
// closes it, and returns its path; if anything fails, it removes it.
func (s *Store) writeTemp(dir, name string, fill func(io.Writer) error) (tmp string, err error) {
	f, err := s.fs.CreateTemp(dir, tempPrefix+name+"-*")
	if err != nil {
		return "", err
	}
	tmp = f.Name()
	if err = fill(f); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = s.fs.Remove(tmp) // best effort: Prune removes what is left
		return "", err
	}
	return tmp, nil
}

// install renames the temporary file tmp to dir/name and syncs dir; if
// the rename fails, it removes tmp.
func (s *Store) install(tmp, dir, name string) error {
	if err := s.fs.Rename(tmp, filepath.Join(dir, name)); err != nil {
		_ = s.fs.Remove(tmp) // best effort: Prune removes what is left
		return err
	}
	return s.fs.SyncDir(dir)
}

// Complete reports whether checkpoint n is complete: whether all its
// processes parts are present and agree. If they do and there is no
// valid manifest yet, it writes one atomically. A part with its index
// beside it is checked against the index (its header, size and trailer
// checksum; Prune and Latest verify its bytes), without reading it
// whole; one without is read and verified whole. Any process may call it,
// and several may race: they write identical bytes, so the result is one
// valid manifest. A part left over from a run with another process count
// or epoch counts as absent.
func (s *Store) Complete(n uint64, processes int) (bool, error) {
	if processes < 1 {
		return false, fmt.Errorf("checkpoint: complete checkpoint %d: processes is %d, want at least 1", n, processes)
	}
	dir := s.chkDir(n)
	if m, err := s.readManifest(n); err == nil {
		if m.Processes != processes {
			return false, fmt.Errorf("checkpoint: complete checkpoint %d: %s records %d processes, want %d",
				n, filepath.Join(dir, manifestName), m.Processes, processes)
		}
		return true, nil
	} else if errors.Is(err, ErrCorrupt) {
		s.log.Warn("checkpoint: rewriting corrupt manifest", "checkpoint", n, "file", fileOf(err), "err", err)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	m := Manifest{Checkpoint: n, Processes: processes, Parts: make([]ManifestPart, processes)}
	for i := range processes {
		path := filepath.Join(dir, partName(i))
		p, size, crc, err := s.partInfo(n, i)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		} else if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				err = fmt.Errorf("checkpoint: complete checkpoint %d: %w", n, err)
			}
			return false, err
		}
		if p.Checkpoint != n || p.Process != i {
			return false, corrupt(path, -1, "holds process %d of checkpoint %d", p.Process, p.Checkpoint)
		}
		if i == 0 {
			m.Epoch = p.Epoch
		}
		if p.Processes != processes || p.Epoch != m.Epoch {
			s.log.Warn("checkpoint: stale part: its process count or epoch differs from part 0's; not complete", "checkpoint", n, "file", path,
				"processes", p.Processes, "epoch", p.Epoch, "want_processes", processes, "want_epoch", m.Epoch)
			return false, nil
		}
		m.Parts[i] = ManifestPart{Name: partName(i), Size: size, CRC: crc}
	}
	b, err := EncodeManifest(m)
	if err != nil {
		return false, err
	}
	if err := s.writeAtomic(dir, manifestName, b); err != nil {
		// A racing Complete may have won, or Prune removed our temporary
		// file: a valid manifest means the checkpoint is complete anyway.
		if m2, err2 := s.readManifest(n); err2 == nil && m2.Processes == processes {
			return true, nil
		}
		return false, fmt.Errorf("checkpoint: complete checkpoint %d: write manifest: %w", n, err)
	}
	return true, nil
}

// readManifest reads and decodes the manifest of checkpoint n and checks
// it names the files it should. A missing manifest's error matches
// fs.ErrNotExist.
func (s *Store) readManifest(n uint64) (Manifest, error) {
	path := filepath.Join(s.chkDir(n), manifestName)
	b, err := s.fs.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Manifest{}, fmt.Errorf("checkpoint: checkpoint %d is incomplete: manifest missing: %w", n, err)
	} else if err != nil {
		return Manifest{}, fmt.Errorf("checkpoint: read manifest of checkpoint %d: %w", n, err)
	}
	m, err := DecodeManifest(b)
	if err != nil {
		return Manifest{}, withFile(err, path)
	}
	if m.Checkpoint != n {
		return Manifest{}, corrupt(path, -1, "records checkpoint %d", m.Checkpoint)
	}
	for i, e := range m.Parts {
		if e.Name != partName(i) {
			return Manifest{}, corrupt(path, -1, "part %d is named %q, want %q", i, e.Name, partName(i))
		}
	}
	return m, nil
}

// readPart reads and verifies process i's part of checkpoint n, against m
// if not nil.
func (s *Store) readPart(n uint64, i int, m *Manifest) (Part, error) {
	path := filepath.Join(s.chkDir(n), partName(i))
	b, err := s.fs.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Part{}, fmt.Errorf("checkpoint: part %d of checkpoint %d missing: %w", i, n, err)
	} else if err != nil {
		return Part{}, fmt.Errorf("checkpoint: read part %d of checkpoint %d: %w", i, n, err)
	}
	if m != nil && int64(len(b)) != m.Parts[i].Size {
		return Part{}, corrupt(path, -1, "%d bytes, manifest records %d (truncated or replaced)", len(b), m.Parts[i].Size)
	}
	p, err := DecodePart(b)
	if err != nil {
		return Part{}, withFile(err, path)
	}
	if p.Checkpoint != n || p.Process != i {
		return Part{}, corrupt(path, -1, "holds process %d of checkpoint %d", p.Process, p.Checkpoint)
	}
	if m == nil {
		return p, nil
	}
	if crc := trailerCRC(b); crc != m.Parts[i].CRC {
		return Part{}, corrupt(path, len(b)-trailerLen, "checksum %08x, manifest records %08x (replaced)", crc, m.Parts[i].CRC)
	}
	if p.Processes != m.Processes || p.Epoch != m.Epoch {
		return Part{}, corrupt(path, -1, "%d processes at epoch %d, manifest records %d at epoch %d",
			p.Processes, p.Epoch, m.Processes, m.Epoch)
	}
	return p, nil
}

// ReadPart reads and verifies process's part of checkpoint n: its
// checksum and header, and, if the checkpoint is complete, its size and
// checksum against the manifest. The part's blobs share one buffer.
func (s *Store) ReadPart(n uint64, process int) (Part, error) {
	m, err := s.readManifest(n)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if process < 0 {
			return Part{}, fmt.Errorf("checkpoint: read part %d of checkpoint %d: negative process", process, n)
		}
		return s.readPart(n, process, nil)
	case err != nil:
		return Part{}, err
	case process < 0 || process >= m.Processes:
		return Part{}, fmt.Errorf("checkpoint: read part %d of checkpoint %d: process out of range [0, %d)", process, n, m.Processes)
	}
	return s.readPart(n, process, &m)
}

// ReadAll reads and verifies every part of complete checkpoint n, in
// process order: what a restart with another process count reads to take
// the key groups it now owns.
func (s *Store) ReadAll(n uint64) ([]Part, error) {
	m, err := s.readManifest(n)
	if err != nil {
		return nil, err
	}
	parts := make([]Part, m.Processes)
	for i := range parts {
		if parts[i], err = s.readPart(n, i, &m); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// fileOf returns the file an error is about, if it says.
func fileOf(err error) string {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return ce.File
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path
	}
	return ""
}
