package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math/bits"
	"slices"
)

const (
	partMagic     = "WRCP" // part file
	manifestMagic = "WRCM" // manifest file
	formatVersion = 1
	headerLen     = 5 // magic + version byte
	trailerLen    = 4 // CRC-32C, little-endian
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// StateBlob is the snapshot of one operator's keyed state for one key group.
type StateBlob struct {
	Operator string
	KeyGroup uint32
	Data     []byte
	// Pooled says Data is a buffer of the pool (Buffer), which Recycle
	// takes back once the blob is written.
	Pooled bool
}

// SourceBlob is the position of one source instance, opaque to the store.
type SourceBlob struct {
	Operator string
	Instance int
	Data     []byte
}

// Part is one process's share of a checkpoint.
type Part struct {
	Checkpoint uint64 // checkpoint number (names the directory)
	Epoch      uint64 // epoch the checkpoint was taken at
	Process    int    // this process, in [0, Processes)
	Processes  int    // processes of the run that wrote the checkpoint
	// State holds blobs keyed by (operator name, key group); no pair twice.
	State []StateBlob
	// Sources holds each source instance's position; no (operator,
	// instance) pair twice.
	Sources []SourceBlob
	// Meta is opaque (job fingerprint, workers, key groups...).
	Meta map[string]string
}

// Manifest records that a checkpoint is complete: one entry per process,
// in process order.
type Manifest struct {
	Checkpoint uint64
	Epoch      uint64
	Processes  int
	Parts      []ManifestPart // len(Parts) == Processes; Parts[i] is process i's
}

// ManifestPart identifies one part file: its name within the checkpoint
// directory, its size, and the CRC-32C in its trailer.
type ManifestPart struct {
	Name string
	Size int64
	CRC  uint32
}

// checkPart validates the fields that the encoding cannot express wrongly
// on its own. Encoder and decoder share it, so whatever decodes re-encodes.
func checkPart(p *Part) error {
	if p.Processes < 1 {
		return fmt.Errorf("processes is %d, want at least 1", p.Processes)
	}
	if p.Process < 0 || p.Process >= p.Processes {
		return fmt.Errorf("process %d out of range [0, %d)", p.Process, p.Processes)
	}
	if len(p.State) > 1 {
		type key struct {
			op string
			kg uint32
		}
		seen := make(map[key]struct{}, len(p.State))
		for i, s := range p.State {
			k := key{s.Operator, s.KeyGroup}
			if _, dup := seen[k]; dup {
				return fmt.Errorf("state blob %d: duplicate operator %q key group %d", i, s.Operator, s.KeyGroup)
			}
			seen[k] = struct{}{}
		}
	}
	type src struct {
		op string
		in int
	}
	seen := make(map[src]struct{}, len(p.Sources))
	for i, s := range p.Sources {
		if s.Instance < 0 {
			return fmt.Errorf("source blob %d: negative instance %d", i, s.Instance)
		}
		k := src{s.Operator, s.Instance}
		if _, dup := seen[k]; dup {
			return fmt.Errorf("source blob %d: duplicate operator %q instance %d", i, s.Operator, s.Instance)
		}
		seen[k] = struct{}{}
	}
	return nil
}

func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

func bytesLen(n int) int { return uvarintLen(uint64(n)) + n }

func appendBytes(b []byte, s []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// seal appends the CRC-32C of b to b.
func seal(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// EncodePart encodes p: magic "WRCP", version 1, then uvarint fields
// (checkpoint, epoch, process, processes, the state blobs, the source blobs,
// the meta entries sorted by key; strings and blobs length-prefixed), then
// the CRC-32C of everything before it. The encoding is deterministic.
func EncodePart(p Part) ([]byte, error) {
	b, _, err := encodePart(p)
	return b, err
}

// encodePart is EncodePart that also says where each state blob's data
// lies in the encoding, in the order of p.State (IndexPart's blobs).
func encodePart(p Part) ([]byte, []BlobLoc, error) {
	if err := checkPart(&p); err != nil {
		return nil, nil, fmt.Errorf("checkpoint: encode part: %w", err)
	}
	buf := bytes.NewBuffer(make([]byte, 0, partLen(p)))
	x, err := writePart(buf, p)
	if err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), x.Blobs, nil
}

// partLen returns the length of p's encoding.
func partLen(p Part) int {
	n := headerLen + trailerLen + uvarintLen(p.Checkpoint) + uvarintLen(p.Epoch) +
		uvarintLen(uint64(p.Process)) + uvarintLen(uint64(p.Processes)) +
		uvarintLen(uint64(len(p.State))) + uvarintLen(uint64(len(p.Sources))) +
		uvarintLen(uint64(len(p.Meta)))
	for _, s := range p.State {
		n += bytesLen(len(s.Operator)) + uvarintLen(uint64(s.KeyGroup)) + bytesLen(len(s.Data))
	}
	for _, s := range p.Sources {
		n += bytesLen(len(s.Operator)) + uvarintLen(uint64(s.Instance)) + bytesLen(len(s.Data))
	}
	for k, v := range p.Meta {
		n += bytesLen(len(k)) + bytesLen(len(v))
	}
	return n
}

// partWriter writes an encoding to w piece by piece, keeping its length
// and running CRC-32C; the first error sticks.
type partWriter struct {
	w   io.Writer
	n   int64
	crc uint32
	err error
	tmp []byte // the small fields before a piece, gathered
}

func (pw *partWriter) write(b []byte) {
	if pw.err != nil {
		return
	}
	pw.crc = crc32.Update(pw.crc, castagnoli, b)
	pw.n += int64(len(b))
	_, pw.err = pw.w.Write(b)
}

// flush writes the gathered small fields.
func (pw *partWriter) flush() {
	pw.write(pw.tmp)
	pw.tmp = pw.tmp[:0]
}

// writePart writes p's encoding (EncodePart's bytes, p checked) to w
// without holding it whole, and returns its index: w sees each blob's
// data as it is, in one Write. Only the write's own error is returned.
func writePart(w io.Writer, p Part) (PartIndex, error) {
	pw := &partWriter{w: w, tmp: make([]byte, 0, 64)}
	pw.tmp = append(pw.tmp, partMagic...)
	pw.tmp = append(pw.tmp, formatVersion)
	pw.tmp = binary.AppendUvarint(pw.tmp, p.Checkpoint)
	pw.tmp = binary.AppendUvarint(pw.tmp, p.Epoch)
	pw.tmp = binary.AppendUvarint(pw.tmp, uint64(p.Process))
	pw.tmp = binary.AppendUvarint(pw.tmp, uint64(p.Processes))
	pw.tmp = binary.AppendUvarint(pw.tmp, uint64(len(p.State)))
	var locs []BlobLoc
	if len(p.State) > 0 {
		locs = make([]BlobLoc, len(p.State))
	}
	for i, s := range p.State {
		pw.tmp = appendString(pw.tmp, s.Operator)
		pw.tmp = binary.AppendUvarint(pw.tmp, uint64(s.KeyGroup))
		pw.tmp = binary.AppendUvarint(pw.tmp, uint64(len(s.Data)))
		pw.flush()
		locs[i] = BlobLoc{Operator: s.Operator, KeyGroup: s.KeyGroup, Offset: pw.n, Length: int64(len(s.Data)),
			CRC: crc32.Checksum(s.Data, castagnoli)}
		pw.write(s.Data)
	}
	pw.tmp = binary.AppendUvarint(pw.tmp, uint64(len(p.Sources)))
	for _, s := range p.Sources {
		pw.tmp = appendString(pw.tmp, s.Operator)
		pw.tmp = binary.AppendUvarint(pw.tmp, uint64(s.Instance))
		pw.tmp = appendBytes(pw.tmp, s.Data)
		if len(pw.tmp) >= 64<<10 {
			pw.flush()
		}
	}
	keys := slices.Sorted(maps.Keys(p.Meta))
	pw.tmp = binary.AppendUvarint(pw.tmp, uint64(len(keys)))
	for _, k := range keys {
		pw.tmp = appendString(pw.tmp, k)
		pw.tmp = appendString(pw.tmp, p.Meta[k])
	}
	pw.flush()
	sum := pw.crc
	pw.write(binary.LittleEndian.AppendUint32(nil, sum))
	x := PartIndex{Checkpoint: p.Checkpoint, Process: p.Process, PartSize: pw.n, PartCRC: sum, Blobs: locs}
	return x, pw.err
}

// EncodeManifest encodes m: magic "WRCM", version 1, uvarint checkpoint,
// epoch and process count, then per part its name (length-prefixed), size
// (uvarint) and CRC (4 bytes, little-endian), then the CRC-32C of everything
// before it.
func EncodeManifest(m Manifest) ([]byte, error) {
	if m.Processes < 1 {
		return nil, fmt.Errorf("checkpoint: encode manifest: processes is %d, want at least 1", m.Processes)
	}
	if len(m.Parts) != m.Processes {
		return nil, fmt.Errorf("checkpoint: encode manifest: %d parts for %d processes", len(m.Parts), m.Processes)
	}
	b := make([]byte, 0, 64+len(m.Parts)*32)
	b = append(b, manifestMagic...)
	b = append(b, formatVersion)
	b = binary.AppendUvarint(b, m.Checkpoint)
	b = binary.AppendUvarint(b, m.Epoch)
	b = binary.AppendUvarint(b, uint64(m.Processes))
	for i, e := range m.Parts {
		if e.Size < 0 {
			return nil, fmt.Errorf("checkpoint: encode manifest: part %d: negative size %d", i, e.Size)
		}
		b = appendString(b, e.Name)
		b = binary.AppendUvarint(b, uint64(e.Size))
		b = binary.LittleEndian.AppendUint32(b, e.CRC)
	}
	return seal(b), nil
}

// ErrCorrupt is wrapped by every error about bytes that do not decode or do
// not verify (bad magic or version, truncation, checksum mismatch, a part
// that disagrees with its manifest). Other errors are I/O errors.
var ErrCorrupt = errors.New("checkpoint: corrupt")

// CorruptError describes bytes that do not decode or verify. It matches
// ErrCorrupt with errors.Is.
type CorruptError struct {
	File   string // the file, when known (DecodePart does not know it)
	Offset int    // byte offset of the problem, or -1
	Reason string
}

func (e *CorruptError) Error() string {
	s := "checkpoint: "
	if e.File != "" {
		s += e.File + ": "
	}
	s += "corrupt"
	if e.Offset >= 0 {
		s += fmt.Sprintf(" at offset %d", e.Offset)
	}
	return s + ": " + e.Reason
}

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// corrupt returns a CorruptError for file at offset (-1 for none).
func corrupt(file string, offset int, format string, args ...any) error {
	return &CorruptError{File: file, Offset: offset, Reason: fmt.Sprintf(format, args...)}
}

// withFile names file in err if err is a CorruptError without a file.
func withFile(err error, file string) error {
	var ce *CorruptError
	if errors.As(err, &ce) && ce.File == "" {
		c := *ce
		c.File = file
		return &c
	}
	return err
}
