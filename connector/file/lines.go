package file

import "github.com/weirstream/weir"

// Lines reads the lines of text files, without their line endings. Like
// JSONLines, it skips empty lines.
func Lines(paths []string, opts Options) weir.Input[string] {
	return JSONLines(paths, func(line string) (string, error) { return line, nil }, opts)
}
