package skew

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// GoSourceDir returns the src directory of the Go installation: the one
// this program was built with if it still exists, else the one `go env
// GOROOT` names.
func GoSourceDir() (string, error) {
	if root := runtime.GOROOT(); root != "" {
		if st, err := os.Stat(filepath.Join(root, "src")); err == nil && st.IsDir() {
			return filepath.Join(root, "src"), nil
		}
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("skew: cannot find the Go source tree: go env GOROOT: %w", err)
	}
	root := strings.TrimSpace(string(out))
	if root == "" {
		return "", errors.New("skew: cannot find the Go source tree: go env GOROOT is empty")
	}
	return filepath.Join(root, "src"), nil
}

// errEnough stops the walk once GoWords has its words.
var errEnough = errors.New("enough words")

// GoWords returns the words (strings.Fields) of the *.go files under dir,
// file by file in lexical order of their paths, at most limit of them (all
// when limit ≤ 0). It is natural text with the skew of real identifiers and
// keywords, for Simulate and for tests.
func GoWords(dir string, limit int) ([]string, error) {
	var words []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, w := range strings.Fields(string(b)) {
			if limit > 0 && len(words) == limit {
				return errEnough
			}
			words = append(words, w)
		}
		return nil
	})
	if err != nil && err != errEnough {
		return nil, fmt.Errorf("skew: %w", err)
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("skew: no words in *.go files under %s", dir)
	}
	return words, nil
}

// WordKeys gives record i the key of words[i mod len(words)]: a number per
// distinct word, in order of first appearance. It returns the number of
// distinct words.
func WordKeys(recs []Record, words []string) int {
	ids := make(map[string]uint64)
	for i := range recs {
		w := words[i%len(words)]
		id, ok := ids[w]
		if !ok {
			id = uint64(len(ids))
			ids[w] = id
		}
		recs[i].Key = id
	}
	return len(ids)
}
