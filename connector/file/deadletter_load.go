package file

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weirstream/weir"
)

// A sibling is one of the dead-letter files of an OpenDeadLetter path:
// the path itself (proc -1) or path.process-N.
type sibling struct {
	name string
	proc int
}

// siblings lists the dead-letter files of path, in the order of their
// names.
func siblings(path string) ([]sibling, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("file: dead letter: %w", err)
	}
	var out []sibling
	for _, e := range ents {
		proc := -1
		if name := e.Name(); name != base {
			rest, ok := strings.CutPrefix(name, base+".process-")
			n, err := strconv.Atoi(rest)
			if !ok || err != nil || n < 0 || strconv.Itoa(n) != rest {
				continue
			}
			proc = n
		}
		if e.Type().IsRegular() {
			out = append(out, sibling{filepath.Join(dir, e.Name()), proc})
		}
	}
	return out, nil
}

// writer returns the process of the run that writes s, or -1 if none does.
func (s sibling) writer(rc weir.RecoverContext) int {
	switch {
	case rc.Processes <= 1 && s.proc < 0:
		return 0
	case rc.Processes > 1 && s.proc >= 0 && s.proc < rc.Processes:
		return s.proc
	}
	return -1
}

// load prepares the files for a run: from scratch, process 0 removes the
// files no process of the run writes (each process empties its own when it
// opens it); from a checkpoint, it loads the positions of the letters of
// every file and counts those of this process's (see OpenDeadLetter),
// cutting off an incomplete last line. The caller holds mu.
func (d *DeadLetter) load(rc weir.RecoverContext) error {
	sibs, err := siblings(d.base)
	if err != nil {
		return err
	}
	if rc.Checkpoint == 0 {
		for _, s := range sibs {
			if s.writer(rc) < 0 && rc.Process == 0 {
				if err := os.Remove(s.name); err != nil && !os.IsNotExist(err) {
					return fmt.Errorf("file: dead letter: %w", err)
				}
			}
		}
		return nil
	}
	d.seen = map[letterKey]bool{}
	for _, s := range sibs {
		data, err := os.ReadFile(s.name)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("file: dead letter: %w", err)
		}
		// Another process may be cutting or appending to its file:
		// what is incomplete is left out.
		ls, complete, err := parseLetters(data, s.name)
		if err != nil {
			return err
		}
		for _, l := range ls {
			d.seen[keyOf(l)] = true
		}
		w := s.writer(rc)
		if w != rc.Process && (w >= 0 || rc.Process != 0) {
			continue
		}
		d.n += int64(len(ls))
		if complete < len(data) {
			if err := os.Truncate(s.name, int64(complete)); err != nil {
				return fmt.Errorf("file: dead letter: cutting off an incomplete last line: %w", err)
			}
		}
	}
	return nil
}

// ReadDeadLetters returns the letters of an OpenDeadLetter path: those of
// path and of every path.process-N, in the order of the file names and
// then of the lines. Incomplete last lines are left out, as
// ParseDeadLetters does.
func ReadDeadLetters(path string) ([]Letter, error) {
	sibs, err := siblings(path)
	if err != nil {
		return nil, err
	}
	var all []Letter
	for _, s := range sibs {
		data, err := os.ReadFile(s.name)
		if err != nil {
			return nil, fmt.Errorf("file: %w", err)
		}
		ls, _, err := parseLetters(data, s.name)
		if err != nil {
			return nil, err
		}
		all = append(all, ls...)
	}
	return all, nil
}
