package ysbjson

import (
	"errors"
	"fmt"

	"github.com/weirstream/weir/connector/gen"
)

// The fields of an event, in the order used for error messages.
const (
	fUserID = iota
	fPageID
	fAdID
	fAdType
	fEventType
	fEventTime
	fIPAddress
	numFields
)

var fieldNames = [numFields]string{
	"user_id", "page_id", "ad_id", "ad_type", "event_type", "event_time", "ip_address",
}

// fieldOf returns the field a key names, or -1.
func fieldOf(key string) int {
	switch key {
	case "user_id":
		return fUserID
	case "page_id":
		return fPageID
	case "ad_id":
		return fAdID
	case "ad_type":
		return fAdType
	case "event_type":
		return fEventType
	case "event_time":
		return fEventTime
	case "ip_address":
		return fIPAddress
	}
	return -1
}

// decodeFull is the general form of Decode: it follows the whole grammar
// and reports what is wrong with a line that Decode's fast path declines.
func decodeFull(line string) (gen.YSBEvent, error) {
	var vals [numFields]string
	var kinds [numFields]kind
	s := line
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return gen.YSBEvent{}, syntaxError(s, i, "'{' to begin the event object")
	}
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		i++
	} else {
		for {
			if i >= len(s) || s[i] != '"' {
				return gen.YSBEvent{}, syntaxError(s, i, "'\"' to begin an object key")
			}
			key, slow, end, err := scanString(s, i)
			if err != nil {
				return gen.YSBEvent{}, err
			}
			if slow {
				key = unquote(key)
			}
			f := fieldOf(key)
			i = skipWS(s, end)
			if i >= len(s) || s[i] != ':' {
				return gen.YSBEvent{}, syntaxError(s, i, "':' after object key")
			}
			i = skipWS(s, i+1)
			if f >= 0 && i < len(s) && s[i] == '"' {
				raw, slow, end, err := scanString(s, i)
				if err != nil {
					return gen.YSBEvent{}, err
				}
				if slow {
					raw = unquote(raw)
				}
				vals[f], kinds[f], i = raw, kindString, end
			} else {
				k, end, err := skipValue(s, i, 1)
				if err != nil {
					return gen.YSBEvent{}, err
				}
				if f >= 0 {
					vals[f], kinds[f] = s[i:end], k
				}
				i = end
			}
			i = skipWS(s, i)
			if i < len(s) && s[i] == ',' {
				i = skipWS(s, i+1)
				continue
			}
			if i < len(s) && s[i] == '}' {
				i++
				break
			}
			return gen.YSBEvent{}, syntaxError(s, i, "',' or '}' after object value")
		}
	}
	if i = skipWS(s, i); i < len(s) {
		return gen.YSBEvent{}, syntaxError(s, i, "end of input after the event object")
	}
	for f, k := range kinds {
		switch {
		case k == kindNone:
			return gen.YSBEvent{}, fmt.Errorf("missing field %q", fieldNames[f])
		case k == kindString, k == kindNumber && f == fEventTime:
		default:
			return gen.YSBEvent{}, fmt.Errorf("field %q is %s, not a string", fieldNames[f], kindNames[k])
		}
	}
	t, err := parseEventTime(vals[fEventTime], kinds[fEventTime])
	if err != nil {
		return gen.YSBEvent{}, err
	}
	return assemble(&vals, t), nil
}

// assemble assembles the event from its string fields and its time.
func assemble(vals *[numFields]string, t int64) gen.YSBEvent {
	return gen.YSBEvent{
		UserID:    vals[fUserID],
		PageID:    vals[fPageID],
		AdID:      vals[fAdID],
		AdType:    vals[fAdType],
		EventType: vals[fEventType],
		EventTime: t,
		IPAddress: vals[fIPAddress],
	}
}

var errRange = errors.New("out of range")

// parseEventTime parses a decimal int64 with an optional sign, as
// strconv.ParseInt(v, 10, 64) does.
func parseEventTime(v string, k kind) (int64, error) {
	t, err := parseInt(v)
	if err == nil {
		return t, nil
	}
	q := v
	if k == kindString {
		q = fmt.Sprintf("%q", v)
	}
	if err == errRange {
		return 0, fmt.Errorf("event_time %s is out of range", q)
	}
	if k == kindNumber {
		return 0, fmt.Errorf("event_time %s is not an integer", q)
	}
	return 0, fmt.Errorf("event_time %s is not a number", q)
}

var errSyntax = errors.New("not a number")

func parseInt(s string) (int64, error) {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, errSyntax
	}
	const cutoff = 1 << 63
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, errSyntax
		}
		if n > cutoff/10 {
			return 0, rangeOrSyntax(s[i+1:])
		}
		n = n*10 + uint64(c)
		if n > cutoff {
			return 0, rangeOrSyntax(s[i+1:])
		}
	}
	if !neg && n == cutoff {
		return 0, errRange
	}
	if neg {
		return -int64(n), nil
	}
	return int64(n), nil
}

// rangeOrSyntax tells an overflowing number from a malformed one by the
// digits that remain.
func rangeOrSyntax(rest string) error {
	for i := 0; i < len(rest); i++ {
		if rest[i]-'0' > 9 {
			return errSyntax
		}
	}
	return errRange
}
