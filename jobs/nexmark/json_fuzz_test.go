package nexmark

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weirstream/weir/connector/gen"
)

// FuzzDecode checks DecodeJSON against a decoder made of encoding/json and
// the rules of the JSON-lines form, as stated: the two accept the same
// lines and read the same events from them; an accepted event encodes to
// a line that decodes to it again.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		jsonPerson, jsonAuction, jsonBid,
		strings.Replace(jsonBid, `"Google"`, `"a\"b\\c\/d\u00e9\n\ud83d\ude00\ud800\udc00\ud800x"`, 1),
		strings.Replace(jsonBid, `"price"`, `"pr\u0069ce"`, 1),
		strings.Replace(jsonBid, `-7`, `9007199254740993`, 1),
		strings.Replace(jsonBid, `-7`, `-0`, 1),
		strings.Replace(jsonBid, `-7`, `1.5e3`, 1),
		strings.Replace(jsonBid, `-7`, `"7"`, 1),
		strings.Replace(jsonBid, `-7`, `[1,{"a":null}]`, 1),
		strings.Replace(jsonBid, `"price":-7`, `"price":-7,"price":-7`, 1),
		strings.Replace(jsonBid, `"Google"`, "\"\xff\"", 1),
		strings.Replace(jsonAuction, `1700000005000`, `1700000000000`, 1),
		" { \"kind\" : \"bid\" } ", `{}`, `[]`, `null`, ``, jsonBid[:50], jsonBid + "x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		got, err := DecodeJSON(line)
		want, ok := referenceDecode(line)
		if (err == nil) != ok {
			t.Fatalf("DecodeJSON(%q) = %+v, %v; the reference decoder accepts it: %v (%+v)", line, got, err, ok, want)
		}
		if err != nil {
			return
		}
		if got != want {
			t.Fatalf("DecodeJSON(%q) = %+v; the reference decoder reads %+v", line, got, want)
		}
		again, err := DecodeJSON(string(AppendJSON(nil, &got)))
		if err != nil || again != got {
			t.Fatalf("DecodeJSON(AppendJSON(%+v)) = %+v, %v", got, again, err)
		}
	})
}

// referenceFields are the fields of each kind and whether each is a
// number, written out from the description of the form.
var referenceFields = map[string]map[string]bool{
	"person": {"id": true, "name": false, "emailAddress": false, "creditCard": false, "city": false, "state": false,
		"dateTime": true, "extra": false},
	"auction": {"id": true, "itemName": false, "description": false, "initialBid": true, "reserve": true,
		"dateTime": true, "expires": true, "seller": true, "category": true, "extra": false},
	"bid": {"auction": true, "bidder": true, "price": true, "channel": false, "url": false, "dateTime": true, "extra": false},
}

// referenceDecode decodes line with encoding/json and checks the rules.
func referenceDecode(line string) (gen.NexmarkEvent, bool) {
	if !utf8.ValidString(line) || !json.Valid([]byte(line)) {
		return gen.NexmarkEvent{}, false
	}
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return gen.NexmarkEvent{}, false
	}
	vals := map[string]any{}
	for d.More() {
		k, _ := d.Token()
		var v any
		if _, dup := vals[k.(string)]; dup || d.Decode(&v) != nil {
			return gen.NexmarkEvent{}, false
		}
		vals[k.(string)] = v
	}
	kind, _ := vals["kind"].(string)
	fields := referenceFields[kind]
	if fields == nil || len(vals) != len(fields)+1 {
		return gen.NexmarkEvent{}, false
	}
	s, n := map[string]string{}, map[string]int64{}
	for name, numeric := range fields {
		switch v := vals[name].(type) {
		case string:
			if numeric {
				return gen.NexmarkEvent{}, false
			}
			s[name] = v
		case json.Number:
			i, err := strconv.ParseInt(string(v), 10, 64)
			if !numeric || err != nil || i > 1<<53 || i < -1<<53 {
				return gen.NexmarkEvent{}, false
			}
			n[name] = i
		default:
			return gen.NexmarkEvent{}, false
		}
	}
	switch kind {
	case "person":
		return gen.NexmarkEvent{Kind: gen.PersonKind, Person: gen.Person{ID: n["id"], Name: s["name"], Email: s["emailAddress"],
			CreditCard: s["creditCard"], City: s["city"], State: s["state"], DateTime: n["dateTime"], Extra: s["extra"]}}, true
	case "auction":
		return gen.NexmarkEvent{Kind: gen.AuctionKind, Auction: gen.Auction{ID: n["id"], ItemName: s["itemName"],
			Description: s["description"], InitialBid: n["initialBid"], Reserve: n["reserve"], DateTime: n["dateTime"],
			Expires: n["expires"], Seller: n["seller"], Category: n["category"], Extra: s["extra"]}}, n["expires"] >= n["dateTime"]
	}
	return gen.NexmarkEvent{Kind: gen.BidKind, Bid: gen.Bid{Auction: n["auction"], Bidder: n["bidder"], Price: n["price"],
		Channel: s["channel"], URL: s["url"], DateTime: n["dateTime"], Extra: s["extra"]}}, true
}
