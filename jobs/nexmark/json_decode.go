package nexmark

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/weirstream/weir/connector/gen"
)

// MaxJSONInt bounds the integers DecodeJSON accepts, times included:
// |n| <= 2^53, the integers a float64 holds exactly, which are those JSON
// tools exchange without loss (RFC 7493). As times, 2^53 ms is some
// 285,000 years either side of 1970: every accepted time has an exact
// window, far from the ±2^63 that EventTime and the windows refuse.
const MaxJSONInt = 1 << 53

// DecodeJSON decodes one line of the JSON-lines form (see AppendJSON). It
// is strict: the line must be one JSON object (whitespace around tokens
// allowed, UTF-8 only) with a "kind" of "person", "auction" or "bid" and
// exactly that kind's fields, each once, in any order; strings for the
// string fields and integers within ±MaxJSONInt for the others; and an
// auction must not expire before its dateTime. Anything else is an error
// that says what is wrong and where, for the file input to report with
// the file and line or to send to a dead-letter output.
//
// The strings of the event are substrings of line unless they hold
// escapes, so a line without escapes is decoded without allocating.
func DecodeJSON(line string) (gen.NexmarkEvent, error) {
	d := jsonDecoder{s: line}
	if err := d.object(); err != nil {
		return gen.NexmarkEvent{}, err
	}
	return d.event()
}

// jsonDecoder decodes one line: s[i:] is left to read; the fields seen
// so far are set in seen, with their values in strs or nums.
type jsonDecoder struct {
	s    string
	i    int
	seen uint32
	kind gen.NexmarkKind
	strs [numJSONFields]string
	nums [numJSONFields]int64
}

func (d *jsonDecoder) object() error {
	d.ws()
	if !d.eat('{') {
		return d.syntax("'{' to begin the event")
	}
	if d.ws(); !d.eat('}') {
		for {
			if err := d.member(); err != nil {
				return err
			}
			d.ws()
			if d.eat(',') {
				d.ws()
				continue
			}
			if d.eat('}') {
				break
			}
			return d.syntax("',' or '}' after a field's value")
		}
	}
	if d.ws(); d.i < len(d.s) {
		return d.syntax("the end of the line after the event")
	}
	return nil
}

// member reads one "name": value.
func (d *jsonDecoder) member() error {
	if d.i >= len(d.s) || d.s[d.i] != '"' {
		return d.syntax("'\"' to begin a field name")
	}
	key, err := d.str()
	if err != nil {
		return err
	}
	f, ok := jsonFieldOf(key)
	if !ok {
		return fmt.Errorf("unknown field %q", key)
	}
	if d.seen&(1<<f) != 0 {
		return fmt.Errorf("field %q given twice", key)
	}
	d.seen |= 1 << f
	if d.ws(); !d.eat(':') {
		return d.syntax("':' after a field name")
	}
	d.ws()
	if d.i >= len(d.s) {
		return d.syntax("a value")
	}
	switch c := d.s[d.i]; {
	case f.numeric() && (c == '-' || c >= '0' && c <= '9'):
		d.nums[f], err = d.integer(f)
		return err
	case !f.numeric() && c == '"':
		v, err := d.str()
		if err == nil && f == fKind {
			err = d.setKind(v)
		}
		d.strs[f] = v
		return err
	}
	what, err := d.valueKind()
	if err != nil {
		return err
	}
	want := "a string"
	if f.numeric() {
		want = "an integer"
	}
	return fmt.Errorf("field %q is %s, not %s", key, what, want)
}

func (d *jsonDecoder) setKind(v string) error {
	switch v {
	case "person":
		d.kind = gen.PersonKind
	case "auction":
		d.kind = gen.AuctionKind
	case "bid":
		d.kind = gen.BidKind
	default:
		return fmt.Errorf(`kind %q is none of "person", "auction" and "bid"`, v)
	}
	return nil
}

// valueKind names the JSON value at s[i], of the wrong type for its field,
// once it is known to be a whole value.
func (d *jsonDecoder) valueKind() (string, error) {
	start := d.i
	what := ""
	switch c := d.s[start]; {
	case c == '"':
		if _, err := d.str(); err != nil {
			return "", err
		}
		return "a string", nil
	case c == '-' || c >= '0' && c <= '9':
		_, err := d.number()
		return "a number", err
	case c == '{':
		what = "an object"
	case c == '[':
		what = "an array"
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if len(d.s)-start >= len(lit) && d.s[start:start+len(lit)] == lit {
				what = lit
			}
		}
		if what == "" {
			return "", d.syntax("a value")
		}
	}
	// An object or array is not followed further: whatever it holds, the
	// line is bad.
	return what, nil
}

// event assembles the event once the whole object is read.
func (d *jsonDecoder) event() (gen.NexmarkEvent, error) {
	if d.seen&(1<<fKind) == 0 {
		return gen.NexmarkEvent{}, errors.New(`missing field "kind"`)
	}
	want := kindMasks[d.kind]
	if other := d.seen &^ want; other != 0 {
		f := jsonField(bits.TrailingZeros32(other))
		return gen.NexmarkEvent{}, fmt.Errorf("field %q is not a field of a %s", f, d.kind)
	}
	if d.seen != want {
		for _, f := range kindFields[d.kind] {
			if d.seen&(1<<f) == 0 {
				return gen.NexmarkEvent{}, fmt.Errorf("missing field %q of a %s", f, d.kind)
			}
		}
	}
	s, n := &d.strs, &d.nums
	e := gen.NexmarkEvent{Kind: d.kind}
	switch d.kind {
	case gen.PersonKind:
		e.Person = gen.Person{ID: n[fID], Name: s[fName], Email: s[fEmail], CreditCard: s[fCard],
			City: s[fCity], State: s[fState], DateTime: n[fDateTime], Extra: s[fExtra]}
	case gen.AuctionKind:
		if n[fExpires] < n[fDateTime] {
			return gen.NexmarkEvent{}, fmt.Errorf("the auction expires (%d) before its dateTime (%d)", n[fExpires], n[fDateTime])
		}
		e.Auction = gen.Auction{ID: n[fID], ItemName: s[fItemName], Description: s[fDescription],
			InitialBid: n[fInitialBid], Reserve: n[fReserve], DateTime: n[fDateTime], Expires: n[fExpires],
			Seller: n[fSeller], Category: n[fCategory], Extra: s[fExtra]}
	default:
		e.Bid = gen.Bid{Auction: n[fAuction], Bidder: n[fBidder], Price: n[fPrice], Channel: s[fChannel],
			URL: s[fURL], DateTime: n[fDateTime], Extra: s[fExtra]}
	}
	return e, nil
}
