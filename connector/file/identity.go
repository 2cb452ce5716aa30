package file

import (
	"fmt"
	"os"
	"strings"
)

// Identity implements weir.Identified: the files in order, each with its
// size (a file that cannot be read is named so).
func (s *source[T]) Identity() string {
	var b strings.Builder
	b.WriteString("files ")
	for i, p := range s.paths {
		if i > 0 {
			b.WriteString(", ")
		}
		if st, err := os.Stat(p); err != nil {
			fmt.Fprintf(&b, "%s (unreadable)", p)
		} else {
			fmt.Fprintf(&b, "%s (%d bytes)", p, st.Size())
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
