package file

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirstream/weir"
)

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd to count open files")
	}
	return len(ents)
}

// A reader of many files holds one open at a time, and reads every line
// of every file once.
func TestManyFilesOneOpenAtATime(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 500 {
		p := filepath.Join(dir, fmt.Sprintf("f%03d.txt", i))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("a%d\nb%d\n", i, i)), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	base := openFDs(t)
	r, err := Lines(paths, Options{BatchSize: 7}).Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seen := map[string]bool{}
	most := 0
	for {
		b, err := r.Read()
		most = max(most, openFDs(t)-base)
		for _, l := range b {
			if seen[l] {
				t.Fatalf("line %q read twice", l)
			}
			seen[l] = true
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 1000 {
		t.Errorf("%d distinct lines; want 1000", len(seen))
	}
	if most > 2 {
		t.Errorf("the reader held up to %d files open; want 1", most)
	}
}
