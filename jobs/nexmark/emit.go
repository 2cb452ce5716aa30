package nexmark

import (
	"github.com/weirstream/weir"
)

// row is a query's result row: it writes itself as a CSV line and hashes
// its typed columns the way ChecksumOf hashes the line.
type row interface {
	csv(l line) line
	hash() uint64
}

// emit sends a query's result rows to the sinks. key is the key of an
// updating query's rows, nil for others.
func emit[R any, P interface {
	*R
	row
}](rows weir.Stream[R], sk Sinks, key func(*R) int64) {
	if sk.CSV != nil {
		text := weir.MapRef(rows, func(r *R) string {
			var buf [256]byte
			return string(P(r).csv(buf[:0]))
		}, weir.Name("csv"), weir.Stateless())
		weir.Sink(text, sk.CSV, weir.Name("csv-out"))
	}
	if sk.Sum != nil {
		hs := weir.MapRef(rows, func(r *R) hashed {
			h := hashed{H: P(r).hash()}
			if key != nil {
				h.Key = key(r)
			}
			return h
		}, weir.Name("hash"), weir.Stateless())
		weir.Sink(hs, weir.Output[hashed](&sumSink{c: sk.Sum, updating: key != nil}), weir.Name("checksum"))
	}
}

// rowsOf turns sequential results into CSV lines.
func rowsOf[R any, P interface {
	*R
	row
}](rs []R) []string {
	out := make([]string, len(rs))
	for i := range rs {
		out[i] = string(P(&rs[i]).csv(nil))
	}
	return out
}

// sumOf digests sequential results as the checksum sink does.
func sumOf[R any, P interface {
	*R
	row
}](rs []R) Checksum {
	var c Checksum
	for i := range rs {
		c.add(P(&rs[i]).hash())
	}
	return c
}
