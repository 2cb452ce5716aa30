package file

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Identity implements weir.Identified: the files in order, by absolute
// path (so a file named another way from another directory is the same),
// each with its size (a file that cannot be read is named so).
func (s *source[T]) Identity() string {
	var b strings.Builder
	b.WriteString("files ")
	for i, p := range s.paths {
		if i > 0 {
			b.WriteString(", ")
		}
		if st, err := os.Stat(p); err != nil {
			fmt.Fprintf(&b, "%s (unreadable)", canonical(p))
		} else {
			fmt.Fprintf(&b, "%s (%d bytes)", canonical(p), st.Size())
		}
	}
	if s.opts.Header {
		b.WriteString(", header lines skipped")
	}
	return b.String()
}

// Counters implements weir.Counted: the dead letters of the source's
// dead-letter output, if it has one (so a job's summary reports them,
// summed over its processes).
func (s *source[T]) Counters() map[string]int64 {
	if s.opts.DeadLetter == nil {
		return nil
	}
	return map[string]int64{"dead_letters": s.opts.DeadLetter.Count()}
}

// canonical is the absolute, clean form of a path, as positions and
// identities compare paths; a path that cannot be made absolute stays
// as it is.
func canonical(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
