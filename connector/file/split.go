package file

import (
	"errors"
	"fmt"
	"os"
)

var errIsDir = errors.New("is a directory")

// A segment is the byte range [lo, hi) of one file that a reader owns. The
// reader reads the lines that start in the range; the last one may end
// beyond hi.
type segment struct {
	file   int // index into the paths
	lo, hi int64
}

// share returns the bytes [lo, hi) of total that instance i of n owns.
func share(total int64, i, n int) (lo, hi int64) {
	at := func(k int) int64 {
		// total*k/n without overflow.
		q, r := total/int64(n), total%int64(n)
		return q*int64(k) + r*int64(k)/int64(n)
	}
	return at(i), at(i + 1)
}

// segments splits files of the given sizes, laid end to end, into n equal
// shares of bytes and returns the pieces of share i.
func segments(sizes []int64, i, n int) []segment {
	var total int64
	for _, s := range sizes {
		total += s
	}
	lo, hi := share(total, i, n)
	var segs []segment
	var base int64
	for f, size := range sizes {
		a, b := max(lo, base), min(hi, base+size)
		if a < b {
			segs = append(segs, segment{file: f, lo: a - base, hi: b - base})
		}
		base += size
	}
	return segs
}

// openFiles opens the files that instance i of n reads and returns them
// with its segments and the sizes of all the files; the slice of files is
// indexed like paths, with nil for the files the instance does not read.
func openFiles(paths []string, i, n int) ([]*os.File, []segment, []int64, error) {
	if n <= 0 || i < 0 || i >= n {
		return nil, nil, nil, fmt.Errorf("file: instance %d of %d", i, n)
	}
	files := make([]*os.File, len(paths))
	sizes := make([]int64, len(paths))
	fail := func(err error) ([]*os.File, []segment, []int64, error) {
		closeAll(files)
		return nil, nil, nil, fmt.Errorf("file: %w", err)
	}
	for k, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return fail(err)
		}
		files[k] = f
		st, err := f.Stat()
		if err != nil {
			return fail(err)
		}
		if st.IsDir() {
			return fail(&os.PathError{Op: "open", Path: p, Err: errIsDir})
		}
		sizes[k] = st.Size()
	}
	segs := segments(sizes, i, n)
	used := make([]bool, len(paths))
	for _, s := range segs {
		used[s.file] = true
	}
	for k, f := range files {
		if !used[k] {
			f.Close()
			files[k] = nil
		}
	}
	return files, segs, sizes, nil
}

func closeAll(files []*os.File) error {
	var first error
	for k, f := range files {
		if f != nil {
			if err := f.Close(); err != nil && first == nil {
				first = err
			}
			files[k] = nil
		}
	}
	return first
}
