package checkpoint

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
)

// maxIndexes bounds the complete checkpoints whose indexes a Store keeps
// decoded: the newest ones, which are those read.
const maxIndexes = 4

// chkIndex is where every state blob of a complete checkpoint lies: the
// part that holds it and its place there.
type chkIndex struct {
	n     uint64
	blobs map[blobKey]blobAt
}

type blobKey struct {
	op string
	kg uint32
}

type blobAt struct {
	process int
	loc     BlobLoc
}

// ReadBlob returns operator op's blob of key group kg in complete
// checkpoint n, and false if the checkpoint holds none. It reads the
// checkpoint's manifest and the parts' indexes (part-P.idx, kept decoded
// for the newest few checkpoints read) and then the blob's bytes alone:
// reading one key group's state costs its size, not its part's. It
// verifies the manifest, that each index names the part the manifest
// records (its size and trailer CRC) and decodes, and the blob's CRC-32C
// against its index, but not the rest of the part. Errors about bad
// bytes wrap ErrCorrupt; a checkpoint that is incomplete, removed, or
// written without indexes gives an error matching fs.ErrNotExist.
func (s *Store) ReadBlob(n uint64, op string, kg uint32) ([]byte, bool, error) {
	x, err := s.index(n)
	if err != nil {
		return nil, false, err
	}
	at, ok := x.blobs[blobKey{op, kg}]
	if !ok {
		return nil, false, nil
	}
	path := filepath.Join(s.chkDir(n), partName(at.process))
	if at.loc.Length > int64(int(^uint(0)>>1)) {
		return nil, false, corrupt(path, int(at.loc.Offset), "a blob of %d bytes", at.loc.Length)
	}
	b, err := s.fs.ReadRange(path, at.loc.Offset, int(at.loc.Length))
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		s.forget(n)
		return nil, false, corrupt(path, -1, "shorter than its index says (truncated): %v", err)
	case errors.Is(err, fs.ErrNotExist):
		s.forget(n)
		return nil, false, fmt.Errorf("checkpoint: read key group %d of %s in checkpoint %d: %w", kg, op, n, err)
	case err != nil:
		return nil, false, fmt.Errorf("checkpoint: read key group %d of %s in checkpoint %d: %w", kg, op, n, err)
	}
	if sum := crc32.Checksum(b, castagnoli); sum != at.loc.CRC {
		return nil, false, corrupt(path, int(at.loc.Offset), "key group %d of %s: checksum %08x, the index records %08x", kg, op, sum, at.loc.CRC)
	}
	return b, true, nil
}

// index returns the index of complete checkpoint n, from the cache or
// read and verified.
func (s *Store) index(n uint64) (*chkIndex, error) {
	s.mu.Lock()
	x := s.indexes[n]
	s.mu.Unlock()
	if x != nil {
		return x, nil
	}
	m, err := s.readManifest(n)
	if err != nil {
		return nil, err
	}
	x = &chkIndex{n: n, blobs: map[blobKey]blobAt{}}
	for i, e := range m.Parts {
		pi, err := s.readIndex(n, i, e)
		if err != nil {
			return nil, err
		}
		for _, l := range pi.Blobs {
			k := blobKey{l.Operator, l.KeyGroup}
			if prev, dup := x.blobs[k]; dup {
				return nil, corrupt(filepath.Join(s.chkDir(n), indexName(i)), -1,
					"key group %d of %s is in part %d too", l.KeyGroup, l.Operator, prev.process)
			}
			x.blobs[k] = blobAt{process: i, loc: l}
		}
	}
	s.mu.Lock()
	if s.indexes == nil {
		s.indexes = map[uint64]*chkIndex{}
	}
	s.indexes[n] = x
	if len(s.indexes) > maxIndexes {
		delete(s.indexes, slices.Min(slices.Collect(maps.Keys(s.indexes))))
	}
	s.mu.Unlock()
	return x, nil
}

// readIndex reads and verifies process i's index of checkpoint n against
// the manifest's entry e for its part.
func (s *Store) readIndex(n uint64, i int, e ManifestPart) (PartIndex, error) {
	x, err := s.readIndexFile(n, i)
	if err != nil {
		return PartIndex{}, err
	}
	if x.PartSize != e.Size || x.PartCRC != e.CRC {
		return PartIndex{}, corrupt(filepath.Join(s.chkDir(n), indexName(i)), -1,
			"indexes a part of %d bytes with checksum %08x, the manifest records %d bytes with %08x (stale)",
			x.PartSize, x.PartCRC, e.Size, e.CRC)
	}
	return x, nil
}

// readIndexFile reads and decodes process i's index of checkpoint n and
// checks that it names that part.
func (s *Store) readIndexFile(n uint64, i int) (PartIndex, error) {
	path := filepath.Join(s.chkDir(n), indexName(i))
	b, err := s.fs.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return PartIndex{}, fmt.Errorf("checkpoint: index of part %d of checkpoint %d missing: %w", i, n, err)
	} else if err != nil {
		return PartIndex{}, fmt.Errorf("checkpoint: read index of part %d of checkpoint %d: %w", i, n, err)
	}
	x, err := DecodeIndex(b)
	if err != nil {
		return PartIndex{}, withFile(err, path)
	}
	if x.Checkpoint != n || x.Process != i {
		return PartIndex{}, corrupt(path, -1, "indexes process %d of checkpoint %d", x.Process, x.Checkpoint)
	}
	return x, nil
}

// forget drops checkpoint n's index from the cache, that it was
// verified, and the parts of it this store wrote.
func (s *Store) forget(n uint64) {
	s.mu.Lock()
	delete(s.indexes, n)
	delete(s.verified, n)
	for k := range s.written {
		if k.n == n {
			delete(s.written, k)
		}
	}
	s.mu.Unlock()
}
