package nexmark

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// The tokens of DecodeJSON: whitespace, strings and numbers, as RFC 8259
// has them.

func (d *jsonDecoder) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// eat reads c if it is next.
func (d *jsonDecoder) eat(c byte) bool {
	if d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

// syntax is the error of a line that is not JSON where i is.
func (d *jsonDecoder) syntax(want string) error {
	return d.syntaxAt(d.i, want)
}

func (d *jsonDecoder) syntaxAt(i int, want string) error {
	if i >= len(d.s) {
		return fmt.Errorf("invalid JSON: the line ends where %s should be", want)
	}
	r, _ := utf8.DecodeRuneInString(d.s[i:])
	return fmt.Errorf("invalid JSON at byte %d: %q where %s should be", i+1, r, want)
}

// str reads the string that starts at s[i] (a '"'). Without escapes it is
// a substring of the line.
func (d *jsonDecoder) str() (string, error) {
	start := d.i + 1
	for i := start; i < len(d.s); i++ {
		i += jsonPlainRun(d.s[i:])
		if i >= len(d.s) {
			break
		}
		switch c := d.s[i]; {
		case c == '"':
			d.i = i + 1
			return d.s[start:i], nil
		case c == '\\':
			d.i = i
			return d.unescape(append(make([]byte, 0, i-start+16), d.s[start:i]...))
		case c < 0x20:
			return "", d.syntaxAt(i, `an escape (a control character) or '"'`)
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(d.s[i:])
			if r == utf8.RuneError && n == 1 {
				return "", fmt.Errorf("invalid UTF-8 at byte %d: JSON text is UTF-8", i+1)
			}
			i += n - 1
		}
	}
	return "", d.syntaxAt(len(d.s), `'"' to end a string`)
}

// unescape reads the rest of a string with escapes from s[i] onwards,
// appending it to b. Escaped UTF-16 surrogates that do not pair become
// U+FFFD, as encoding/json has them.
func (d *jsonDecoder) unescape(b []byte) (string, error) {
	s := d.s
	for i := d.i; i < len(s); {
		switch c := s[i]; {
		case c == '"':
			d.i = i + 1
			return string(b), nil
		case c < 0x20:
			return "", d.syntaxAt(i, `an escape (a control character) or '"'`)
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return "", fmt.Errorf("invalid UTF-8 at byte %d: JSON text is UTF-8", i+1)
			}
			b = append(b, s[i:i+n]...)
			i += n
		case c != '\\':
			b = append(b, c)
			i++
		case i+1 >= len(s):
			return "", d.syntaxAt(i+1, "an escape")
		default:
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(s, i+2)
				if !ok {
					return "", d.syntaxAt(i, `\u and four hexadecimal digits`)
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok := rune(0), false
					if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2, ok = hex4(s, i+2)
					}
					if p := utf16.DecodeRune(r, r2); ok && p != utf8.RuneError {
						r, i = p, i+6
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return "", d.syntaxAt(i, `an escape (\" \\ \/ \b \f \n \r \t or \uXXXX)`)
			}
			i += 2
		}
	}
	return "", d.syntaxAt(len(s), `'"' to end a string`)
}

// hex4 reads four hexadecimal digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number reads the JSON number at s[i]; frac says whether it has a
// fraction or an exponent.
func (d *jsonDecoder) number() (frac bool, err error) {
	s := d.s
	d.eat('-')
	switch {
	case d.eat('0'):
	case d.i < len(s) && s[d.i] >= '1' && s[d.i] <= '9':
		d.digits()
	default:
		return false, d.syntax("a digit")
	}
	if d.eat('.') {
		frac = true
		if !d.digits() {
			return true, d.syntax("a digit after '.'")
		}
	}
	if d.eat('e') || d.eat('E') {
		frac = true
		if !d.eat('+') {
			d.eat('-')
		}
		if !d.digits() {
			return true, d.syntax("a digit of the exponent")
		}
	}
	return frac, nil
}

// digits reads 0-9 and says whether there was one.
func (d *jsonDecoder) digits() bool {
	start := d.i
	for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}

// integer reads the value of field f: a number that must be an integer
// within ±MaxJSONInt.
func (d *jsonDecoder) integer(f jsonField) (int64, error) {
	start := d.i
	frac, err := d.number()
	if err != nil {
		return 0, err
	}
	lit := d.s[start:d.i]
	if frac {
		return 0, fmt.Errorf("field %q: %s is not an integer", f, lit)
	}
	digits := lit
	if lit[0] == '-' {
		digits = lit[1:]
	}
	var n int64
	if len(digits) <= 16 { // 2^53 has 16 digits: no overflow
		for _, c := range []byte(digits) {
			n = n*10 + int64(c-'0')
		}
	}
	if len(digits) > 16 || n > MaxJSONInt {
		return 0, fmt.Errorf("field %q: %s is outside ±2^53", f, lit)
	}
	if lit[0] == '-' {
		n = -n
	}
	return n, nil
}
