package nexmark

import (
	"bufio"
	"fmt"
	"io"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/connector/gen"
)

// JSONInput is a source of the events in JSON-lines files (file.JSONLines
// with DecodeJSON): a bad line fails the job with an error that names its
// file and line, or goes to opts.DeadLetter with its position and reason.
func JSONInput(paths []string, opts file.Options) weir.Input[gen.NexmarkEvent] {
	return file.JSONLines(paths, DecodeJSON, opts)
}

// Counts are the events of each kind that WriteJSON wrote.
type Counts struct{ Persons, Auctions, Bids int64 }

// Total is the number of events.
func (c Counts) Total() int64 { return c.Persons + c.Auctions + c.Bids }

// WriteJSON writes the events of g (one instance of it, so all of them in
// order; g.Events must be set) to w as JSON lines.
func WriteJSON(w io.Writer, g gen.Nexmark) (Counts, error) {
	var c Counts
	if g.Events <= 0 {
		return c, fmt.Errorf("nexmark: WriteJSON needs a number of events, not %d", g.Events)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var line []byte
	var werr error
	_, err := forEach(g, func(e *gen.NexmarkEvent) {
		switch e.Kind {
		case gen.PersonKind:
			c.Persons++
		case gen.AuctionKind:
			c.Auctions++
		default:
			c.Bids++
		}
		line = append(AppendJSON(line[:0], e), '\n')
		if werr == nil {
			_, werr = bw.Write(line)
		}
	})
	if err == nil {
		err = werr
	}
	if err == nil {
		err = bw.Flush()
	}
	return c, err
}
