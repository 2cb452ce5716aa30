package nexmark

import (
	"strconv"
	"unicode/utf8"

	"github.com/weirstream/weir/connector/gen"
)

// The JSON-lines form of Nexmark events (weir gen nexmark writes it, weir
// run nexmark --input reads it) is one object per line:
//
//	{"kind":"person","id":1000,"name":"…","emailAddress":"…","creditCard":"…","city":"…","state":"…","dateTime":1700000000000,"extra":"…"}
//	{"kind":"auction","id":1000,"itemName":"…","description":"…","initialBid":…,"reserve":…,"dateTime":…,"expires":…,"seller":1000,"category":10,"extra":"…"}
//	{"kind":"bid","auction":1000,"bidder":1001,"price":…,"channel":"…","url":"…","dateTime":…,"extra":"…"}
//
// Numbers are JSON integers, times milliseconds since the Unix epoch.
// AppendJSON writes the fields in this order; DecodeJSON takes them in any
// order and is strict: see DecodeJSON.

// AppendJSON appends e to dst as one JSON object of the JSON-lines form,
// without a newline, and returns the extended slice. Strings are escaped
// as JSON requires (", \ and control characters); invalid UTF-8 becomes
// U+FFFD, since JSON text is UTF-8. It does not allocate beyond growing
// dst.
func AppendJSON(dst []byte, e *gen.NexmarkEvent) []byte {
	switch e.Kind {
	case gen.PersonKind:
		p := &e.Person
		dst = jsonInt(append(dst, `{"kind":"person"`...), `,"id":`, p.ID)
		dst = jsonString(dst, `,"name":`, p.Name)
		dst = jsonString(dst, `,"emailAddress":`, p.Email)
		dst = jsonString(dst, `,"creditCard":`, p.CreditCard)
		dst = jsonString(dst, `,"city":`, p.City)
		dst = jsonString(dst, `,"state":`, p.State)
		dst = jsonInt(dst, `,"dateTime":`, p.DateTime)
		dst = jsonString(dst, `,"extra":`, p.Extra)
	case gen.AuctionKind:
		a := &e.Auction
		dst = jsonInt(append(dst, `{"kind":"auction"`...), `,"id":`, a.ID)
		dst = jsonString(dst, `,"itemName":`, a.ItemName)
		dst = jsonString(dst, `,"description":`, a.Description)
		dst = jsonInt(dst, `,"initialBid":`, a.InitialBid)
		dst = jsonInt(dst, `,"reserve":`, a.Reserve)
		dst = jsonInt(dst, `,"dateTime":`, a.DateTime)
		dst = jsonInt(dst, `,"expires":`, a.Expires)
		dst = jsonInt(dst, `,"seller":`, a.Seller)
		dst = jsonInt(dst, `,"category":`, a.Category)
		dst = jsonString(dst, `,"extra":`, a.Extra)
	default:
		// A bid, or a kind no decoder accepts: its name says which.
		b := &e.Bid
		dst = append(dst, `{"kind":`...)
		if e.Kind == gen.BidKind {
			dst = append(dst, `"bid"`...)
		} else {
			dst = jsonQuote(dst, e.Kind.String())
		}
		dst = jsonInt(dst, `,"auction":`, b.Auction)
		dst = jsonInt(dst, `,"bidder":`, b.Bidder)
		dst = jsonInt(dst, `,"price":`, b.Price)
		dst = jsonString(dst, `,"channel":`, b.Channel)
		dst = jsonString(dst, `,"url":`, b.URL)
		dst = jsonInt(dst, `,"dateTime":`, b.DateTime)
		dst = jsonString(dst, `,"extra":`, b.Extra)
	}
	return append(dst, '}')
}

func jsonInt(dst []byte, key string, v int64) []byte {
	return strconv.AppendInt(append(dst, key...), v, 10)
}

func jsonString(dst []byte, key, s string) []byte {
	return jsonQuote(append(dst, key...), s)
}

// jsonPlain[c] says that byte c stands for itself inside a JSON string:
// printable ASCII other than " and \.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// jsonPlainRun returns the length of the run of plain bytes (jsonPlain)
// at the start of s, give or take the last 7: it tests 8 bytes at a time.
func jsonPlainRun(s string) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		q, b := x^(ones*'"'), x^(ones*'\\')
		// A high bit is set in some byte if one is at least 0x80, below
		// 0x20, a quote or a backslash (exact once none is 0x80 or more).
		if (x|(x-ones*0x20)&^x|(q-ones)&^q|(b-ones)&^b)&highs != 0 {
			break
		}
	}
	return i
}

// jsonQuote appends s as a JSON string literal.
func jsonQuote(dst []byte, s string) []byte {
	dst = append(dst, '"')
	done := 0 // s[:done] is written
	for i := 0; i < len(s); {
		i += jsonPlainRun(s[i:])
		if i >= len(s) {
			break
		}
		c := s[i]
		if jsonPlain[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			if r, n := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || n > 1 {
				i += n
				continue
			}
		}
		dst = append(dst, s[done:i]...)
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			const hex = "0123456789abcdef"
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default: // a byte of invalid UTF-8
			dst = append(dst, "\uFFFD"...)
		}
		i++
		done = i
	}
	return append(append(dst, s[done:]...), '"')
}
