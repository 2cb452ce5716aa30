package ysbjson

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/weirstream/weir/connector/gen"
)

// Baseline extracts the events of a whole JSON-lines buffer on one
// goroutine and calls fn for each, in order. It is the single-threaded
// reference that the engine's file input is measured against: no
// reflection, no copying, no per-event allocation.
//
// Baseline assumes well-formed input: it finds the seven fields in any
// order, skips other fields, and unescapes values with escapes, but it does
// not validate the JSON grammar the way Decode does, and object keys must
// not contain escapes. It reports input it cannot follow (a truncated
// object, a missing field, a bad event_time).
//
// The strings of the event passed to fn share memory with data, and the
// event itself is reused: fn must copy what it keeps, and data must not be
// modified while such strings are in use.
func Baseline(data []byte, fn func(*gen.YSBEvent)) error {
	if len(data) == 0 {
		return nil
	}
	s := unsafe.String(&data[0], len(data))
	var ev gen.YSBEvent
	i := 0
	for {
		i = skipWS(s, i)
		if i >= len(s) {
			return nil
		}
		if s[i] != '{' {
			return baselineError(s, i, "'{'")
		}
		start := i
		var seen uint8
		i = skipWS(s, i+1)
		for i < len(s) && s[i] != '}' {
			if s[i] != '"' {
				return baselineError(s, i, "an object key")
			}
			k := quoteOrBackslash(s, i+1)
			if k >= len(s) {
				return baselineError(s, k, "'\"'")
			}
			if s[k] == '\\' {
				return fmt.Errorf("baseline: object at offset %d: escaped keys are not supported", start)
			}
			key := s[i+1 : k]
			i = skipWS(s, k+1)
			if i >= len(s) || s[i] != ':' {
				return baselineError(s, i, "':'")
			}
			i = skipWS(s, i+1)
			if i >= len(s) {
				return baselineError(s, i, "a value")
			}
			var v string
			if s[i] == '"' {
				k := quoteOrBackslash(s, i+1)
				if k >= len(s) {
					return baselineError(s, k, "'\"'")
				}
				if s[k] == '"' {
					v, i = s[i+1:k], k+1
				} else {
					raw, _, end, err := scanString(s, i)
					if err != nil {
						return err
					}
					v, i = unquote(raw), end
				}
			} else {
				end := skipBaseline(s, i)
				v, i = s[i:end], end
			}
			switch key {
			case "user_id":
				ev.UserID, seen = v, seen|1<<fUserID
			case "page_id":
				ev.PageID, seen = v, seen|1<<fPageID
			case "ad_id":
				ev.AdID, seen = v, seen|1<<fAdID
			case "ad_type":
				ev.AdType, seen = v, seen|1<<fAdType
			case "event_type":
				ev.EventType, seen = v, seen|1<<fEventType
			case "event_time":
				t, err := parseInt(v)
				if err != nil {
					return fmt.Errorf("baseline: event_time %q at offset %d: %v", v, start, err)
				}
				ev.EventTime, seen = t, seen|1<<fEventTime
			case "ip_address":
				ev.IPAddress, seen = v, seen|1<<fIPAddress
			}
			i = skipWS(s, i)
			if i < len(s) && s[i] == ',' {
				i = skipWS(s, i+1)
			}
		}
		if i >= len(s) {
			return baselineError(s, i, "'}'")
		}
		i++
		if seen != 1<<numFields-1 {
			for f := range numFields {
				if seen&(1<<f) == 0 {
					return fmt.Errorf("baseline: object at offset %d: missing field %q", start, fieldNames[f])
				}
			}
		}
		fn(&ev)
	}
}

// skipBaseline returns the end of the non-string value at s[i]: a number,
// a literal, or a nested object or array.
func skipBaseline(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i
			}
		case '"':
			if _, _, end, err := scanString(s, i); err == nil {
				i = end - 1
			} else {
				return len(s)
			}
		}
	}
	return i
}

// quoteOrBackslash returns the index of the first '"' or '\\' in s at or
// after i, or len(s).
func quoteOrBackslash(s string, i int) int {
	const ones = 0x0101010101010101
	for ; i+8 <= len(s); i += 8 {
		x := load64(s, i)
		q := x ^ (ones * '"')
		b := x ^ (ones * '\\')
		if m := ((q-ones)&^q | (b-ones)&^b) & (ones * 0x80); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			return i
		}
	}
	return i
}

func baselineError(s string, i int, expected string) error {
	if i >= len(s) {
		return fmt.Errorf("baseline: unexpected end of input, expected %s", expected)
	}
	return fmt.Errorf("baseline: unexpected %s at offset %d, expected %s", quoteByte(s[i]), i, expected)
}
