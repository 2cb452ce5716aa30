package ysbjson

import (
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// maxDepth is the deepest nesting of objects and arrays accepted, the same
// limit as encoding/json.
const maxDepth = 10000

// kind is the JSON type of a value.
type kind uint8

const (
	kindNone kind = iota // not seen
	kindString
	kindNumber
	kindObject
	kindArray
	kindBool
	kindNull
)

var kindNames = [...]string{"nothing", "a string", "a number", "an object", "an array", "a boolean", "null"}

// plain marks the bytes that can appear in a string without a second look:
// everything except '"', '\\', control characters and non-ASCII bytes.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// syntaxError describes malformed JSON: what was expected at which byte.
func syntaxError(s string, i int, expected string) error {
	if i >= len(s) {
		return fmt.Errorf("malformed JSON at offset %d: unexpected end of input, expected %s", i, expected)
	}
	return fmt.Errorf("malformed JSON at offset %d: unexpected %s, expected %s", i, quoteByte(s[i]), expected)
}

func quoteByte(c byte) string {
	if c < utf8.RuneSelf {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func skipWS(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString scans the string literal whose opening quote is s[i]. It
// returns the raw text between the quotes, whether that text must be
// unquoted (it has escapes or invalid UTF-8), and the index after the
// closing quote.
func scanString(s string, i int) (raw string, slow bool, end int, err error) {
	return scanStringFrom(s, i, plainEnd(s, i+1))
}

// plainEnd returns the index of the first byte of s at or after j that is
// not plain (see plain), or len(s) if there is none.
func plainEnd(s string, j int) int {
	for ; j+8 <= len(s); j += 8 {
		if m := special(loadAt(s, j)); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
	}
	if j >= len(s) {
		return len(s)
	}
	if len(s) >= 8 {
		// The last word of s, shifted so that s[j] is its low byte. The
		// bytes shifted in are zero, which is not plain, so the result is
		// at most len(s).
		b := len(s) - 8
		m := special(load64(s, b) >> (uint(j-b) * 8))
		return j + bits.TrailingZeros64(m)>>3
	}
	for j < len(s) && plain[s[j]] {
		j++
	}
	return j
}

// scanStringFrom is scanString for a string literal whose bytes from i+1
// up to j are known to be plain.
func scanStringFrom(s string, i, j int) (raw string, slow bool, end int, err error) {
	for j < len(s) {
		c := s[j]
		switch {
		case c == '"':
			return s[i+1 : j], slow, j + 1, nil
		case c == '\\':
			slow = true
			if j+1 >= len(s) {
				return "", false, 0, syntaxError(s, j+1, "escape character")
			}
			switch s[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				for k := j + 2; k < j+6; k++ {
					if k >= len(s) || !isHex(s[k]) {
						return "", false, 0, syntaxError(s, k, "hexadecimal digit in \\u escape")
					}
				}
				j += 6
			default:
				return "", false, 0, syntaxError(s, j+1, "escape character")
			}
		case c < 0x20:
			return "", false, 0, syntaxError(s, j, "string character (control characters must be escaped)")
		case c < utf8.RuneSelf:
			j++
		default:
			r, size := utf8.DecodeRuneInString(s[j:])
			if r == utf8.RuneError && size == 1 {
				slow = true
			}
			j += size
		}
	}
	return "", false, 0, syntaxError(s, j, "'\"' to end the string")
}

// load64 returns the 8 bytes of s at i as a little-endian word.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// loadAt is load64 without the bounds check, for loops whose condition
// already ensures 0 <= i && i+8 <= len(s).
func loadAt(s string, i int) uint64 {
	b := (*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(s)), i))
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// special sets the high bit of each byte of x that is not plain (see
// plain). Bits above the lowest set one may be false positives.
func special(x uint64) uint64 {
	const ones = 0x0101010101010101
	// A byte below 0x80 has its high bit set by x^c - 1 only when it is c,
	// and by x - 0x20 only when it is a control character, leaving borrows
	// aside; a borrow comes from a lower byte that is not plain, so the
	// lowest bit set is exact. Bytes from 0x80 up are caught by x itself.
	q := x ^ (ones * '"')
	b := x ^ (ones * '\\')
	return ((q - ones) | (b - ones) | (x - ones*0x20) | x) & (ones * 0x80)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scanNumber scans the number starting at s[i] and returns the index after it.
func scanNumber(s string, i int) (int, error) {
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && isDigit(s[i]):
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return 0, syntaxError(s, i, "digit")
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return 0, syntaxError(s, i, "digit after decimal point")
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return 0, syntaxError(s, i, "digit in exponent")
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i, nil
}

// skipValue checks the value starting at s[i], inside depth open objects
// and arrays, and returns its kind and the index after it.
func skipValue(s string, i, depth int) (kind, int, error) {
	if i >= len(s) {
		return kindNone, 0, syntaxError(s, i, "a value")
	}
	switch c := s[i]; c {
	case '"':
		_, _, end, err := scanString(s, i)
		return kindString, end, err
	case '{', '[':
		if depth+1 > maxDepth {
			return kindNone, 0, fmt.Errorf("malformed JSON at offset %d: nested deeper than %d levels", i, maxDepth)
		}
		if c == '{' {
			end, err := skipObject(s, i, depth+1)
			return kindObject, end, err
		}
		end, err := skipArray(s, i, depth+1)
		return kindArray, end, err
	case 't':
		return literal(s, i, "true", kindBool)
	case 'f':
		return literal(s, i, "false", kindBool)
	case 'n':
		return literal(s, i, "null", kindNull)
	default:
		if c == '-' || isDigit(c) {
			end, err := scanNumber(s, i)
			return kindNumber, end, err
		}
		return kindNone, 0, syntaxError(s, i, "a value")
	}
}

func literal(s string, i int, lit string, k kind) (kind, int, error) {
	for j := 1; j < len(lit); j++ {
		if i+j >= len(s) || s[i+j] != lit[j] {
			return kindNone, 0, syntaxError(s, i+j, fmt.Sprintf("%q of %s", lit[j], lit))
		}
	}
	return k, i + len(lit), nil
}

// skipObject checks the object opening at s[i], which is at the given depth.
func skipObject(s string, i, depth int) (int, error) {
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return 0, syntaxError(s, i, "'\"' to begin an object key")
		}
		_, _, end, err := scanString(s, i)
		if err != nil {
			return 0, err
		}
		i = skipWS(s, end)
		if i >= len(s) || s[i] != ':' {
			return 0, syntaxError(s, i, "':' after object key")
		}
		_, end, err = skipValue(s, skipWS(s, i+1), depth)
		if err != nil {
			return 0, err
		}
		i = skipWS(s, end)
		if i < len(s) && s[i] == ',' {
			i = skipWS(s, i+1)
			continue
		}
		if i < len(s) && s[i] == '}' {
			return i + 1, nil
		}
		return 0, syntaxError(s, i, "',' or '}' after object value")
	}
}

// skipArray checks the array opening at s[i], which is at the given depth.
func skipArray(s string, i, depth int) (int, error) {
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1, nil
	}
	for {
		_, end, err := skipValue(s, i, depth)
		if err != nil {
			return 0, err
		}
		i = skipWS(s, end)
		if i < len(s) && s[i] == ',' {
			i = skipWS(s, i+1)
			continue
		}
		if i < len(s) && s[i] == ']' {
			return i + 1, nil
		}
		return 0, syntaxError(s, i, "',' or ']' after array element")
	}
}

// unquote decodes the escapes of a string literal's raw text already
// checked by scanString. Like encoding/json, it replaces invalid UTF-8 and
// unpaired surrogates with U+FFFD.
func unquote(raw string) string {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\':
			switch raw[i+1] {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r := hex4(raw[i+2:])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
						if d := utf16.DecodeRune(r, hex4(raw[i+2:])); d != utf8.RuneError {
							r = d
							i += 6
							b.WriteRune(r)
							continue
						}
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
				continue
			default: // '"', '\\', '/'
				b.WriteByte(raw[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(raw[i:])
			b.WriteRune(r) // RuneError for an invalid byte
			i += size
		}
	}
	return b.String()
}

// hex4 decodes the four hexadecimal digits at the start of s.
func hex4(s string) rune {
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
