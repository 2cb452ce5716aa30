package file

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"

	"github.com/weirstream/weir"
)

// A reader implements weir.Seekable. A position says where the next line
// to read starts: the segment (an index into the reader's segments) and
// the state of the reader in it: the file offset of the segment's first
// line, the number of lines taken from the segment, and the file offset
// of the next line. With the offset of the segment's first line, the
// number of lines gives the line number for errors and says whether the
// next line is the first of its file (which Header skips). A position also
// holds a fingerprint of the files, so that Seek refuses another input.
// Its bytes are:
//
//	format                 byte (posFormat)
//	instance, parallelism  uvarints
//	files                  uvarint: the number of paths
//	fingerprint            uint64, little-endian: FNV-1a of the paths and
//	                       the sizes of all the files
//	read                   uvarint n, then n × (uvarint index, uvarint
//	                       size): the files this reader reads
//	segment                uvarint; the number of segments at the end
//	begun                  byte: 0 if the segment is not started, else 1,
//	                       and then the uvarints start, lines and offset
//
// A position taken after the first used records of a batch is at the
// start of the line of record used (lines rejected or skipped before it
// are not read again); after all of them, it is where reading stands.
const posFormat = 1

// positions is what a reader keeps to answer Position.
type positions struct {
	ctx    weir.SourceContext
	sizes  []int64 // of all the files
	fp     uint64  // fingerprint of the paths and sizes
	starts []int64 // by segment: the offset of its first line, once begun
	// bases[k] is the offset of segs[k].file in the files laid end to end;
	// the segments of a reader are contiguous there.
	bases []int64
	marks []mark // the records of the last batch
}

// mark is where a record of the last batch came from.
type mark struct {
	at    int64 // the start of its line, in the files laid end to end
	lines int64 // the lines of its segment before it
}

func (r *reader[T]) initPositions(ctx weir.SourceContext, sizes []int64, batch int) {
	h := fnv.New64a()
	var b []byte
	for k, p := range r.paths {
		b = binary.AppendUvarint(b[:0], uint64(len(p)))
		b = append(b, p...)
		b = binary.AppendUvarint(b, uint64(sizes[k]))
		h.Write(b)
	}
	bases := make([]int64, len(r.segs))
	var base int64
	f := 0
	for k, sg := range r.segs {
		for ; f < sg.file; f++ {
			base += sizes[f]
		}
		bases[k] = base
	}
	r.pos = positions{
		ctx: ctx, sizes: sizes, fp: h.Sum64(), bases: bases,
		starts: make([]int64, len(r.segs)), marks: make([]mark, 0, batch),
	}
}

// mark records the line next returned last as that of the last record.
func (r *reader[T]) mark() {
	r.pos.marks = append(r.pos.marks, mark{at: r.pos.bases[r.seg] + r.at, lines: r.lines - 1})
}

// Position implements weir.Seekable.
func (r *reader[T]) Position(used int) ([]byte, error) {
	if r.err != nil && r.err != io.EOF {
		return nil, fmt.Errorf("file: no position after a failed Read: %w", r.err)
	}
	ps := &r.pos
	if used < 0 || used > len(ps.marks) {
		return nil, fmt.Errorf("file: Position(%d) after a batch of %d records", used, len(ps.marks))
	}
	b := make([]byte, 0, 64)
	b = append(b, posFormat)
	b = binary.AppendUvarint(b, uint64(ps.ctx.Instance))
	b = binary.AppendUvarint(b, uint64(ps.ctx.Parallelism))
	b = binary.AppendUvarint(b, uint64(len(r.paths)))
	b = binary.LittleEndian.AppendUint64(b, ps.fp)
	b = binary.AppendUvarint(b, uint64(len(r.segs)))
	for _, sg := range r.segs {
		b = binary.AppendUvarint(b, uint64(sg.file))
		b = binary.AppendUvarint(b, uint64(ps.sizes[sg.file]))
	}
	seg, begun, start, lines, off := r.seg, r.ready, r.start, r.lines, r.off+int64(r.p)
	if used < len(ps.marks) {
		m := ps.marks[used]
		seg = min(r.seg, len(r.segs)-1)
		for ps.bases[seg]+r.segs[seg].lo > m.at {
			seg--
		}
		begun, start, lines, off = true, ps.starts[seg], m.lines, m.at-ps.bases[seg]
	}
	b = binary.AppendUvarint(b, uint64(seg))
	if !begun {
		return append(b, 0), nil
	}
	b = append(b, 1)
	for _, v := range [...]int64{start, lines, off} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	return b, nil
}

// errTruncated reports a position that ends early or has a malformed
// varint.
var errTruncated = errors.New("truncated or corrupt")

// posDecoder reads the fields of a position; the first error sticks.
type posDecoder struct {
	b   []byte
	err error
}

// fail records that the position ends early, unless an error came first.
func (d *posDecoder) fail() {
	if d.err == nil {
		d.err = errTruncated
	}
}

func (d *posDecoder) byte() byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail()
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *posDecoder) uint64() uint64 {
	if d.err != nil || len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *posDecoder) uvarint() uint64 {
	v, k := binary.Uvarint(d.b)
	if d.err != nil || k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}

// int returns a uvarint that must be below limit (and fit an int64).
func (d *posDecoder) int(limit int64) int64 {
	v := d.uvarint()
	if d.err == nil && v >= uint64(limit) {
		d.err = fmt.Errorf("corrupt: %d where at most %d fits", v, limit-1)
	}
	return int64(v)
}

// Seek implements weir.Seekable. It refuses a position taken on other
// files, or on files whose sizes differ; a file changed in place without
// a change of size goes unnoticed.
func (r *reader[T]) Seek(pos []byte) error {
	if r.err != nil {
		return errors.New("file: Seek on a closed or failed reader")
	}
	if len(pos) == 0 {
		return errors.New("file: empty position")
	}
	if pos[0] != posFormat {
		return fmt.Errorf("file: position format %d, want %d", pos[0], posFormat)
	}
	ps := &r.pos
	d := posDecoder{b: pos[1:]}
	inst, par := d.uvarint(), d.uvarint()
	if d.err == nil && (inst != uint64(ps.ctx.Instance) || par != uint64(ps.ctx.Parallelism)) {
		return fmt.Errorf("file: position of instance %d of %d, on the reader of instance %d of %d", inst, par, ps.ctx.Instance, ps.ctx.Parallelism)
	}
	if n := d.uvarint(); d.err == nil && n != uint64(len(r.paths)) {
		return fmt.Errorf("file: position taken on %d files, the source has %d", n, len(r.paths))
	}
	fp := d.uint64()
	nread := d.int(int64(len(r.paths)) + 1)
	var mine []int // the files read when the position was taken
	for range nread {
		k := d.int(int64(len(r.paths)))
		size := d.int(1 << 62)
		if d.err != nil {
			break
		}
		if size != ps.sizes[k] {
			return fmt.Errorf("file: %s has %d bytes, %d when the position was taken", r.paths[k], ps.sizes[k], size)
		}
		mine = append(mine, int(k))
	}
	if d.err == nil && fp != ps.fp {
		return errors.New("file: the files differ from those the position was taken on: a path, or the size of a file this reader does not read, changed")
	}
	seg := int(d.int(int64(len(r.segs)) + 1))
	begun := d.byte()
	var start, lines, off int64
	if begun == 1 {
		start, lines, off = d.int(1<<62), d.int(1<<62), d.int(1<<62)
	}
	switch {
	case d.err != nil:
		return fmt.Errorf("file: position of %d bytes is %w", len(pos), d.err)
	case len(d.b) != 0:
		return fmt.Errorf("file: position has %d bytes too many", len(d.b))
	case len(mine) != len(r.segs):
		return fmt.Errorf("file: position lists %d files read, this reader has %d segments", len(mine), len(r.segs))
	case begun > 1 || begun == 1 && seg == len(r.segs):
		return fmt.Errorf("file: position has a corrupt state %d in segment %d of %d", begun, seg, len(r.segs))
	}
	for k, sg := range r.segs {
		if mine[k] != sg.file {
			return fmt.Errorf("file: position lists file %d as segment %d, this reader reads %s", mine[k], k, r.paths[sg.file])
		}
	}
	if begun == 1 {
		if err := r.checkResume(seg, start, lines, off); err != nil {
			return err
		}
	}
	r.seg, r.ready = seg, begun == 1
	r.pos.marks = r.pos.marks[:0]
	if r.ready {
		sg := r.segs[seg]
		r.f, r.hi = r.files[sg.file], sg.hi
		r.s, r.p, r.eof = "", 0, false
		r.off, r.start, r.lines = off, start, lines
		r.pos.starts[seg] = start
	}
	return nil
}

// checkResume checks that resuming segment seg at off is sound: the
// offsets are in order and in the file, and a line starts at off.
func (r *reader[T]) checkResume(seg int, start, lines, off int64) error {
	sg := r.segs[seg]
	path, size := r.paths[sg.file], r.pos.sizes[sg.file]
	switch {
	case start < sg.lo || off < start || off > size:
		return fmt.Errorf("file: %s: position at offset %d (segment from %d, first line at %d) is outside the segment [%d, %d) or the file of %d bytes", path, off, sg.lo, start, sg.lo, sg.hi, size)
	case lines > off-start || (lines == 0) != (off == start):
		return fmt.Errorf("file: %s: position of %d lines between offsets %d and %d is corrupt", path, lines, start, off)
	}
	if off == 0 || off == size {
		return nil
	}
	var c [1]byte
	if _, err := r.files[sg.file].ReadAt(c[:], off-1); err != nil {
		return fmt.Errorf("file: %s: %w", path, err)
	}
	if c[0] != '\n' {
		return fmt.Errorf("file: %s: position at offset %d is not the start of a line: the file changed, or the position is corrupt", path, off)
	}
	return nil
}
