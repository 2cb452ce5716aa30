package file

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/weirstream/weir"
)

// CSV returns a source of the records decoded from the lines of CSV files,
// one record per non-empty line. decode receives the fields of a line; the
// slice is reused for the next line, but the strings are never modified, so
// the record may keep them.
//
// A field may be quoted with '"', and a quote inside a quoted field is
// doubled, as in RFC 4180. A field is a substring of the line unless it has
// doubled quotes, so reading does not allocate per record. A quoted field
// cannot span lines. A quote inside an unquoted field, or text after the
// closing quote of a field, is an error.
func CSV[T any](paths []string, decode func(fields []string) (T, error), opts Options) weir.Input[T] {
	return &source[T]{
		paths: slices.Clone(paths),
		opts:  opts,
		newDecoder: func() func(string) (T, error) {
			var fields []string
			return func(line string) (T, error) {
				var err error
				fields, err = splitCSV(line, fields[:0])
				if err != nil {
					var zero T
					return zero, err
				}
				return decode(fields)
			}
		},
	}
}

// splitCSV appends the fields of line to dst.
func splitCSV(line string, dst []string) ([]string, error) {
	for i := 0; ; {
		if i < len(line) && line[i] == '"' {
			j, doubled := i+1, false
			for {
				k := strings.IndexByte(line[j:], '"')
				if k < 0 {
					return dst, fmt.Errorf("field %d: quoted field has no closing quote", len(dst)+1)
				}
				j += k
				if j+1 < len(line) && line[j+1] == '"' {
					doubled = true
					j += 2
					continue
				}
				break
			}
			field := line[i+1 : j]
			if doubled {
				field = strings.ReplaceAll(field, `""`, `"`)
			}
			dst = append(dst, field)
			j++
			if j == len(line) {
				return dst, nil
			}
			if line[j] != ',' {
				return dst, fmt.Errorf("field %d: unexpected %q after the closing quote", len(dst), line[j])
			}
			i = j + 1
			continue
		}
		k := i + commaOrQuote(line[i:])
		if k < len(line) && line[k] == '"' {
			return dst, fmt.Errorf("field %d: quote in an unquoted field", len(dst)+1)
		}
		dst = append(dst, line[i:k])
		if k == len(line) {
			return dst, nil
		}
		i = k + 1
	}
}

// commaOrQuote returns the index of the first ',' or '"' in s, or len(s).
// It looks at 8 bytes at a time.
func commaOrQuote(s string) int {
	const ones = 0x0101010101010101
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		c := x ^ (ones * ',')
		q := x ^ (ones * '"')
		// The high bit of a byte is set where c or q is zero; bits above
		// the lowest set one may be wrong.
		if m := ((c-ones)&^c | (q-ones)&^q) & (ones * 0x80); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if s[i] == ',' || s[i] == '"' {
			return i
		}
	}
	return i
}
