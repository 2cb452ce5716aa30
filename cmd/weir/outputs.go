package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// flagPath is a path and the flag that gave it.
type flagPath struct{ flag, path string }

func (p flagPath) String() string { return p.flag + " " + p.path }

// paths are a command's inputs and outputs, checked before anything is
// opened: no output may be an input or another output (by resolved
// absolute path, or as the same file through a link), and no output
// directory may hold an input, an output file or another output
// directory. Then each output this process writes must be writable.
type paths struct {
	inputs []flagPath // files read
	files  []flagPath // files written
	dirs   []flagPath // directories written (checkpoints, state)
	// writes are the outputs this process writes (process 0 alone writes
	// --out); their writability is checked.
	writes []flagPath
}

func (ps *paths) input(flag string, path ...string) {
	for _, p := range path {
		ps.inputs = append(ps.inputs, flagPath{flag, p})
	}
}

// output adds a file output; mine says whether this process writes it.
func (ps *paths) output(flag, path string, mine bool) {
	if path != "" {
		ps.files = append(ps.files, flagPath{flag, path})
		if mine {
			ps.writes = append(ps.writes, flagPath{flag, path})
		}
	}
}

func (ps *paths) dir(flag, path string) {
	if path != "" {
		ps.dirs = append(ps.dirs, flagPath{flag, path})
	}
}

// jobDirs adds the directories a job's flags make it write.
func (ps *paths) jobDirs(jf *jobFlags) {
	ckpt := jf.ckptDir
	if ckpt == "" && jf.fromCkpt != "" {
		ckpt = filepath.Dir(jf.fromCkpt)
	}
	ps.dir("--checkpoint-dir", ckpt)
	if jf.state == "pebble" {
		ps.dir("--state-dir", jf.stateDir)
	}
}

// check runs the checks.
func (ps *paths) check() error {
	type known struct {
		flagPath
		real string
		st   os.FileInfo // nil if it does not exist
	}
	// An input's real path matters only to an output directory, which
	// might hold it; otherwise its absolute path and the file do.
	resolve := func(ps []flagPath, links bool) ([]known, error) {
		out := make([]known, len(ps))
		for k, p := range ps {
			r, err := filepath.Abs(p.path)
			if links {
				r, err = realPath(p.path)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %v", p, err)
			}
			out[k] = known{flagPath: p, real: r}
			out[k].st, _ = os.Stat(p.path)
		}
		return out, nil
	}
	ins, err := resolve(ps.inputs, len(ps.dirs) > 0)
	if err != nil {
		return err
	}
	files, err := resolve(ps.files, true)
	if err != nil {
		return err
	}
	dirs, err := resolve(ps.dirs, true)
	if err != nil {
		return err
	}
	same := func(a, b known) bool {
		return a.real == b.real || a.st != nil && b.st != nil && os.SameFile(a.st, b.st)
	}
	for k, o := range files {
		for _, in := range ins {
			if same(o, in) {
				return fmt.Errorf("%s: is the %s file; an output must not overwrite an input", o, in.flag)
			}
		}
		for _, o2 := range files[:k] {
			if same(o, o2) {
				return fmt.Errorf("%s: is also %s; two outputs must not share a file", o, o2)
			}
		}
	}
	for k, d := range dirs {
		for _, in := range ins {
			if same(d, in) || within(in.real, d.real) {
				return fmt.Errorf("%s: holds the %s file %s; an output directory must not hold an input", d, in.flag, in.path)
			}
		}
		for _, o := range files {
			if same(d, o) || within(o.real, d.real) {
				return fmt.Errorf("%s: holds the %s file %s; give them apart", d, o.flag, o.path)
			}
		}
		for _, d2 := range dirs[:k] {
			if d.real == d2.real || within(d.real, d2.real) || within(d2.real, d.real) {
				return fmt.Errorf("%s: overlaps %s; give them apart", d, d2)
			}
		}
	}
	for _, w := range ps.writes {
		if err := fileWritable(w.path); err != nil {
			return fmt.Errorf("%s: %v", w, err)
		}
	}
	for _, d := range ps.dirs {
		if err := dirWritable(d.path); err != nil {
			return fmt.Errorf("%s: %v", d, err)
		}
	}
	return nil
}

// within reports whether path p is inside directory dir.
func within(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// realPath returns the absolute path of p with the symbolic links of its
// longest existing prefix resolved (p need not exist).
func realPath(p string) (string, error) {
	a, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(a); err == nil {
			return filepath.Join(r, rest), nil
		}
		parent := filepath.Dir(a)
		if parent == a {
			return filepath.Join(a, rest), nil
		}
		rest = filepath.Join(filepath.Base(a), rest)
		a = parent
	}
}

// fileWritable checks that the file at path can be written, without
// changing it: an existing regular file is opened for writing (not
// truncated); otherwise a temporary file is made and removed in its
// directory, which must exist. Other existing files (devices, pipes) are
// left to the write itself.
func fileWritable(path string) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("is a directory")
	case err == nil && st.Mode().IsRegular():
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("cannot be written: %v", unwrapPath(err))
		}
		return f.Close()
	case err == nil:
		return nil
	case !missing(err):
		return unwrapPath(err)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil {
		return fmt.Errorf("directory %s does not exist", dir)
	} else if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".weir-check-*")
	if err != nil {
		return fmt.Errorf("cannot be created: %v", unwrapPath(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// dirWritable checks that files can be made in directory path, or that
// it can be made: a temporary directory is made and removed in it, or in
// its nearest existing parent.
func dirWritable(path string) error {
	at := path
	for {
		st, err := os.Stat(at)
		if err == nil && !st.IsDir() {
			if at == path {
				return fmt.Errorf("is not a directory")
			}
			return fmt.Errorf("%s is not a directory", at)
		}
		if err == nil {
			break
		}
		if !missing(err) {
			return unwrapPath(err)
		}
		parent := filepath.Dir(at)
		if parent == at {
			break
		}
		at = parent
	}
	d, err := os.MkdirTemp(at, ".weir-check-*")
	if err != nil {
		return fmt.Errorf("cannot be written: %v", unwrapPath(err))
	}
	return os.Remove(d)
}

// missing reports whether err says that a path does not exist, or that
// one of its parents is not a directory.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
