package file

import (
	"errors"
	"fmt"
	"slices"
)

// A reader implements weir.Rescalable. A reader of the old run owned the
// lines that start in its segments; it had read those before its position
// (in the segment it was in, the lines that start before the offset of
// the next line) and left the others. So what it left is a list of byte
// ranges, each in one file: from the offset of the next line to the end
// of its segment, then its later segments. A new reader reads the lines
// that start in these ranges, cut to its own share: its segments are
// those pieces, in the order of the files, and it reads them as it would
// its share. A piece may start mid-line, at the start of an old segment
// or of the new share, in which case the line that crosses its start
// belongs to another piece and is skipped, as always.
//
// Line numbers need nothing more: a reader counts the lines of a file
// before the first line of a segment when an error needs it. Header skips
// the first line of a file only when a piece starts at offset 0, which
// is when it was left unread.
//
// The positions of such a reader have format posSplitFormat, which lists
// its segments; Seek and SeekSplits take them like any other.

// inShare checks that the segments of a position of format 2 are in the
// share of instance i of n.
func (r *reader[T]) inShare(segs []segment, i, n int) error {
	sizes := r.pos.sizes
	var total int64
	for _, size := range sizes {
		total += size
	}
	lo, hi := share(total, i, n)
	for _, sg := range segs {
		if base := fileBase(sizes, sg.file); base+sg.lo < lo || base+sg.hi > hi {
			return fmt.Errorf("position has a segment [%d, %d) of %s outside the share of instance %d of %d", sg.lo, sg.hi, r.paths[sg.file], i, n)
		}
	}
	return nil
}

// SeekSplits implements weir.Rescalable. With the parallelism of the
// positions, it is Seek.
func (r *reader[T]) SeekSplits(positions [][]byte) error {
	if r.err != nil {
		return errors.New("file: SeekSplits on a closed or failed reader")
	}
	par := len(positions)
	if par == 0 {
		return errors.New("file: SeekSplits without positions")
	}
	ps := &r.pos
	olds := make([]filePos, par)
	for j, pos := range positions {
		p, err := r.decodePos(pos, func(inst, n uint64) error {
			if inst != uint64(j) || n != uint64(par) {
				return fmt.Errorf("position of instance %d of %d", inst, n)
			}
			return nil
		})
		if err == nil {
			if p.format == posSplitFormat {
				err = r.inShare(p.segs, j, par)
			} else {
				own := segments(ps.sizes, j, par)
				err = r.sameFiles(p.segs, own)
				p.segs = own
			}
		}
		if err != nil {
			return fmt.Errorf("file: position %d of %d: %w", j, par, err)
		}
		if p.begun {
			// Whether a line starts at the offset is checked below, by
			// the reader that resumes there, which has the file open.
			if err := r.checkResume(p.segs[p.seg], p.start, p.lines, p.off, false); err != nil {
				return fmt.Errorf("file: position %d of %d: %w", j, par, err)
			}
		}
		olds[j] = p
	}
	if par == ps.ctx.Parallelism {
		return r.Seek(positions[ps.ctx.Instance])
	}
	var total int64
	for _, size := range ps.sizes {
		total += size
	}
	lo, hi := share(total, ps.ctx.Instance, ps.ctx.Parallelism)
	var segs []segment
	for _, p := range olds {
		for k := p.seg; k < len(p.segs); k++ {
			sg := p.segs[k]
			from := sg.lo
			if k == p.seg && p.begun {
				from = max(from, p.off)
			}
			base := fileBase(ps.sizes, sg.file)
			a, b := max(from, lo-base), min(sg.hi, hi-base)
			if a >= b {
				continue
			}
			if k == p.seg && p.begun && a == p.off {
				if err := r.checkResume(sg, p.start, p.lines, p.off, true); err != nil {
					return fmt.Errorf("file: %w", err)
				}
			}
			segs = append(segs, segment{file: sg.file, lo: a, hi: b})
		}
	}
	// The old shares come in order, without overlap; merge the pieces that
	// touch.
	merged := segs[:0]
	for _, sg := range segs {
		if n := len(merged); n > 0 && merged[n-1].file == sg.file && merged[n-1].hi == sg.lo {
			merged[n-1].hi = sg.hi
		} else {
			merged = append(merged, sg)
		}
	}
	r.setSegments(slices.Clip(merged), true)
	return nil
}
