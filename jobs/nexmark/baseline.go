package nexmark

import (
	"errors"
	"io"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// forEach generates g's events with one reader of g, as the engine's
// source does, and calls f for each in order. It returns the number of
// events.
func forEach(g gen.Nexmark, f func(e *gen.NexmarkEvent)) (int64, error) {
	r, err := g.Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var n int64
	for {
		b, err := r.Read()
		for i := range b {
			f(&b[i])
		}
		n += int64(len(b))
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
