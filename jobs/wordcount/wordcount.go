package wordcount

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/weirstream/weir"
)

// Result is one word and its count.
type Result = weir.WindowResult[string, int64]

// Query counts the words of lines.
func Query(lines weir.Stream[string]) weir.Stream[Result] {
	words := weir.FlatMap(lines, AppendFields, weir.Name("split"), weir.Stateless())
	return weir.Count(weir.Window(weir.KeyBy(words, func(w string) string { return w }), weir.Global(),
		weir.WindowOptions(weir.Name("count"))))
}

// CostedQuery is Query whose count takes cost (a sleep) for every word
// it folds, as DS2's and Dhalion's word counts do: a keyed step whose
// instances each serve a known rate, to try a job that sizes itself.
// Under hash partitioning the keyed count folds every word; under a
// strategy that pre-aggregates, the senders fold them first, and sleep.
func CostedQuery(lines weir.Stream[string], cost time.Duration) weir.Stream[Result] {
	if cost <= 0 {
		return Query(lines)
	}
	words := weir.FlatMap(lines, AppendFields, weir.Name("split"), weir.Stateless())
	return weir.Aggregate(weir.Window(weir.KeyBy(words, func(w string) string { return w }), weir.Global(),
		weir.WindowOptions(weir.Name("count"))), weir.Aggregator[string, int64, int64]{
		Add:   func(n int64, _ string) int64 { time.Sleep(cost); return n + 1 },
		Merge: func(a, b int64) int64 { return a + b },
	})
}

var asciiSpace = [256]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// AppendFields appends the words of s to out, exactly as strings.Fields
// splits them, without allocating: the words are substrings of s.
func AppendFields(s string, out []string) []string {
	start := -1
	for i := 0; i < len(s); {
		c := s[i]
		var space bool
		size := 1
		if c < utf8.RuneSelf {
			space = asciiSpace[c]
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
		}
		if space {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
		i += size
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// Reference counts words plainly with strings.Fields and a map.
func Reference(lines []string) []Result {
	counts := map[string]int64{}
	for _, l := range lines {
		for _, w := range strings.Fields(l) {
			counts[w]++
		}
	}
	out := make([]Result, 0, len(counts))
	for w, n := range counts {
		out = append(out, Result{Key: w, Start: math.MinInt64, End: math.MaxInt64, Value: n})
	}
	Sort(out)
	return out
}

// Sort orders results by word, in byte order.
func Sort(rs []Result) {
	slices.SortFunc(rs, func(a, b Result) int { return cmp.Compare(a.Key, b.Key) })
}
