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

// openFiles checks that instance i of n can read every file (each is
// opened and closed again) and returns its segments and the sizes of all
// the files, with a slice of files indexed like paths, all nil: a reader
// opens the file of the segment it reads, one at a time (see
// reader.open), so that the number of files read is not bounded by the
// number of files a process may have open.
func openFiles(paths []string, i, n int) ([]*os.File, []segment, []int64, error) {
	if n <= 0 || i < 0 || i >= n {
		return nil, nil, nil, fmt.Errorf("file: instance %d of %d", i, n)
	}
	sizes := make([]int64, len(paths))
	for k, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("file: %w", err)
		}
		st, err := f.Stat()
		f.Close()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("file: %w", err)
		}
		if st.IsDir() {
			return nil, nil, nil, fmt.Errorf("file: %w", &os.PathError{Op: "open", Path: p, Err: errIsDir})
		}
		sizes[k] = st.Size()
	}
	return make([]*os.File, len(paths)), segments(sizes, i, n), sizes, nil
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
