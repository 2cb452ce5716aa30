package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// stdinPath is the --input that stands for standard input.
const stdinPath = "-"

// expandInputs turns the values of --input into the files to read, in
// order:
//
//   - "-" is standard input, which must then be the only input;
//   - @FILE reads one path per line from FILE (blank lines aside), each
//     taken as a file or directory, not as a pattern;
//   - a directory stands for every file under it, recursively, in
//     lexical order, hidden ones (.name) included: nothing under it is
//     skipped. A symbolic link to a file is read; one to a directory, or
//     anything that is neither a file nor a directory, is refused, so that
//     nothing is left out unsaid;
//   - a value that names no file but holds *, ? or [ is a pattern
//     (filepath.Match's), expanded here when the shell did not: its
//     matches in lexical order, each as above. A pattern that matches
//     nothing is refused.
//
// The same file given twice (by two values, or through a link) is refused,
// since its words would count twice.
func expandInputs(values []string) ([]string, error) {
	var paths []string
	for _, v := range values {
		if v == stdinPath {
			if len(values) > 1 {
				return nil, fmt.Errorf("--input -: standard input is read alone; give no other --input")
			}
			return []string{stdinPath}, nil
		}
		got, err := expandInput(v)
		if err != nil {
			return nil, err
		}
		paths = append(paths, got...)
	}
	if err := noRepeats(paths); err != nil {
		return nil, err
	}
	return paths, nil
}

func expandInput(v string) ([]string, error) {
	if list, ok := strings.CutPrefix(v, "@"); ok {
		if _, err := os.Lstat(v); err != nil { // not a file named @...
			return readList(list)
		}
	}
	if _, err := os.Lstat(v); err != nil && strings.ContainsAny(v, "*?[") {
		matches, gerr := filepath.Glob(v)
		if gerr != nil {
			return nil, fmt.Errorf("--input %s: %v", v, gerr)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("--input %s: matches no file", v)
		}
		slices.Sort(matches)
		var out []string
		for _, m := range matches {
			got, err := inputFiles(v, m)
			if err != nil {
				return nil, err
			}
			out = append(out, got...)
		}
		return out, nil
	}
	return inputFiles(v, v)
}

// readList reads the paths listed in the file list, one per line.
func readList(list string) ([]string, error) {
	f, err := os.Open(list)
	if err != nil {
		return nil, fmt.Errorf("--input @%s: %v", list, err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		p := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(p) == "" {
			continue
		}
		got, err := inputFiles(fmt.Sprintf("@%s:%d", list, line), p)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--input @%s: %v", list, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--input @%s: lists no file", list)
	}
	return out, nil
}

// inputFiles returns path if it is a file, or the files under it if it is
// a directory; from names where path came from, in errors.
func inputFiles(from, path string) ([]string, error) {
	where := "--input " + from
	if from != path {
		where += ": " + path
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--input %s: %v", from, unwrapPath(err))
	}
	if st.Mode().IsRegular() {
		return []string{path}, nil
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a regular file (%v)", where, st.Mode().Type())
	}
	var out []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch t := d.Type(); {
		case d.IsDir():
			return nil
		case t.IsRegular():
			out = append(out, p)
			return nil
		case t&fs.ModeSymlink != 0:
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			if !st.Mode().IsRegular() {
				return fmt.Errorf("%s is a symbolic link to a directory or special file; give it as an --input of its own", p)
			}
			out = append(out, p)
			return nil
		default:
			return fmt.Errorf("%s is not a regular file (%v)", p, t)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: the directory holds no file", where)
	}
	return out, nil
}

// unwrapPath drops the operation of a *fs.PathError ("stat x: no such
// file" reads "x: no such file").
func unwrapPath(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}

// noRepeats refuses a file listed twice, by name or through links.
func noRepeats(paths []string) error {
	seen := map[string]string{}
	infos := make([]os.FileInfo, 0, len(paths))
	for _, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		if prev, dup := seen[a]; dup {
			return fmt.Errorf("--input %s: given twice (also as %s); its lines would count twice", p, prev)
		}
		seen[a] = p
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("--input %s: %v", p, unwrapPath(err))
		}
		infos = append(infos, st)
	}
	byID := map[fileID]string{}
	for k, st := range infos {
		id, ok := idOf(st)
		if !ok {
			continue
		}
		if prev, dup := byID[id]; dup {
			return fmt.Errorf("--input %s: the same file as %s; its lines would count twice", paths[k], prev)
		}
		byID[id] = paths[k]
	}
	return nil
}
