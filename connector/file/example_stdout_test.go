package file_test

import (
	"log"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
)

// Stdout prints a struct with its field names: a window's result reads
// as what it is.
func ExampleStdout() {
	out := file.Stdout[weir.WindowResult[string, int64]]()
	err := out.Write([]weir.WindowResult[string, int64]{
		{Key: "ann", Start: 0, End: 10_000, Value: 2},
		{Key: "bob", Start: 10_000, End: 20_000, Value: 1},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := out.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// {Key:ann Start:0 End:10000 Value:2}
	// {Key:bob Start:10000 End:20000 Value:1}
}
