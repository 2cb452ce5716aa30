package file_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
)

type visit struct {
	user, page string
}

func (v visit) String() string { return v.user + " visited " + v.page }

func Example() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "visits.csv")
	data := "user,page\nann,/home\n\nbob,\"/search?q=a,b\"\ncarl\nann,/cart\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		log.Fatal(err)
	}

	var rejected strings.Builder
	src := file.CSV([]string{path}, func(f []string) (visit, error) {
		if len(f) != 2 {
			return visit{}, fmt.Errorf("%d fields, want 2", len(f))
		}
		return visit{user: f[0], page: f[1]}, nil
	}, file.Options{Header: true, DeadLetter: file.NewDeadLetter(&rejected)})
	out := file.Stdout[visit]()

	// A job opens one reader per instance of the source; here there is one.
	r, err := src.Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for {
		batch, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		if err := out.Write(batch); err != nil {
			log.Fatal(err)
		}
	}
	if err := out.Close(); err != nil {
		log.Fatal(err)
	}
	letters, err := file.ParseDeadLetters([]byte(rejected.String()))
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range letters {
		fmt.Printf("rejected: %s:%d at byte %d: %s: %q\n", filepath.Base(l.File), l.Line, l.Offset, l.Reason, l.Record)
	}
	// Output:
	// ann visited /home
	// bob visited /search?q=a,b
	// ann visited /cart
	// rejected: visits.csv:5 at byte 41: 1 fields, want 2: "carl"
}
