package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
)

// scanChunk is how much of a part Prune reads at a time to verify it.
const scanChunk = 4 << 20

// partInfo returns the header (no blobs), size and trailer checksum of
// process i's part of checkpoint n: what Complete records. With the
// part's index beside it, it reads the index and the part's first and
// last bytes: the index was made from the part's bytes, and names it by
// its size and trailer checksum. A part whose index is missing, does not
// decode or does not match it is read whole and verified.
func (s *Store) partInfo(n uint64, i int) (Part, int64, uint32, error) {
	path := filepath.Join(s.chkDir(n), partName(i))
	x, err := s.readIndexFile(n, i)
	switch {
	case err == nil:
		h, ok, err := s.matchIndex(path, x)
		if err != nil {
			return Part{}, 0, 0, err
		}
		if ok {
			return h, x.PartSize, x.PartCRC, nil
		}
	case !unusable(err):
		return Part{}, 0, 0, err
	}
	b, err := s.fs.ReadFile(path)
	if err != nil {
		return Part{}, 0, 0, err
	}
	p, err := DecodePart(b)
	if err != nil {
		return Part{}, 0, 0, withFile(err, path)
	}
	return Part{Checkpoint: p.Checkpoint, Epoch: p.Epoch, Process: p.Process, Processes: p.Processes},
		int64(len(b)), trailerCRC(b), nil
}

// matchIndex reports whether the part at path is x.PartSize bytes long
// and ends with x.PartCRC, and returns its header. A file that is missing
// gives an error matching fs.ErrNotExist; one that does not match, false.
func (s *Store) matchIndex(path string, x PartIndex) (Part, bool, error) {
	head, err := s.fs.ReadRange(path, 0, int(min(maxPartHeader, x.PartSize-trailerLen)))
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return Part{}, false, nil
	} else if err != nil {
		return Part{}, false, err
	}
	tail, err := s.fs.ReadRange(path, x.PartSize-trailerLen, trailerLen)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return Part{}, false, nil
	} else if err != nil {
		return Part{}, false, err
	}
	if binary.LittleEndian.Uint32(tail) != x.PartCRC {
		return Part{}, false, nil
	}
	if longer, err := s.longer(path, x.PartSize); longer || err != nil {
		return Part{}, false, err
	}
	h, err := decodePartHeader(head)
	return h, err == nil, nil
}

// longer reports whether the file at path has more than size bytes.
func (s *Store) longer(path string, size int64) (bool, error) {
	_, err := s.fs.ReadRange(path, size, 1)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return false, nil
	}
	return err == nil, err
}

// scanPart verifies process i's part of complete checkpoint n, whose
// manifest is m, reading it a piece at a time: its size and checksum are
// the manifest's, its bytes match the checksum, and its header names the
// checkpoint, process, process count and epoch. It does not decode the
// blobs (a part whose checksum matches holds the bytes its writer
// sealed). Errors are readPart's.
func (s *Store) scanPart(n uint64, i int, m *Manifest) error {
	path := filepath.Join(s.chkDir(n), partName(i))
	size := m.Parts[i].Size
	if size < headerLen+trailerLen {
		return corrupt(path, -1, "the manifest records %d bytes, less than a part's least %d", size, headerLen+trailerLen)
	}
	fail := func(err error) error {
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			return corrupt(path, -1, "shorter than the %d bytes the manifest records (truncated)", size)
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("checkpoint: part %d of checkpoint %d missing: %w", i, n, err)
		}
		return fmt.Errorf("checkpoint: read part %d of checkpoint %d: %w", i, n, err)
	}
	body := size - trailerLen
	var sum uint32
	var head []byte
	for off := int64(0); off < body; off += scanChunk {
		b, err := s.fs.ReadRange(path, off, int(min(scanChunk, body-off)))
		if err != nil {
			return fail(err)
		}
		if off == 0 {
			head = slices.Clone(b[:min(len(b), maxPartHeader)])
		}
		sum = crc32.Update(sum, castagnoli, b)
	}
	tail, err := s.fs.ReadRange(path, body, trailerLen)
	if err != nil {
		return fail(err)
	}
	if longer, err := s.longer(path, size); err != nil {
		return fail(err)
	} else if longer {
		return corrupt(path, -1, "longer than the %d bytes the manifest records (replaced)", size)
	}
	if stored := binary.LittleEndian.Uint32(tail); stored != sum {
		return corrupt(path, int(body), "checksum mismatch: stored %08x, computed %08x (truncated or corrupted part)", stored, sum)
	} else if stored != m.Parts[i].CRC {
		return corrupt(path, int(body), "checksum %08x, manifest records %08x (replaced)", stored, m.Parts[i].CRC)
	}
	p, err := decodePartHeader(head)
	if err != nil {
		return withFile(err, path)
	}
	if p.Checkpoint != n || p.Process != i || p.Processes != m.Processes || p.Epoch != m.Epoch {
		return corrupt(path, -1, "process %d of checkpoint %d, %d processes at epoch %d; manifest records process %d of %d, %d processes at epoch %d",
			p.Process, p.Checkpoint, p.Processes, p.Epoch, i, n, m.Processes, m.Epoch)
	}
	return nil
}

// verifyOnce checks that checkpoint n is complete, as Prune needs: its
// manifest reads, and its parts verify (scanPart) unless this store
// verified them before under the same manifest (the same parts, by size
// and checksum). Parts of a complete checkpoint are never rewritten, so
// only damage after that first verification goes unseen, until Latest
// reads the checkpoint whole. A part this store wrote itself, with the
// size and checksum the manifest records, is checked by its ends and
// length only (writtenMatch): reading back what was just written would
// read the system's cache, not the disk, at the cost of a whole read.
func (s *Store) verifyOnce(n uint64) error {
	m, err := s.readManifest(n)
	if err != nil {
		return err
	}
	s.mu.Lock()
	v, ok := s.verified[n]
	s.mu.Unlock()
	if ok && v.Epoch == m.Epoch && v.Processes == m.Processes && slices.Equal(v.Parts, m.Parts) {
		return nil
	}
	for i := range m.Parts {
		if s.writtenMatch(n, i, &m) {
			continue
		}
		if err := s.scanPart(n, i, &m); err != nil {
			return err
		}
	}
	s.mu.Lock()
	if s.verified == nil {
		s.verified = map[uint64]Manifest{}
	}
	s.verified[n] = m
	s.mu.Unlock()
	return nil
}

// keepVerified forgets the verified checkpoints that are not in ns (the
// directory's listing).
func (s *Store) keepVerified(ns []uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for n := range s.verified {
		if _, found := slices.BinarySearch(ns, n); !found {
			delete(s.verified, n)
		}
	}
	for k := range s.written {
		if _, found := slices.BinarySearch(ns, k.n); !found {
			delete(s.written, k)
		}
	}
}

// writtenMatch reports whether process i's part of checkpoint n, whose
// manifest is m, is one this store wrote with the manifest's size and
// checksum, and still has them, with its header naming n, i, the process
// count and epoch. False sends the caller to scanPart, which says what
// is wrong.
func (s *Store) writtenMatch(n uint64, i int, m *Manifest) bool {
	s.mu.Lock()
	x, ok := s.written[partKey{n, i}]
	s.mu.Unlock()
	if !ok || x.PartSize != m.Parts[i].Size || x.PartCRC != m.Parts[i].CRC {
		return false
	}
	p, ok, err := s.matchIndex(filepath.Join(s.chkDir(n), partName(i)), x)
	return err == nil && ok && p.Checkpoint == n && p.Process == i && p.Processes == m.Processes && p.Epoch == m.Epoch
}
