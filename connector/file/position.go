package file

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/bin"
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
//
// A reader resumed by SeekSplits from another parallelism reads other
// segments than those of its share (see rescale.go); its positions have
// format posSplitFormat, in which each file read is followed by the
// uvarints lo and hi of the segment, the bytes [lo, hi) of the file.
const (
	posFormat      = 1
	posSplitFormat = 2
)

// positions is what a reader keeps to answer Position.
type positions struct {
	ctx    weir.SourceContext
	sizes  []int64   // of all the files
	own    []segment // the segments of the share
	split  bool      // the segments are not those of the share
	fp     uint64    // fingerprint of the paths and sizes
	starts []int64   // by segment: the offset of its first line, once begun
	// bases[k] is the offset of segs[k].file in the files laid end to end,
	// where the segments of a reader come in order.
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
		p = canonical(p)
		b = binary.AppendUvarint(b[:0], uint64(len(p)))
		b = append(b, p...)
		b = binary.AppendUvarint(b, uint64(sizes[k]))
		h.Write(b)
	}
	r.pos = positions{ctx: ctx, sizes: sizes, fp: h.Sum64(), own: r.segs, marks: make([]mark, 0, batch)}
	r.setSegments(r.segs, false)
}

// setSegments makes segs the segments to read, from the first; split
// says whether they are not those of the share.
func (r *reader[T]) setSegments(segs []segment, split bool) {
	ps := &r.pos
	r.segs, ps.split = segs, split
	ps.bases, ps.starts = make([]int64, len(segs)), make([]int64, len(segs))
	var base int64
	f := 0
	for k, sg := range segs {
		if sg.file < f { // not in file order: count from the start
			base, f = 0, 0
		}
		for ; f < sg.file; f++ {
			base += ps.sizes[f]
		}
		ps.bases[k] = base
	}
	r.seg, r.ready = 0, false
	ps.marks = ps.marks[:0]
}

// fileBase returns the offset of file f in the files laid end to end.
func fileBase(sizes []int64, f int) int64 {
	var base int64
	for _, size := range sizes[:f] {
		base += size
	}
	return base
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
	if r.dl != nil {
		// A checkpoint must not cover a letter that a crash could lose.
		if err := r.dl.Sync(); err != nil {
			return nil, err
		}
	}
	ps := &r.pos
	if used < 0 || used > len(ps.marks) {
		return nil, fmt.Errorf("file: Position(%d) after a batch of %d records", used, len(ps.marks))
	}
	b := make([]byte, 0, 64)
	b = append(b, posFormat)
	if ps.split {
		b[0] = posSplitFormat
	}
	b = binary.AppendUvarint(b, uint64(ps.ctx.Instance))
	b = binary.AppendUvarint(b, uint64(ps.ctx.Parallelism))
	b = binary.AppendUvarint(b, uint64(len(r.paths)))
	b = binary.LittleEndian.AppendUint64(b, ps.fp)
	b = binary.AppendUvarint(b, uint64(len(r.segs)))
	for _, sg := range r.segs {
		b = binary.AppendUvarint(b, uint64(sg.file))
		b = binary.AppendUvarint(b, uint64(ps.sizes[sg.file]))
		if ps.split {
			b = binary.AppendUvarint(b, uint64(sg.lo))
			b = binary.AppendUvarint(b, uint64(sg.hi))
		}
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

// posDecoder reads the fields of a position; the first error sticks.
type posDecoder = bin.Decoder

// filePos is a decoded position.
type filePos struct {
	format            byte
	inst, par         uint64
	segs              []segment // format 1: without lo and hi
	seg               int
	begun             bool
	start, lines, off int64
}

// decodePos decodes pos and checks it against the files; inst checks its
// instance and parallelism.
func (r *reader[T]) decodePos(pos []byte, inst func(inst, par uint64) error) (filePos, error) {
	var p filePos
	if len(pos) == 0 {
		return p, errors.New("empty position")
	}
	if p.format = pos[0]; p.format != posFormat && p.format != posSplitFormat {
		return p, fmt.Errorf("position format %d, want %d or %d", pos[0], posFormat, posSplitFormat)
	}
	ps := &r.pos
	d := posDecoder{B: pos[1:]}
	p.inst, p.par = d.Uvarint(), d.Uvarint()
	if d.Err == nil {
		if err := inst(p.inst, p.par); err != nil {
			return p, err
		}
	}
	if n := d.Uvarint(); d.Err == nil && n != uint64(len(r.paths)) {
		return p, fmt.Errorf("position taken on %d files, the source has %d", n, len(r.paths))
	}
	fp := d.Uint64()
	limit := int64(len(r.paths)) + 1 // format 1: one segment per file at most
	if p.format == posSplitFormat {
		limit = int64(len(pos))
	}
	nsegs := d.Int(limit)
	for range nsegs {
		k := d.Int(int64(len(r.paths)))
		size := d.Int(1 << 62)
		if d.Err != nil {
			break
		}
		if size != ps.sizes[k] {
			return p, fmt.Errorf("%s has %d bytes, %d when the position was taken", r.paths[k], ps.sizes[k], size)
		}
		sg := segment{file: int(k)}
		if p.format == posSplitFormat {
			sg.lo, sg.hi = d.Int(size+1), d.Int(size+1)
			if n := len(p.segs); d.Err == nil && (sg.lo >= sg.hi || n > 0 && (p.segs[n-1].file > sg.file || p.segs[n-1].file == sg.file && p.segs[n-1].hi > sg.lo)) {
				return p, fmt.Errorf("position has a segment [%d, %d) of %s out of order or empty", sg.lo, sg.hi, r.paths[k])
			}
		}
		p.segs = append(p.segs, sg)
	}
	if d.Err == nil && fp != ps.fp {
		return p, errors.New("the files differ from those the position was taken on: a path, or the size of a file this reader does not read, changed")
	}
	p.seg = int(d.Int(int64(len(p.segs)) + 1))
	begun := d.Byte()
	if begun == 1 {
		p.start, p.lines, p.off = d.Int(1<<62), d.Int(1<<62), d.Int(1<<62)
	}
	switch {
	case d.Err != nil:
		return p, fmt.Errorf("position of %d bytes is %w", len(pos), d.Err)
	case len(d.B) != 0:
		return p, fmt.Errorf("position has %d bytes too many", len(d.B))
	case begun > 1 || begun == 1 && p.seg == len(p.segs):
		return p, fmt.Errorf("position has a corrupt state %d in segment %d of %d", begun, p.seg, len(p.segs))
	}
	p.begun = begun == 1
	return p, nil
}

// Seek implements weir.Seekable. It refuses a position taken on other
// files, or on files whose sizes differ; a file changed in place without
// a change of size goes unnoticed.
func (r *reader[T]) Seek(pos []byte) error {
	if r.err != nil {
		return errors.New("file: Seek on a closed or failed reader")
	}
	ctx := r.pos.ctx
	p, err := r.decodePos(pos, func(inst, par uint64) error {
		if inst != uint64(ctx.Instance) || par != uint64(ctx.Parallelism) {
			return fmt.Errorf("position of instance %d of %d, on the reader of instance %d of %d", inst, par, ctx.Instance, ctx.Parallelism)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("file: %w", err)
	}
	segs := r.pos.own
	if p.format == posSplitFormat {
		if err := r.inShare(p.segs, ctx.Instance, ctx.Parallelism); err != nil {
			return fmt.Errorf("file: %w", err)
		}
		segs = p.segs
	} else if err := r.sameFiles(p.segs, segs); err != nil {
		return fmt.Errorf("file: %w", err)
	}
	if p.begun {
		if err := r.checkResume(segs[p.seg], p.start, p.lines, p.off, true); err != nil {
			return fmt.Errorf("file: %w", err)
		}
	}
	r.setSegments(segs, p.format == posSplitFormat)
	r.seg, r.ready = p.seg, p.begun
	if r.ready {
		sg := segs[p.seg]
		if err := r.open(sg.file); err != nil {
			return err
		}
		r.hi = sg.hi
		r.s, r.p, r.eof = "", 0, false
		r.off, r.start, r.lines = p.off, p.start, p.lines
		r.pos.starts[p.seg] = p.start
	}
	return nil
}

// sameFiles checks that the files listed in a position of format 1 are
// those of segs.
func (r *reader[T]) sameFiles(listed, segs []segment) error {
	if len(listed) != len(segs) {
		return fmt.Errorf("position lists %d files read, this reader has %d segments", len(listed), len(segs))
	}
	for k, sg := range segs {
		if listed[k].file != sg.file {
			return fmt.Errorf("position lists file %d as segment %d, this reader reads %s", listed[k].file, k, r.paths[sg.file])
		}
	}
	return nil
}

// checkResume checks that resuming segment sg at off is sound: the
// offsets are in order and in the file, and, with line, a line starts at
// off (the file must be open).
func (r *reader[T]) checkResume(sg segment, start, lines, off int64, line bool) error {
	path, size := r.paths[sg.file], r.pos.sizes[sg.file]
	switch {
	case start < sg.lo || off < start || off > size:
		return fmt.Errorf("%s: position at offset %d (segment from %d, first line at %d) is outside the segment [%d, %d) or the file of %d bytes", path, off, sg.lo, start, sg.lo, sg.hi, size)
	case lines > off-start || (lines == 0) != (off == start):
		return fmt.Errorf("%s: position of %d lines between offsets %d and %d is corrupt", path, lines, start, off)
	}
	if !line || off == 0 || off == size {
		return nil
	}
	var c [1]byte
	if err := r.open(sg.file); err != nil {
		return err
	}
	if _, err := r.f.ReadAt(c[:], off-1); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if c[0] != '\n' {
		return fmt.Errorf("%s: position at offset %d is not the start of a line: the file changed, or the position is corrupt", path, off)
	}
	return nil
}
