package nexmark

import (
	"encoding/csv"
	"strconv"
	"strings"

	"github.com/weirstream/weir/internal/partition"
)

// col is the type of a result column, which says how it is written and
// hashed.
type col uint8

const (
	colInt   col = iota // an integer (ids, prices in cents, times in ms)
	colStr              // a string, quoted as CSV needs
	colMilli            // an exact decimal with up to 3 decimals (q1's price)
	colFloat            // a float64, shortest form that reads back exactly
)

// cols builds a column list from a compact spec: i, s, m or f per column.
func cols(spec string) []col {
	out := make([]col, len(spec))
	for i, c := range spec {
		out[i] = map[rune]col{'i': colInt, 's': colStr, 'm': colMilli, 'f': colFloat}[c]
	}
	return out
}

func splitHeader(h string) []string { return strings.Split(h, ",") }

// appendInt writes an integer column, preceded by a comma unless first.
func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

// appendStr writes a string column, quoted when it holds a comma, a quote
// or a line break (RFC 4180).
func appendStr(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(append(b, '"'), strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
}

// appendMilli writes v thousandths as an exact decimal: 908000 as "908",
// 111684 as "111.684", 136200 as "136.2".
func appendMilli(b []byte, v int64) []byte {
	u := uint64(v)
	if v < 0 {
		b, u = append(b, '-'), -u
	}
	b = strconv.AppendUint(b, u/1000, 10)
	f := u % 1000
	if f == 0 {
		return b
	}
	d := []byte{'.', byte('0' + f/100), byte('0' + f/10%10), byte('0' + f%10)}
	for d[len(d)-1] == '0' {
		d = d[:len(d)-1]
	}
	return append(b, d...)
}

// parseMilli reads what appendMilli writes.
func parseMilli(s string) (int64, bool) {
	ip, fp, dot := strings.Cut(s, ".")
	neg := strings.HasPrefix(ip, "-")
	i, err := strconv.ParseInt(strings.TrimPrefix(ip, "-"), 10, 64)
	if err != nil || (dot && (len(fp) == 0 || len(fp) > 3)) {
		return 0, false
	}
	f := int64(0)
	if dot {
		fp += strings.Repeat("0", 3-len(fp))
		if f, err = strconv.ParseInt(fp, 10, 64); err != nil || f < 0 {
			return 0, false
		}
	}
	v := i*1000 + f
	if neg {
		v = -v
	}
	return v, true
}

func appendFloat(b []byte, v float64) []byte { return strconv.AppendFloat(b, v, 'f', -1, 64) }

// line is a CSV line under construction: columns are appended with a
// comma between them.
type line []byte

func (l line) sep() line {
	if len(l) > 0 {
		return append(l, ',')
	}
	return l
}

func (l line) int(v int64) line     { return appendInt(l.sep(), v) }
func (l line) str(s string) line    { return appendStr(l.sep(), s) }
func (l line) milli(v int64) line   { return appendMilli(l.sep(), v) }
func (l line) float(v float64) line { return appendFloat(l.sep(), v) }

// ChecksumOf digests final CSV lines (as Reference returns them, or as a
// query writes them to Sinks.CSV: for an updating query the last line of
// each key counts). A line that does not parse as the query's columns
// counts as a row that matches no result.
func ChecksumOf(name string, lines []string) Checksum {
	var c Checksum
	q := queries[name]
	if q == nil {
		return c
	}
	for _, l := range lines {
		key, h, ok := hashLine(q.cols, l)
		if !ok {
			c.add(partition.HashString(l))
			continue
		}
		if q.updating {
			c.update(key, h)
		} else {
			c.add(h)
		}
	}
	return c
}

// hashLine parses a CSV line of the given columns and hashes it as the
// engine hashes the row; key is its first column, if an integer.
func hashLine(cs []col, l string) (key int64, h uint64, ok bool) {
	r := csv.NewReader(strings.NewReader(l))
	r.FieldsPerRecord = len(cs)
	fields, err := r.Read()
	if err != nil {
		return 0, 0, false
	}
	hs := newHasher()
	for i, c := range cs {
		f := fields[i]
		switch c {
		case colStr:
			hs = hs.str(f)
			continue
		case colFloat:
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return 0, 0, false
			}
			hs = hs.float(v)
			continue
		}
		var v int64
		if c == colMilli {
			if v, ok = parseMilli(f); !ok {
				return 0, 0, false
			}
		} else if v, err = strconv.ParseInt(f, 10, 64); err != nil {
			return 0, 0, false
		}
		if i == 0 {
			key = v
		}
		hs = hs.int(v)
	}
	return key, hs.sum(), true
}
