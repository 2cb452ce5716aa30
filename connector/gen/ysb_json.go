package gen

import (
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends e to dst as one JSON object in the YSB wire format and
// returns the extended slice:
//
//	{"user_id":"…","page_id":"…","ad_id":"…","ad_type":"…","event_type":"…","event_time":"1700000000123","ip_address":"…"}
//
// All values are strings; event_time is the decimal number of milliseconds.
// Strings are escaped as JSON requires, and invalid UTF-8 becomes U+FFFD.
func (e *YSBEvent) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"user_id":`...)
	dst = appendJSONString(dst, e.UserID)
	dst = append(dst, `,"page_id":`...)
	dst = appendJSONString(dst, e.PageID)
	dst = append(dst, `,"ad_id":`...)
	dst = appendJSONString(dst, e.AdID)
	dst = append(dst, `,"ad_type":`...)
	dst = appendJSONString(dst, e.AdType)
	dst = append(dst, `,"event_type":`...)
	dst = appendJSONString(dst, e.EventType)
	dst = append(dst, `,"event_time":"`...)
	dst = strconv.AppendInt(dst, e.EventTime, 10)
	dst = append(dst, `","ip_address":`...)
	dst = appendJSONString(dst, e.IPAddress)
	return append(dst, '}')
}

// appendJSONString appends s as a JSON string literal.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0 // s[start:i] is pending, needing no escape
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		default:
			const hex = "0123456789abcdef"
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
