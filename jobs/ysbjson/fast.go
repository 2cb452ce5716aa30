package ysbjson

import (
	"github.com/weirstream/weir/connector/gen"
)

// The known keys as little-endian words (see load64). A key of seven
// bytes is one word with its closing quote; a key of ten bytes is the word
// of its first eight bytes and the word at its fourth byte, which ends with
// the closing quote; "ad_id" and its quote are the low six bytes of a word.
const (
	wUserID  = 'u' | 's'<<8 | 'e'<<16 | 'r'<<24 | '_'<<32 | 'i'<<40 | 'd'<<48 | '"'<<56 // user_id"
	wPageID  = 'p' | 'a'<<8 | 'g'<<16 | 'e'<<24 | '_'<<32 | 'i'<<40 | 'd'<<48 | '"'<<56 // page_id"
	wAdType  = 'a' | 'd'<<8 | '_'<<16 | 't'<<24 | 'y'<<32 | 'p'<<40 | 'e'<<48 | '"'<<56 // ad_type"
	wAdID    = 'a' | 'd'<<8 | '_'<<16 | 'i'<<24 | 'd'<<32 | '"'<<40                     // ad_id"
	wEventTy = 'e' | 'v'<<8 | 'e'<<16 | 'n'<<24 | 't'<<32 | '_'<<40 | 't'<<48 | 'y'<<56 // event_ty
	wEventTi = 'e' | 'v'<<8 | 'e'<<16 | 'n'<<24 | 't'<<32 | '_'<<40 | 't'<<48 | 'i'<<56 // event_ti
	wNtType  = 'n' | 't'<<8 | '_'<<16 | 't'<<24 | 'y'<<32 | 'p'<<40 | 'e'<<48 | '"'<<56 // nt_type"
	wNtTime  = 'n' | 't'<<8 | '_'<<16 | 't'<<24 | 'i'<<32 | 'm'<<40 | 'e'<<48 | '"'<<56 // nt_time"
	wIPAddre = 'i' | 'p'<<8 | '_'<<16 | 'a'<<24 | 'd'<<32 | 'd'<<40 | 'r'<<48 | 'e'<<56 // ip_addre
	wAddress = 'a' | 'd'<<8 | 'd'<<16 | 'r'<<24 | 'e'<<32 | 's'<<40 | 's'<<48 | '"'<<56 // address"

	mask6 = 1<<48 - 1
)

// Decode decodes one event from a JSON object. The string fields of the
// result are substrings of line unless they contain escapes, so Decode
// does not allocate for well-formed input without escapes.
func Decode(line string) (gen.YSBEvent, error) {
	// One pass over the line recognises the known keys by their leading
	// words and takes plain string values as they are. Whatever it does
	// not follow to the end (malformed JSON, a missing field, a known field
	// that is not a string, an event_time that is not a plain integer) goes
	// to decodeFull, which applies the whole grammar and describes the
	// error. The pass succeeds only on lines that decodeFull accepts, and
	// with the same event.
	var vals [numFields]string
	var t int64
	var seen uint
	s := line
	n := len(s)
	i := 0
	if n == 0 || s[0] != '{' {
		if i = skipWS(s, 0); i >= n || s[i] != '{' {
			goto full
		}
	}
	i++
	for {
		// The key.
		if i >= n {
			goto full
		}
		if s[i] != '"' {
			if i = skipWS(s, i); i >= n || s[i] != '"' {
				goto full
			}
		}
		f, end := -1, 0
		if k := i + 1; k+8 <= n {
			switch w := loadAt(s, k); w {
			case wUserID:
				f, end = fUserID, k+8
			case wPageID:
				f, end = fPageID, k+8
			case wAdType:
				f, end = fAdType, k+8
			case wEventTy:
				if k+11 <= n && loadAt(s, k+3) == wNtType {
					f, end = fEventType, k+11
				}
			case wEventTi:
				if k+11 <= n && loadAt(s, k+3) == wNtTime {
					f, end = fEventTime, k+11
				}
			case wIPAddre:
				if k+11 <= n && loadAt(s, k+3) == wAddress {
					f, end = fIPAddress, k+11
				}
			default:
				if w&mask6 == wAdID {
					f, end = fAdID, k+6
				}
			}
		}
		if f < 0 {
			key, esc, e, err := scanString(s, i)
			if err != nil {
				goto full
			}
			if esc {
				key = unquote(key)
			}
			f, end = fieldOf(key), e
		}

		// The colon.
		i = end
		if i >= n {
			goto full
		}
		if s[i] != ':' {
			if i = skipWS(s, i); i >= n || s[i] != ':' {
				goto full
			}
		}
		i++
		if i >= n {
			goto full
		}
		if s[i] <= ' ' {
			if i = skipWS(s, i); i >= n {
				goto full
			}
		}

		// The value.
		switch {
		case f == fEventTime:
			var ok bool
			if t, i, ok = eventTime(s, i); !ok {
				goto full
			}
			seen |= 1 << fEventTime
		case f >= 0:
			if s[i] != '"' {
				goto full
			}
			j := plainEnd(s, i+1)
			if j < n && s[j] == '"' {
				vals[f], i = s[i+1:j], j+1
			} else {
				raw, esc, e, err := scanStringFrom(s, i, j)
				if err != nil {
					goto full
				}
				if esc {
					raw = unquote(raw)
				}
				vals[f], i = raw, e
			}
			seen |= 1 << f
		default:
			_, e, err := skipValue(s, i, 1)
			if err != nil {
				goto full
			}
			i = e
		}

		// The separator.
		if i >= n {
			goto full
		}
		if s[i] <= ' ' {
			if i = skipWS(s, i); i >= n {
				goto full
			}
		}
		if s[i] == ',' {
			i++
			continue
		}
		if s[i] != '}' {
			goto full
		}
		i++
		break
	}
	if i < n && skipWS(s, i) < n || seen != 1<<numFields-1 {
		goto full
	}
	return assemble(&vals, t), nil
full:
	return decodeFull(line)
}

// eventTime reads the value of event_time at s[i], a decimal integer as a
// string or a number, and returns it and the index after it. It reports
// false for anything else, including malformed JSON.
func eventTime(s string, i int) (int64, int, bool) {
	n := len(s)
	if s[i] == '"' {
		// The common case: one to 18 digits, which cannot overflow.
		u, j := readDigits(s, i+1)
		if d := j - (i + 1); d > 0 && d <= 18 && j < n && s[j] == '"' {
			return int64(u), j + 1, true
		}
		raw, esc, end, err := scanString(s, i)
		if err != nil {
			return 0, 0, false
		}
		if esc {
			raw = unquote(raw)
		}
		t, err := parseInt(raw)
		return t, end, err == nil
	}
	neg := s[i] == '-'
	j := i
	if neg {
		j++
	}
	start := j
	u, j := readDigits(s, j)
	// A fraction or an exponent after the digits is left to the caller,
	// which expects ',' or '}' there.
	if d := j - start; d > 0 && d <= 18 && (d == 1 || s[start] != '0') {
		if neg {
			return -int64(u), j, true
		}
		return int64(u), j, true
	}
	k, end, err := skipValue(s, i, 1)
	if err != nil || k != kindNumber {
		return 0, 0, false
	}
	t, err := parseInt(s[i:end])
	return t, end, err == nil
}

// readDigits returns the index of the first byte of s at or after j that
// is not a decimal digit and the value of the digits before it, which is
// exact if there are at most 18 of them.
func readDigits(s string, j int) (uint64, int) {
	// The first eight digits in one go, the rest one by one, and the two
	// parts combined at the end.
	var hi uint64
	if j+8 <= len(s) {
		if x := loadAt(s, j); nonDigit(x) == 0 {
			hi, j = eightDigits(x), j+8
		}
	}
	var lo uint64
	k := j
	for k < len(s) && s[k]-'0' <= 9 {
		lo = lo*10 + uint64(s[k]-'0')
		k++
	}
	if k-j >= len(pow10) {
		return 0, k
	}
	return hi*pow10[k-j] + lo, k
}

var pow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// nonDigit is zero if and only if the eight bytes of x are all ASCII
// decimal digits.
func nonDigit(x uint64) uint64 {
	const ones = 0x0101010101010101
	// t is below 0x80 for a byte from '0' to 0xaf, leaving borrows aside,
	// and then below 10 for a digit, when t + 0x76 is below 0x80. A borrow
	// or a carry comes from a byte that is not a digit.
	t := x - ones*'0'
	return (t | (t + ones*0x76) | x) & (ones * 0x80)
}

// eightDigits returns the value of the eight decimal digits of x, the
// first in the low byte.
func eightDigits(x uint64) uint64 {
	x = (x & 0x0f0f0f0f0f0f0f0f) * (10<<8 + 1) >> 8
	x = (x & 0x00ff00ff00ff00ff) * (100<<16 + 1) >> 16
	return (x & 0x0000ffff0000ffff) * (10000<<32 + 1) >> 32
}
